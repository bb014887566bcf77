#!/usr/bin/env bash
# Builds budget-profile here and stages what the GPU machine needs into cuda_profiler/gpu_bundle/
# (git-ignored, carried with the `run` call): the binary and every shared library it needs that the
# GPU machine may lack (NLopt, fmt: anything outside glibc, libstdc++ and the CUDA toolkit, which
# that machine has in /usr/local/cuda/lib64 and the system paths). See cuda_profiler/README.md.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BUILD_DIR:-$root/build}"
bundle="$root/cuda_profiler/gpu_bundle"

cmake --build "$build" -j2 --target budget-profile
rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib"
cp "$build/cuda_profiler/budget-profile" "$bundle/bin/"
# Libraries from ldd, except the C/C++ runtime and CUDA's own (cudart, cublas, cublasLt, cudnn).
ldd "$bundle/bin/budget-profile" | awk '/=> \// {print $1, $3}' | while read -r name path; do
  case "$name" in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libgcc_s.so*|libstdc++.so*) ;;
    libcuda.so*|libcudart.so*|libcublas*|libcudnn*|libnvidia*|libnvrtc*|libnvJitLink*) ;;
    *) cp -L "$path" "$bundle/lib/$name" ;;
  esac
done
du -sh "$bundle"
ls -l "$bundle/bin" "$bundle/lib"
