#!/usr/bin/env bash
# Installs what the build and tests need (Debian packages, then npm ci), only what is missing.
# Safe to run again. Uses sudo when not root.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ make nlohmann-json3-dev libgtest-dev libbenchmark-dev clang-format python3 emscripten chromium
          clang libclang-rt-dev pyflakes3)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
# Node.js runs the catalog's schema check (ajv from npm); any Node >= 18 will do, so Debian's
# nodejs is installed only when no node is on the PATH.
if ! command -v node >/dev/null 2>&1; then
  missing+=(nodejs npm)
fi
if ((${#missing[@]})); then
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  echo "bootstrap: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# npm packages from package-lock.json (ajv), only when they are missing or the lock changed.
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
