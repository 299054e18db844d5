#!/usr/bin/env bash
# Writes every answer the CLI gives over the tests' own requests (fuzz/make_corpus.py's seed
# corpus, the CLI examples, the reference cases) into one folder, one file per command and
# request, so a refactoring can be checked byte for byte: run it before and after, then
# `diff -r BEFORE AFTER`.
# Usage: scripts/answer-corpus.sh GPUPLAN_BINARY OUT_DIR
set -euo pipefail
bin=$(realpath "$1")
out=$2
root=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$out" && mkdir -p "$out"
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
python3 "$root/fuzz/make_corpus.py" "$root" "$corpus" >/dev/null
run() {  # command, input file, output name
  "$bin" $1 "$2" >"$3" 2>&1 || echo "exit $?" >>"$3"
}
export -f run
export bin
jobs=$(nproc)
ls "$corpus/estimate" | xargs -P "$jobs" -I{} bash -c '
  for c in estimate script launch limits calibrate; do run "$c" "'"$corpus"'/estimate/{}" "'"$out"'/{}.$c"; done'
ls "$corpus/plan" | xargs -P "$jobs" -I{} bash -c '
  run plan "'"$corpus"'/plan/{}" "'"$out"'/{}.plan"; run "plan --full" "'"$corpus"'/plan/{}" "'"$out"'/{}.full"'
for f in "$root"/tests/cli/*.json; do
  for c in traffic fleet calibrate; do run "$c" "$f" "$out/cli-$(basename "$f").$c"; done
done
"$bin" validate "$root"/tests/reference/cases/*.json >"$out/validate.txt" 2>&1 || true
echo "$(ls "$out" | wc -l) answers in $out"
