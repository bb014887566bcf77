# Help texts say what a config argument accepts: native JSON and Hugging Face config.json alike
# (issue 17: --baseline and report said "native JSON" only). Every command that reads a config.
budget_cli_test(NAME help_text.baseline_accepts_hf ARGS --help
  STDOUT_MATCHES [=[--baseline TEXT +Match this baseline config \(native JSON or a Hugging Face config\.json\)]=])
budget_cli_test(NAME help_text.report_accepts_hf ARGS report --help
  STDOUT_MATCHES [=[config TEXT REQUIRED +Config: native JSON or a Hugging Face config\.json]=])
budget_cli_test(NAME help_text.compare_accepts_hf ARGS compare --help
  STDOUT_MATCHES [=[configs TEXT \.\.\. REQUIRED +Configs \(native or Hugging Face JSON\)]=])
budget_cli_test(NAME help_text.export_accepts_hf ARGS export --help
  STDOUT_MATCHES [=[config TEXT REQUIRED +Config to export \(native JSON or Hugging Face config\.json\)]=])
budget_cli_test(NAME help_text.layout_accepts_hf ARGS layout --help
  STDOUT_MATCHES [=[config TEXT REQUIRED +Native or Hugging Face config JSON]=])
# Issue 30: --help says the default is trainable shapes (issue 43: the portable set without --gpu),
# how to get the exhaustive lattice, the row order and how to write any row.
budget_cli_test(NAME help_text.trainable_default ARGS --help
  STDOUT_MATCHES [=[--free-shapes +Search the whole lattice]=] [=[instead of the default trainable shapes]=]
                 [=[without --gpu the portable set]=] [=[--all-trainable-shapes]=]
                 [=[--order TEXT]=] [=[row #1 is the equally matched shape nearest the baseline's proportions]=]
                 [=[--out-row INT]=])
# Issue 40: the layout command's plain scalar flags take their help from the layout's field table
# (budget/layout_fields.hpp, cli/commands/layout_options.cpp: field_flags): each flag (its name as
# before) with its row's doc, this command's note where it has one, and the row's JSON name and range
# (";" written "." : a CMake list separator).
budget_cli_test(NAME help_text.layout_flags_from_field_table ARGS layout --help
  STDOUT_MATCHES
              [=[--tp INT +Tensor parallel size \(layout field tp: 1 to 16777216\)]=]
              [=[--pp INT +Pipeline stages \(layout field pp: 1 to 16777216\)]=]
              [=[--vp INT +Model chunks per pipeline rank \(interleaved 1F1B when > 1\) \(layout field virtual_stages: 1 to 16777216\)]=]
              [=[--ep INT +Expert parallel size \(layout field ep: 1 to 16777216\)]=]
              [=[--etp INT +Expert tensor parallel size. 0: equal to tp \(written as the size in effect\) \(layout field etp: 0 to 16777216\)]=]
              [=[--cp INT +Context parallel size \(layout field cp: 1 to 16777216\)]=]
              [=[--dp INT Excludes: --gpus +Data parallel size. 0: derived from gpus \(N / \(TP·CP·PP\)\). neither given: 1 \(layout field dp: 0 to 16777216\)]=]
              [=[--micro-batch-size INT +Sequences per micro-batch \(--micro-batch-size\). with --micro-batches: one layout. without any layout option: search \(layout field micro_batch_size: 1 to 16777216\)]=]
              [=[--micro-batches INT +Micro-batches per step on each pipeline \(m\) \(layout field micro_batches: 1 to 16777216\)]=]
              [=[--seq-len INT +Tokens per sequence \(split over CP\). default: the workload's, 4096 for the paper's \(layout field seq_len: 1 to 2147483648\)]=]
              [=[--distributed-optimizer +Megatron --use-distributed-optimizer. shard the optimizer states over DP \(experts: expert DP\) \(layout field distributed_optimizer\)]=]
              [=[--sequence-parallel +Megatron --sequence-parallel \(written as in effect: false at tp = 1\) \(layout field sequence_parallel\)]=]
              [=[--cross-entropy-fusion +Megatron --cross-entropy-loss-fusion. no fp32 copy of the logits \(layout field cross_entropy_fusion\)]=]
              [=[--capacity-factor FLOAT[^(]*Routed-expert capacity factor \(--moe-expert-capacity-factor\). 0: dropless \(layout field capacity_factor: 0 to 1000000\)]=]
              [=[--imbalance FLOAT[^(]*Rows of the most loaded expert rank over the balanced count \(1: balanced\) \(layout field imbalance: 1 to 1000000\)]=]
              [=[--vocab-divisible-by INT +Megatron --make-vocab-size-divisible-by \(times TP\). 0: the config's vocabulary \(layout field vocab_divisible_by: 0 to 16777216\)]=]
              [=[--dropout +Dropout masks counted \(dropout > 0\) \(layout field dropout\)]=]
              [=[--moe-permute-fusion +Megatron --moe-permute-fusion. TE's row map instead of an index per row \(layout field moe_permute_fusion\)]=]
              [=[--grad-reduce-in-bf16 +bf16 gradient buffer and reduction \(--grad-reduce-in-bf16. bf16 training\) \(layout field bf16_main_grads\)]=]
              [=[--precision-aware-optimizer +Megatron --use-precision-aware-optimizer. Transformer Engine's FusedAdam keeps the master weights and moments in the dtypes below. needs --distributed-optimizer \(layout field precision_aware_optimizer\)]=])
