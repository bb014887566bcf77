#!/usr/bin/env bash
# The torchtitan export is a Python module that compiles (python3 -m py_compile), for the paper's
# match, a dense Llama, Qwen3-MoE, a gated shared expert (Qwen1.5-MoE without its q/k/v biases is
# not needed: DeepSeek-MoE's leading dense layer and shared experts) and OLMoE-free families; MLA
# configs (DeepSeek-V3, Kimi-K2, DeepSeek-V2-Lite) as deepseek_v3 modules.
# Usage: torchtitan_compile.sh BUDGET_MATCH SOURCE_DIR WORK_DIR
set -euo pipefail
exe=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
n=0
for cfg in examples/configs/paper-200M-S95-smelt.json tests/data/hf/llama-3.1-8b.json \
           tests/data/hf/qwen3-30b-a3b.json tests/data/hf/qwen3-8b.json examples/hf/deepseek-moe-16b.json \
           examples/hf/mixtral-8x7b.json tests/data/hf/deepseek-v3.json tests/data/hf/kimi-k2.json \
           tests/data/hf/deepseek-v2-lite.json; do
  out="$work/$(basename "$cfg" .json | tr '.-' '__').py"
  "$exe" export "$src/$cfg" --to torchtitan --out "$out" 2>/dev/null
  python3 -m py_compile "$out"
  if grep -q 'torchtitan/models/deepseek_v3:' "$out"; then
    grep -q '^) -> DeepSeekV3Model.Config:$' "$out"
    grep -q '^    non_blocking_capacity_factor: float | None = None,$' "$out"
  else
    grep -q '^def budget_config(attn_backend: str = "flex", moe_comm_backend: str = "standard") -> Qwen3Model.Config:$' "$out"
  fi
  n=$((n + 1))
done
echo "OK: $n torchtitan modules compile"
