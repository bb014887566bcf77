#!/usr/bin/env bash
# The documented Megatron-LM recipe (docs/export.md): `source` the exported file, pass
# "${MODEL_ARGS[@]}". Checks the argv that would reach Megatron word for word, for DeepSeek-MoE-16B
# (its --moe-layer-freq pattern must arrive without quote characters: Megatron's _eval_pattern
# refuses anything but ,0-9[]()+*), in a directory holding files a glob of the pattern would match.
# Usage: megatron_paste.sh BUDGET_MATCH SOURCE_DIR WORK_DIR
set -euo pipefail
exe=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
cd "$work"
touch 0 1 '[0]' 0+1                    # what an unquoted, globbed pattern could turn into
"$exe" export "$src/examples/hf/deepseek-moe-16b.json" --to megatron --out args.sh 2>/dev/null
# shellcheck disable=SC1091
source ./args.sh
printf '%s\n' "${MODEL_ARGS[@]}" > argv.txt
cat > expected.txt <<'ARGV'
--num-layers
28
--hidden-size
2048
--ffn-hidden-size
10944
--num-attention-heads
16
--kv-channels
128
--swiglu
--disable-bias-linear
--normalization
RMSNorm
--norm-epsilon
1e-06
--position-embedding-type
rope
--rotary-base
10000
--untie-embeddings-and-output-weights
--vocab-size
102400
--seq-length
4096
--max-position-embeddings
4096
--num-experts
64
--moe-router-topk
6
--moe-ffn-hidden-size
1408
--moe-shared-expert-intermediate-size
2816
--moe-layer-freq
([0]*1+[1]*27)
--moe-router-score-function
softmax
--moe-router-pre-softmax
ARGV
if ! diff -u expected.txt argv.txt; then
  echo "FAIL: the argv from \"\${MODEL_ARGS[@]}\" differs (above)" >&2
  exit 1
fi
# The pattern word obeys _eval_pattern's character set.
pattern=$(grep -A1 -x -- '--moe-layer-freq' argv.txt | tail -1)
if [[ "$pattern" =~ [^,0-9\[\]\(\)+*] ]]; then
  echo "FAIL: --moe-layer-freq value '$pattern' has characters Megatron's pattern parser refuses" >&2
  exit 1
fi
echo "OK: ${#MODEL_ARGS[@]} argv words, pattern $pattern"
