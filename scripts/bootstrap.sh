#!/usr/bin/env bash
# Installs what the build and tests need from Debian's packages, only if something is missing.
# Safe to run again. Uses sudo when not root.
set -euo pipefail

packages=(cmake g++ make nlohmann-json3-dev libgtest-dev libbenchmark-dev clang-format)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  echo "bootstrap: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
