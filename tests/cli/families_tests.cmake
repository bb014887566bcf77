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
budget_cli_test(NAME report.hf_abridged_config_refused ARGS report tests/data/hf/refused/glm-4.7-fp8-abridged.json
  EXPECT_EXIT 2 STDERR_MATCHES "/attention_bias: required key is missing: the family \"glm4_moe\"")
# Python's Infinity in a released HF config (time_step_limit): read, and said in a note.
budget_cli_test(NAME report.hf_python_infinity_read ARGS report tests/data/hf/refused/nemotron-h-56b-base-8k.json
  STDOUT_MATCHES "H 8192, 118 layers" "time_step_limit/1: Infinity")
budget_cli_test(NAME report.hf_python_nan_in_counted_key_refused ARGS report tests/data/hf/mutated/nemotron-h-nan-hidden-size.json
  EXPECT_EXIT 2 STDERR_MATCHES "nemotron-h-nan-hidden-size.json: /hidden_size: .*NaN")
# MLA baselines are matched (the KV latent searched, the other MLA dims held), in grids and plans too.
budget_cli_test(NAME match.hf_deepseek_v3 ARGS --baseline tests/data/hf/deepseek-v3.json --all-trainable-shapes --top 1
  STDOUT_MATCHES "MLA 320\\+64" "matched: #1 max deviation 0\\.5")
budget_cli_test(NAME grid.mla ARGS grid --grid examples/grids/mla_grid.json
  STDOUT_MATCHES "DeepSeek-V2-Lite +looped" "largest deviation over the grid")
budget_cli_test(NAME plan.mla ARGS plan --grid examples/grids/mla_grid.json
  STDOUT_MATCHES "total compute of the grid")
# Hugging Face reading never guesses (docs/config.md, "Absent keys"; tests/data/hf/mutated/): the
# misreads of issue 17 are errors with a did-you-mean, a said default reaches the output.
budget_cli_test(NAME report.hf_misspelt_num_experts ARGS report tests/data/hf/mutated/qwen3-30b-a3b-num_expert.json
  EXPECT_EXIT 2 STDERR_MATCHES [=[/num_expert: unknown key "num_expert" is another spelling of "num_experts"]=]
                               [=[did you mean "num_experts"\?]=])
budget_cli_test(NAME report.hf_truncated_moe_intermediate
  ARGS report tests/data/hf/mutated/qwen3-30b-a3b-moe_intermediate.json
  EXPECT_EXIT 2 STDERR_MATCHES [=[/moe_intermediate: .*did you mean "moe_intermediate_size"\?]=])
budget_cli_test(NAME match.hf_foreign_expert_spelling
  ARGS --baseline tests/data/hf/mutated/deepseek-v3-num_routed_experts.json --top 1
  EXPECT_EXIT 2 STDERR_MATCHES [=[/num_routed_experts: .*did you mean "n_routed_experts"\?]=])
budget_cli_test(NAME report.hf_said_defaults
  ARGS report tests/data/hf/mutated/qwen3-30b-a3b-no-attention-bias-no-kv-heads.json
  STDOUT_MATCHES [=[note: num_key_value_heads: absent, taken as 4 \(the default of transformers Qwen3MoeConfig]=]
                 [=[note: attention_bias: absent, taken as false]=] "non-embedding params \\(N\\) +29\\.9 G")
budget_cli_test(NAME report.hf_said_defaults_json
  ARGS report tests/data/hf/mutated/qwen3-30b-a3b-no-attention-bias-no-kv-heads.json --format json
  STDOUT_MATCHES [=["notes": ]=] [=["num_key_value_heads: absent, taken as 4]=])
budget_cli_test(NAME match.hf_baseline_notes
  ARGS --baseline tests/data/hf/mutated/qwen3-30b-a3b-no-attention-bias-no-kv-heads.json --top 1
  STDOUT_MATCHES [=[note: baseline config: attention_bias: absent, taken as false]=])
budget_cli_test(NAME report.hf_alias_noted ARGS report tests/data/hf/mutated/mixtral-8x7b-num_experts-alias.json
  STDOUT_MATCHES [=[note: "num_experts" read as "num_local_experts"]=])
# Smaller items of issue 17 in the config domain: HF files are named in the help, a mistyped
# subcommand gets a suggestion.
budget_cli_test(NAME help.report_names_hf_configs ARGS report --help STDOUT_MATCHES "Hugging Face config\\.json")
budget_cli_test(NAME main.mistyped_subcommand ARGS reprot tests/data/hf/llama-3.1-8b.json
  EXPECT_EXIT 64 STDERR_MATCHES [=[not expected: .*reprot.*did you mean the subcommand "report"\?]=])
# A correct subcommand given an argument it does not take points to its help, not to itself.
budget_cli_test(NAME main.extra_argument_points_to_help ARGS grid examples/grids/paper_grid.json
  EXPECT_EXIT 64 STDERR_MATCHES [=[not expected: examples/grids/paper_grid.json [(]`budget-match grid --help` lists what it takes[)]]=])
# architectures that contradict model_type, a classifier head, decoder_sparse_step 0: refused by name.
budget_cli_test(NAME report.hf_sequence_classifier_refused
  ARGS report tests/data/hf/mutated/mixtral-8x7b-sequence-classifier.json
  EXPECT_EXIT 2 STDERR_MATCHES [=[/architectures: architecture "MixtralForSequenceClassification" is not a causal language model]=])
