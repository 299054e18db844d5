#!/usr/bin/env bash
# Installs what is missing, builds the release CLI, and estimates the example request
# (LoRA on Llama 3.1 8B, 8 x H100). Pass another request file to estimate that instead.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
cmake --preset native-release >/dev/null
cmake --build --preset native-release -j"$(nproc)" --target gpuplan_cli
build/native-release/bin/gpuplan estimate "${1:-examples/lora-llama-3.1-8b-8xh100.json}"
