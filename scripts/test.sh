#!/usr/bin/env bash
# The one test command (README and .ci/run): typecheck, then every test project.
# Services the integration tests need are installed and started by their global
# setups in test/setup/, so this works on a clean machine.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm install
npx tsc --noEmit
npx vitest run "$@"
