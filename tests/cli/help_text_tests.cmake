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
