#!/usr/bin/env bash
# Every test: format check, the accuracy report from the release CLI, the WebAssembly build
# checked against that CLI (and against the committed web/engine/), the page in headless
# Chromium with its budgets, the libFuzzer targets for a minute each (GPUPLAN_FUZZ_SECONDS), then
# the sanitised debug build (ASan + UBSan) and its CTest suite (unit, reference, CLI contract,
# script, fuzz replays), whose summary ends the output.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh

echo "== format"
scripts/check-format.sh

echo "== the page's modules: TypeScript's checker (// @ts-check, JSDoc types) and ESLint"
npx tsc -p tsconfig.json
npx eslint web

echo "== native-release: accuracy report"
cmake --preset native-release >/dev/null
cmake --build --preset native-release -j"$(nproc)" --target gpuplan_cli gpuplan_bench
# The same command writes the site's accuracy page; the committed one must be today's.
build/native-release/bin/gpuplan validate tests/reference/memory_cases.json tests/reference/perf_cases.json \
  tests/reference/cases/*.json tests/reference/engine_logs.json --html build/accuracy.html
cmp -s build/accuracy.html web/accuracy.html || {
  echo "web/accuracy.html differs from today's report: run the command above with --html web/accuracy.html" >&2
  exit 1
}

echo "== native-release: benchmark (figures, no thresholds)"
build/native-release/gpuplan_bench --benchmark_min_time=0.05

echo "== wasm-release: the engine as WebAssembly, checked against the native CLI"
cmake --preset wasm-release -DGPUPLAN_NATIVE_CLI="$PWD/build/native-release/bin/gpuplan" >/dev/null
cmake --build --preset wasm-release -j"$(nproc)"
ctest --preset wasm-release
node tests/wasm/bench.mjs build/wasm-release/wasm
node tests/wasm/ratio.mjs build/wasm-release/wasm build/native-release/gpuplan_bench 7
for f in gpuplan.mjs gpuplan.wasm gpuplan-plan.mjs gpuplan-plan.wasm; do
  cmp -s "build/wasm-release/wasm/$f" "web/engine/$f" || {
    echo "web/engine/$f differs from a build of the sources: run scripts/build-site.sh and commit it" >&2
    exit 1
  }
done

echo "== the page in headless Chromium (screenshots: build/test-output/web)"
scripts/build-site.sh --prebuilt build/site
GPUPLAN_NATIVE_CLI="$PWD/build/native-release/bin/gpuplan" node --test tests/web/state.test.mjs tests/web/export.test.mjs tests/web/measure.test.mjs tests/web/golden.test.mjs tests/web/static.test.mjs tests/web/procurement.test.mjs tests/web/gguf.test.mjs \
  tests/web/browser-*.test.mjs
node tests/web/budget.mjs build/site

echo "== libFuzzer (clang, ASan + UBSan): each target for ${GPUPLAN_FUZZ_SECONDS:-60} s"
scripts/fuzz.sh "${GPUPLAN_FUZZ_SECONDS:-60}"

echo "== native-debug (ASan + UBSan): every test"
cmake --preset native-debug >/dev/null
cmake --build --preset native-debug -j"$(nproc)"
ctest --preset native-debug -j"$(nproc)"
