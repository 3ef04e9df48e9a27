#!/usr/bin/env bash
# Lints CloudFormation templates with cfn-lint (PyPI), installing it on first use into
# .cache/cfn-lint (a venv, or a --target directory where python3-venv is missing).
#
#   scripts/infra/cfn-lint.sh [template.json ...]     default: cdk.out/*.template.json
#
# Exit status is cfn-lint's: 0 clean; any error, warning or informational finding fails.
# Ignored everywhere (with the reason):
#   W3005  CDK writes an explicit DependsOn next to the Ref/GetAtt that already implies it
#          (custom-resource providers, ECS services on their target groups); harmless.
# Per-resource exceptions live in the resource's Metadata (cfn-lint: config: ignore_checks),
# set by the CDK code next to the reason.
set -euo pipefail
cd "$(dirname "$0")/../.."
CACHE="${SLUICE_CACHE_DIR:-$PWD/.cache}/cfn-lint"
VERSION_SPEC='cfn-lint>=1.20,<2'

run() {
  if [ -x "$CACHE/venv/bin/cfn-lint" ]; then
    "$CACHE/venv/bin/cfn-lint" "$@"
  elif [ -d "$CACHE/target/cfnlint" ]; then
    PYTHONPATH="$CACHE/target" python3 -m cfnlint "$@"
  else
    return 127
  fi
}

install() {
  mkdir -p "$CACHE"
  echo "cfn-lint: installing ($VERSION_SPEC) into $CACHE" >&2
  if python3 -m venv "$CACHE/venv.tmp" >/dev/null 2>&1 && "$CACHE/venv.tmp/bin/pip" install -q "$VERSION_SPEC" >&2; then
    rm -rf "$CACHE/venv" && mv "$CACHE/venv.tmp" "$CACHE/venv"
    # A venv's scripts carry its absolute path: rewrite them after the move.
    sed -i "s#$CACHE/venv.tmp#$CACHE/venv#g" "$CACHE/venv/bin/"* 2>/dev/null || true
  else
    rm -rf "$CACHE/venv.tmp"
    python3 -m pip install -q --target "$CACHE/target" "$VERSION_SPEC" >&2
  fi
}

if ! run --version >/dev/null 2>&1; then
  mkdir -p "$(dirname "$CACHE")"
  exec 9>"$CACHE.lock"
  if command -v flock >/dev/null; then flock 9; fi
  run --version >/dev/null 2>&1 || install
  run --version >/dev/null 2>&1 || { echo "cfn-lint: could not be installed" >&2; exit 3; }
fi

if [ "$#" -eq 0 ]; then set -- cdk.out/*.template.json; fi
run --version >&2
run --ignore-checks W3005 -- "$@"
