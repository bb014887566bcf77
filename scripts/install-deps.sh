#!/usr/bin/env bash
# Installs the Debian packages budget needs, only those that are missing (non-interactive).
# Usage: scripts/install-deps.sh [--fuzz] [extra-package ...]
#   --fuzz  also the optional fuzzing toolchain of scripts/fuzz.sh: clang-14 and its libFuzzer /
#           sanitizer runtimes (libclang-rt-14-dev)
set -euo pipefail

extras=()
for arg in "$@"; do
  if [ "$arg" = --fuzz ]; then
    extras+=(clang-14 libclang-rt-14-dev)
  else
    extras+=("$arg")
  fi
done
packages=(cmake g++ make libeigen3-dev libnlopt-cxx-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev catch2
          libbenchmark-dev pybind11-dev python3-dev python3-pytest python3-torch gnuplot-nox "${extras[@]}")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing missing Debian packages: ${missing[*]}" >&2
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "error: need root (or sudo) to apt-get install ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
