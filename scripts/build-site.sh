#!/usr/bin/env bash
# Builds the deployable site folder (default build/site): the page, the WebAssembly engine and
# the bundled catalog.
#   scripts/build-site.sh [OUT]             compiles the engine with Emscripten and refreshes the
#                                           committed copy in web/engine/ (commit it with the sources)
#   scripts/build-site.sh --prebuilt [OUT]  uses web/engine/ as committed: what Netlify runs, as its
#                                           build image has no Emscripten
# scripts/test.sh checks that web/engine/ is byte-identical to a fresh build of the sources.
set -euo pipefail
cd "$(dirname "$0")/.."
prebuilt=0
if [[ "${1:-}" == --prebuilt ]]; then prebuilt=1; shift; fi
out="${1:-build/site}"
if ((!prebuilt)); then
  cmake --preset wasm-release >/dev/null
  cmake --build --preset wasm-release -j"$(nproc)"
  cp build/wasm-release/wasm/gpuplan.mjs build/wasm-release/wasm/gpuplan.wasm web/engine/
fi
rm -rf "$out"
mkdir -p "$out/catalog"
cp -r web/. "$out/"
cp catalog/gpus.json catalog/models.json "$out/catalog/"
# What the page's worker fetches: the same figures without the sources' prose (page-catalog.mjs).
node scripts/page-catalog.mjs catalog "$out/catalog/page"
# The engine goes in a folder named for its content, engine/HASH/, so it can be cached for a
# year (netlify.toml: /engine/*); worker.js, which names it, is revalidated on every load.
hash=$(cat web/engine/gpuplan.mjs web/engine/gpuplan.wasm | sha256sum | cut -c1-12)
mkdir "$out/engine/$hash"
mv "$out/engine/gpuplan.mjs" "$out/engine/gpuplan.wasm" "$out/engine/$hash/"
sed -i "s#'./engine/gpuplan.mjs'#'./engine/$hash/gpuplan.mjs'#" "$out/worker.js"
grep -q "engine/$hash/gpuplan.mjs" "$out/worker.js" || { echo "worker.js: engine import not found" >&2; exit 1; }
echo "site: $out ($(du -sh "$out" | cut -f1))"
