#!/usr/bin/env bash
# Fails when a C++ file differs from .clang-format (fix with: scripts/check-format.sh --fix).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cpp' '*.h')
[[ ${#files[@]} -gt 0 ]] || exit 0
if [[ "${1:-}" == "--fix" ]]; then
  clang-format -i "${files[@]}"
else
  clang-format --dry-run -Werror "${files[@]}"
fi
