# Hugging Face families, MLA and hybrid attention as a user meets them (docs/config.md,
# "Hugging Face configs"; docs/accounting.md, "MLA", "Hybrid attention").
budget_cli_test(NAME report.hf_deepseek_v3 ARGS report tests/data/hf/deepseek-v3.json
  STDOUT_MATCHES "heads 128×192 \\(MLA 512\\+64\\)" "non-embedding params \\(N\\) +669 G = 669,173,061,120"
                 "MTP modules \\(1, not in N or F\\) +11\\.6 G params" "KV cache / token +35,136 elem")
budget_cli_test(NAME report.hf_deepseek_v3_json ARGS report tests/data/hf/deepseek-v3.json --format json
  STDOUT_MATCHES "\"mtp\": {" "\"params\": 11610068224" "\"elements_per_token\": 35136")
budget_cli_test(NAME report.hf_mistral_sliding ARGS report tests/data/hf/mistral-7b-v0.1.json
  STDOUT_MATCHES "KV cache / token +0 elem" "sliding-window layers \\(32, window 4096\\) +268,435,456 elem / sequence")
budget_cli_test(NAME report.hf_multimodal_wrapper ARGS report tests/data/hf/mistral-small-3.1-24b.json
  STDOUT_MATCHES "H 5120, 40 layers")
budget_cli_test(NAME report.hf_unsupported_family ARGS report tests/data/hf/refused/jetmoe-8b.json
  EXPECT_EXIT 2 STDERR_MATCHES "/model_type: family \"jetmoe\" is not supported; supported families: llama")
budget_cli_test(NAME report.hf_unsupported_text_model ARGS report tests/data/hf/refused/llama-4-scout-17b-16e.json
  EXPECT_EXIT 2 STDERR_MATCHES "/text_config/model_type: multimodal model \"llama4\": its text model family \"llama4_text\"")
budget_cli_test(NAME report.hf_linear_attention ARGS report tests/data/hf/refused/qwen3-next-80b-a3b.json
  EXPECT_EXIT 2 STDERR_MATCHES "family \"qwen3_next\" is not supported")
# MLA baselines are matched (the KV latent searched, the other MLA dims held), in grids and plans too.
budget_cli_test(NAME match.hf_deepseek_v3 ARGS --baseline tests/data/hf/deepseek-v3.json --top 1
  STDOUT_MATCHES "MLA 320\\+64" "matched: best max deviation 0\\.5")
budget_cli_test(NAME grid.mla ARGS grid --grid examples/grids/mla_grid.json
  STDOUT_MATCHES "DeepSeek-V2-Lite +looped" "largest deviation over the grid")
budget_cli_test(NAME plan.mla ARGS plan --grid examples/grids/mla_grid.json
  STDOUT_MATCHES "total compute of the grid")
