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
  for m in gpuplan gpuplan-plan; do
    cp "build/wasm-release/wasm/$m.mjs" "build/wasm-release/wasm/$m.wasm" web/engine/
  done
fi
rm -rf "$out"
mkdir -p "$out/catalog"
cp -r web/. "$out/"
cp catalog/gpus.json catalog/models.json "$out/catalog/"
# What the page's worker fetches: the same figures without the sources' prose (page-catalog.mjs).
node scripts/page-catalog.mjs catalog "$out/catalog/page"
# The engine goes in a folder named for its content, engine/HASH/, so it can be cached for a
# year (netlify.toml: /engine/*); worker.js, which names it, is revalidated on every load. The
# worker starts with gpuplan-plan and fetches gpuplan (every call) for the tools.
engine_files=(web/engine/gpuplan-plan.mjs web/engine/gpuplan-plan.wasm web/engine/gpuplan.mjs
              web/engine/gpuplan.wasm)
hash=$(cat "${engine_files[@]}" | sha256sum | cut -c1-12)
mkdir "$out/engine/$hash"
for f in "${engine_files[@]}"; do mv "$out/engine/$(basename "$f")" "$out/engine/$hash/"; done
for m in gpuplan gpuplan-plan; do
  sed -i "s#'./engine/$m.mjs'#'./engine/$hash/$m.mjs'#" "$out/worker.js"
  grep -q "engine/$hash/$m.mjs" "$out/worker.js" || { echo "worker.js: import of $m.mjs not found" >&2; exit 1; }
done
# The page's scripts minified, each on its own (scripts/minify-site.mjs; terser from npm).
node scripts/minify-site.mjs "$out"
echo "site: $out ($(du -sh "$out" | cut -f1))"
