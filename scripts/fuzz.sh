#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each for SECONDS (default 60),
# starting from the seed corpus (the tests' requests and catalogs) and every saved regression
# input. A crash, leak, sanitizer report or an input slower than 30 s fails the run and leaves
# the input in build/fuzz-artifacts/; copy it to tests/fuzz/<target>/ with a regression test.
# Longer runs: scripts/fuzz.sh 3600 (the corpus grows in build/fuzz-corpus-live/ between runs).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j"$(nproc)"
python3 fuzz/make_corpus.py . build/fuzz-corpus >/dev/null
mkdir -p build/fuzz-artifacts
for name in estimate plan catalog; do
  live="build/fuzz-corpus-live/$name"
  mkdir -p "$live"
  echo "== fuzz_$name for ${seconds} s"
  # -rss_limit_mb: a plan over a hostile catalog may need memory, not gigabytes of it.
  # Saved failures, when the target has any (git keeps no empty folder).
  saved=()
  [[ -d "tests/fuzz/$name" ]] && saved=("tests/fuzz/$name")
  # The progress lines are filtered out (the whole log is kept); the fuzzer's exit status decides.
  log="build/fuzz-artifacts/$name.log"
  set +e
  build/fuzz/fuzz/"fuzz_$name" "$live" "build/fuzz-corpus/$name" "${saved[@]}" \
    -dict=fuzz/json.dict -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix="build/fuzz-artifacts/$name-" 2>&1 |
    tee "$log" | grep -E "^(INFO: Seed|==[0-9]+==ERROR|SUMMARY|stat::number_of_executed_units|stat::peak_rss_mb|Test unit written|.*Timeout|.*out-of-memory)"
  status="${PIPESTATUS[0]}"
  set -e
  if [[ "$status" != 0 ]]; then
    tail -n 40 "$log"
    echo "fuzz_$name failed (exit $status): see build/fuzz-artifacts/"
    exit 1
  fi
done
