#!/usr/bin/env bash
# The one test command (README and .ci/run): typecheck, then every test project, then the
# deploy rehearsal (what `cdk deploy` ships, run from cdk.out on local stand-ins for AWS).
# Services the integration tests need are installed and started by their global
# setups in test/setup/, so this works on a clean machine.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm install
npx tsc --noEmit
# One format (prettier, .prettierrc.json): `npm run format` writes it.
npm run -s format:check
npx vitest run "$@"
# Only on a full run: a filtered run (`npm test -- path`) is about those tests.
if [ "$#" -eq 0 ]; then npm run rehearse; fi
