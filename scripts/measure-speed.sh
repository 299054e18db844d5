#!/usr/bin/env bash
# Measures how fast the engine and the page answer and writes the figures to
# docs/speed-figures.md (docs/speed.md says how each is measured and what moved them). Run after
# scripts/test.sh has built everything (build/native-release, build/wasm-release, build/site):
#   scripts/measure-speed.sh [ROUNDS=5]
# Figures vary by 20-40% from run to run on a shared host; the ratios within one run hold.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-5}"
out=docs/speed-figures.md
for need in build/native-release/gpuplan_bench build/native-release/bin/gpuplan \
            build/wasm-release/wasm/gpuplan-plan.wasm build/site/index.html; do
  [[ -e $need ]] || { echo "measure-speed: $need is missing: run scripts/test.sh first" >&2; exit 2; }
done
section() {  # title, command...
  local title=$1
  shift
  printf '\n## %s\n\n`%s`\n\n```text\n' "$title" "$*"
  "$@" 2>&1
  printf '```\n'
}
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || true)
{
  echo "# Speed: the figures of the last measurement"
  echo
  echo "Written by \`scripts/measure-speed.sh $rounds\` on $(date -u +%Y-%m-%d), engine" \
       "$(build/native-release/bin/gpuplan --version | awk '{print $NF}'), catalog" \
       "$(build/native-release/bin/gpuplan catalog --gpus | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])'), on" \
       "$(nproc) cores ($cpu). Do not edit: run the script again. How each figure is measured," \
       "and what past changes did to them: docs/speed.md."
  section "Native plans (Google Benchmark, CPU time)" \
    build/native-release/gpuplan_bench --benchmark_filter=Plan --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true
  section "The WebAssembly engine under Node" node tests/wasm/bench.mjs build/wasm-release/wasm
  section "WebAssembly beside native, the same minutes" \
    node tests/wasm/ratio.mjs build/wasm-release/wasm build/native-release/gpuplan_bench "$rounds"
  section "The page in headless Chromium" node tests/web/budget.mjs build/site
} > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out"
