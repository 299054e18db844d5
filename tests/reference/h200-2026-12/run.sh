#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One run on one H200: GPU facts, versions, the mechanism probes (probes.py) and the five
# programs `gpuplan script` wrote (measure_N.py, from req_N.json), all within BUDGET_S seconds.
#
#   OUT=/tmp/o bash tests/reference/h200-2026-12/run.sh      (from the repository root)
#
# Writes three files to $OUT: probes.json (rewritten after every probe), log.txt (everything
# printed here) and scripts.tar.gz (each program's output, nvidia-smi -q, the timeline;
# repacked after every step). No step stops the run: set -u, no set -e, each step under timeout.
set -u

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ -z "${OUT:-}" ]; then
  echo "set OUT to an empty folder" >&2
  exit 2
fi
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
PY="${PYTHON:-python3}"
BUDGET_S="${BUDGET_S:-345}"                 # the whole run (the limit is 360 s)
PROBES_DEADLINE_S="${PROBES_DEADLINE_S:-165}" # no probe starts past this (from its own start)
PROBES_HARD_S="${PROBES_HARD_S:-190}"         # loops inside probes stop; no probe starts that would end later
PROBES_TIMEOUT_S="${PROBES_TIMEOUT_S:-205}"   # probes.py is killed (SIGTERM, it saves) past this
PROGRAM_TIMEOUT_S="${PROGRAM_TIMEOUT_S:-60}"  # each measurement program
PROGRAM_MIN_S=20                              # a program with less time left is not started
PROGRAMS="${PROGRAMS:-1 2 3 5 4}"             # run order: the 8B LoRA first, the MoE rebuild last

export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1
export TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
STAGE="$(mktemp -d /tmp/h200-run.XXXXXX)"
START=$SECONDS

elapsed() { echo $((SECONDS - START)); }
left() { echo $((BUDGET_S - (SECONDS - START))); }
say() { echo "[run.sh $(elapsed)s] $*"; echo "$(elapsed) $*" >> "$STAGE/timeline.txt"; }
pack() {
  tar -czf "$OUT/scripts.tar.gz.part" -C "$STAGE" . 2>/dev/null \
    && mv -f "$OUT/scripts.tar.gz.part" "$OUT/scripts.tar.gz"
}

main() {
  say "start $(date -u +%Y-%m-%dT%H:%M:%SZ) host $(hostname) budget ${BUDGET_S}s OUT=$OUT"
  say "commit $(git -C "$HERE" rev-parse HEAD 2>/dev/null || echo unknown)"

  say "nvidia-smi"
  timeout 20 nvidia-smi
  timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit,pstate,temperature.gpu --format=csv
  timeout 20 nvidia-smi -q > "$STAGE/nvidia-smi-q.txt" 2>&1
  timeout 20 nvidia-smi topo -m > "$STAGE/nvidia-smi-topo.txt" 2>&1
  pack

  say "versions"
  timeout 60 "$PY" - <<'PYEOF'
import importlib.metadata as md
import platform
import sys
print("python", sys.version.replace("\n", " "), platform.platform())
for name in ("torch", "transformers", "peft", "accelerate", "triton", "numpy", "huggingface-hub",
             "safetensors", "bitsandbytes", "flash-attn", "vllm", "nvidia-cuda-runtime-cu13",
             "nvidia-cudnn-cu13", "nvidia-nccl-cu13"):
    try:
        print(f"{name} {md.version(name)}")
    except Exception:
        print(f"{name} (not installed)")
try:
    import torch
    print("torch.version.cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())
    print("cuda available", torch.cuda.is_available(), "devices", torch.cuda.device_count())
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        print("gpu", p.name, "capability", torch.cuda.get_device_capability(0),
              "SMs", p.multi_processor_count, "memory", p.total_memory)
except Exception as ex:
    print("torch check failed:", type(ex).__name__, ex)
PYEOF
  echo "driver: $(timeout 10 nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null)"
  say "versions done"

  say "probes.py (deadline ${PROBES_DEADLINE_S}s, hard ${PROBES_HARD_S}s, timeout ${PROBES_TIMEOUT_S}s)"
  OUT="$OUT" PROBES_DEADLINE_S="$PROBES_DEADLINE_S" PROBES_HARD_S="$PROBES_HARD_S" \
    timeout -k 10 "$PROBES_TIMEOUT_S" "$PY" -u "$HERE/probes.py"
  say "probes.py exit $?"
  pack

  for n in $PROGRAMS; do
    prog="$HERE/measure_$n.py"
    remaining=$(left)
    limit=$PROGRAM_TIMEOUT_S
    if [ $((remaining - 5)) -lt "$limit" ]; then limit=$((remaining - 5)); fi
    if [ "$limit" -lt "$PROGRAM_MIN_S" ]; then
      say "measure_$n skipped: ${remaining}s left"
      echo "skipped: ${remaining}s left of the budget" > "$STAGE/measure_$n.out"
      continue
    fi
    say "measure_$n.py (timeout ${limit}s; request req_$n.json)"
    timeout -k 5 "$limit" "$PY" -u "$HERE/run_measure.py" "$prog" > "$STAGE/measure_$n.out" 2>&1
    rc=$?
    say "measure_$n exit $rc"
    echo "exit $rc" >> "$STAGE/measure_$n.out"
    grep -E "^(run_measure:|model:|gpu:|note:|[a-z_0-9]+ +[-0-9.e+]+ )" "$STAGE/measure_$n.out" | head -40
    grep "^GPUPLAN_MEASUREMENT " "$STAGE/measure_$n.out" | tail -1 | cut -c1-3000
    if [ "$rc" -ne 0 ]; then tail -25 "$STAGE/measure_$n.out"; fi
    pack
  done

  say "nvidia-smi after"
  timeout 20 nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw,memory.used --format=csv > "$STAGE/nvidia-smi-after.txt" 2>&1
  cat "$STAGE/nvidia-smi-after.txt"
  rm -f "$OUT"/*.tmp "$OUT"/*.part
  pack
  say "end: $(ls -la "$OUT" | tail -n +2 | tr '\n' ';')"
}

main 2>&1 | tee -a "$OUT/log.txt"
rm -rf "$STAGE"
