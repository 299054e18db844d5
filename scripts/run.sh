#!/usr/bin/env bash
# Installs what is missing, builds the engine (native CLI and WebAssembly), assembles the site
# and serves the planner at http://127.0.0.1:8080/ with the bundled catalog (PORT overrides).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
cmake --preset native-release >/dev/null
cmake --build --preset native-release -j"$(nproc)" --target gpuplan_cli
scripts/build-site.sh build/site
exec node scripts/serve.mjs build/site --port "${PORT:-8080}"
