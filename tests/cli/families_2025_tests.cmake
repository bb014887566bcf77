# The Hugging Face families of 2025 as a user meets them (docs/config.md, "Supported families";
# docs/matching.md, "Hybrid stacks"): read, reported with the recurrent state beside the KV cache,
# matched with a loop of whole periods that says what it re-runs.
budget_cli_test(NAME report.hf_gpt_oss ARGS report tests/data/hf/gpt-oss-120b.json
  STDOUT_MATCHES "non-embedding params \\(N\\) +116 G = 115,670,889,792" "KV cache / token +18,432 elem"
                 "sliding-window layers \\(18, window 128\\)"
                 [=[note: quantization_config \(mxfp4\): ignored]=])
budget_cli_test(NAME report.hf_llama4_chunked ARGS report tests/data/hf/llama-4-scout-17b-16e-instruct.json
  STDOUT_MATCHES "H 5120, 48 layers" "KV cache / token +24,576 elem" "chunked layers \\(36, chunk 8192\\)")
budget_cli_test(NAME report.hf_qwen3_next_state ARGS report tests/data/hf/qwen3-next-80b-a3b-thinking.json
  STDOUT_MATCHES "non-embedding params \\(N\\) +79\\.1 G = 79,052,061,440"
                 [=[recurrent state / sequence \(36 linear-attention layer executions\) +19,759,104 elem]=])
budget_cli_test(NAME report.hf_nemotron_state_json ARGS report tests/data/hf/nemotron-3-nano-30b-a3b.json --format json
  STDOUT_MATCHES [=["recurrent_state": {]=] [=["elements_per_sequence": 12482560]=] [=["non_embedding_total": 30873297216]=])
budget_cli_test(NAME report.hf_deepseek_v32_indexer ARGS report tests/data/hf/deepseek-v3.2.json
  STDOUT_MATCHES "KV cache / token +42,944 elem")
budget_cli_test(NAME report.hf_minimax_mtp_said ARGS report tests/data/hf/minimax-m2.5.json
  STDOUT_MATCHES [=[note: use_mtp: the multi-token-prediction modules .* are not counted]=])
budget_cli_test(NAME match.hf_qwen3_next_periods ARGS --baseline tests/data/hf/qwen3-next-80b-a3b-thinking.json --top 1
  STDOUT_MATCHES "13–36 ×2" [=[note: loop: layers 13–36 ×2 \(6 whole periods of the 4-layer pattern\) re-run 24 layers: 18 linear_attention \+ moe, 6 attention \(full\) \+ moe]=]
                 "state")
budget_cli_test(NAME match.hf_gpt_oss_periods_json ARGS --baseline tests/data/hf/gpt-oss-20b.json --top 1 --format json
  STDOUT_MATCHES [=[6 whole periods of the 2-layer pattern]=] [=["first": 7]=])
budget_cli_test(NAME match.hf_nemotron_no_period ARGS --baseline tests/data/hf/nemotron-3-nano-30b-a3b.json --top 1
  STDOUT_MATCHES [=[layer by layer: the layer pattern does not repeat within the stack]=] "11 mamba")
budget_cli_test(NAME export.hf_hybrid_refused ARGS export tests/data/hf/qwen3-next-80b-a3b-thinking.json --to megatron
  EXPECT_EXIT 2 STDERR_MATCHES [=[/linear_attention: linear-attention \(Gated DeltaNet\) layers cannot be expressed in a megatron export]=])
# Priced: the one-GPU step time of hybrid stacks, what no profile row measures flagged as extrapolated.
budget_cli_test(NAME time.hf_qwen3_next_extrapolated
  ARGS report tests/data/hf/qwen3-next-80b-a3b-thinking.json --calibration cuda_profiler/profiles/h200-torch-eager.json
  STDOUT_MATCHES "predicted training step" [=[delta_rule_scan .*extrapolated: no profile rows for delta_rule_scan \(recurrent_scan\)]=]
                 [=[short_convolution .*extrapolated: no profile rows]=])
budget_cli_test(NAME time.hf_nemotron_extrapolated_json
  ARGS report tests/data/hf/nemotron-3-nano-30b-a3b.json --calibration cuda_profiler/profiles/h200-torch-eager.json --format json
  STDOUT_MATCHES [=["op": "ssd_scan",]=] [=["no_rows": true,]=] [=[extrapolated: no profile rows for ssd_scan]=])
budget_cli_test(NAME time.hf_deepseek_v32_indexer
  ARGS report tests/data/hf/deepseek-v3.2.json --calibration cuda_profiler/profiles/h200-torch-eager.json
  STDOUT_MATCHES [=[indexer_scores .*extrapolated: no profile rows for indexer_scores]=])
