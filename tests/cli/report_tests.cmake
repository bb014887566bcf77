# CLI tests of `budget-match --help/--version` and `budget-match report` (issue 2), run from the
# repository root. Expected numbers are the hand-derived ones of tests/unit/accounting/test_accounting.cpp
# (the paper's worked example: F = 1,330,053,120, N = 3,872,226,560, N_act = 209,419,520,
# KV 6,144 elements; looped: F = 1,368,576,000, N = 3,888,809,760, KV 6,336, 18 layers).
# Regexes are CMake regexes; bracket arguments ([=[...]=]) keep backslashes literal.

set(base examples/configs/paper-200M-S95-baseline.json)
set(smelt examples/configs/paper-200M-S95-smelt.json)
# Exactly one line on stderr, "budget-match: error: ...".
set(one_error_line "^budget-match: error: [^\n]+\n$")

budget_cli_test(NAME help ARGS --help
  STDOUT_MATCHES [=[Usage: budget-match]=] [=[--version]=] [=[report +Budgets of one config]=])
budget_cli_test(NAME version ARGS --version
  STDOUT_MATCHES [=[^budget-match [0-9]+\.[0-9]+\.[0-9]+]=])
budget_cli_test(NAME report.help ARGS report --help
  STDOUT_MATCHES [=[config]=] [=[--workload]=] [=[--format]=] [=[table]=] [=[markdown]=] [=[json]=])

# --- report: the three formats ------------------------------------------------------------------
budget_cli_test(NAME report.table ARGS report ${base}
  STDOUT_MATCHES
    [=[paper-200M-S95-baseline: H 1280, 12 layers, heads 10×128 \(KV 2\), experts 192×432 \(top 8\)]=]
    [=[training FLOPs / token \(F\) +1\.33 GFLOP = 1,330,053,120 +3× fwd]=]
    [=[non-embedding params \(N\) +3\.87 G = 3,872,226,560]=]
    [=[active params +209 M = 209,419,520]=]
    [=[KV cache / token +6,144 elem = 12\.3 kB]=]
    [=[layers \(physical / executed\) +12 / 12]=]
    [=[sparsity \(compute-equivalent\) +94\.59%]=])
budget_cli_test(NAME report.table_default_format_is_table ARGS report ${base} --format table
  STDOUT_MATCHES [=[quantity +value +share]=] [=[-------]=])
budget_cli_test(NAME report.json ARGS report ${base} --format json
  STDOUT_MATCHES
    [=[^{
  "schema_version": 1,]=]
    [=["flops_per_token": {[^}]*"training": 1330053120(\.0)?,]=]
    [=["params": {[^}]*"non_embedding_total": 3872226560,]=]
    [=["non_embedding_active": 209419520,]=]
    [=["kv_cache": {[^}]*"elements_per_token": 6144,]=]
    [=["effective_layers": 12,]=]
    [=["sparsity": 0\.94591]=]
    [=["param_sparsity": 0\.94591]=]
    [=["workload": {[^}]*"attended_keys": 400(\.0)?,]=])
budget_cli_test(NAME report.json_looped ARGS report ${smelt} --format json
  STDOUT_MATCHES
    [=["training": 1368576000(\.0)?,]=]
    [=["non_embedding_total": 3888809760,]=]
    [=["non_embedding_active": 141952800,]=]
    [=["elements_per_token": 6336,]=]
    [=["effective_layers": 18,]=]
    [=["physical_layers": 12,]=]
    [=["sparsity": 0\.94524]=]
    [=["param_sparsity": 0\.96349]=])
budget_cli_test(NAME report.markdown ARGS report ${base} --format markdown
  STDOUT_MATCHES
    [=[^\*\*paper-200M-S95-baseline\*\*: H 1280]=]
    [=[
\| quantity \| value \| share \|
\|---\|---:\|---:\|
]=]
    [=[\| training FLOPs / token \(F\) \| 1\.33 GFLOP = 1,330,053,120 \| 3× fwd \|]=]
    [=[\| loop \| none \|]=])
budget_cli_test(NAME report.markdown_looped ARGS report ${smelt} --format markdown
  STDOUT_MATCHES [=[\| layers \(physical / executed\) \| 12 / 18 \|]=] [=[\| loop \| 4–9 ×2 \|]=]
    [=[\| sparsity \(1 − active/total\) \| 96\.35% \|]=])
budget_cli_test(NAME report.format_ignores_case ARGS report ${base} --format JSON
  STDOUT_MATCHES [=["schema_version": 1]=])
budget_cli_test(NAME report.workload_file ARGS report ${base} --workload examples/workloads/paper-4096.json --format json
  STDOUT_MATCHES [=["training": 1330053120(\.0)?,]=] [=["attention_mask": "document"]=])

# --- malformed inputs: exit 2, one line naming the file, the JSON path and the fault, no stdout ---
function(report_rejects name file path message)
  budget_cli_test(NAME report.rejects.${name} ARGS report tests/data/bad/${file}
    EXPECT_EXIT 2
    STDERR_MATCHES "${one_error_line}" "budget-match: error: tests/data/bad/${file}: ${path}${message}"
    STDOUT_NOT_MATCHES ".")
endfunction()
report_rejects(wrong_type wrong_type.json "/hidden_size: " [=[expected an integer in \[1, 2147483647\], found a string \("1280"\)]=])
report_rejects(negative negative_layers.json "/num_layers: " [=[value -12 is out of range. allowed: an integer in \[1, 1000000\]]=])
report_rejects(zero zero_heads.json "/attention/num_heads: " [=[value 0 is out of range]=])
report_rejects(missing_key missing_attention.json "/attention: " [=[required key is missing]=])
report_rejects(unknown_key unknown_key.json "/ffn/num_expert: " [=[unknown key "num_expert" \(did you mean "num_experts"\?\)]=])
report_rejects(kv_heads kv_heads_not_dividing.json "/attention/num_kv_heads: " [=[num_kv_heads 3 does not divide num_heads 10]=])
report_rejects(loop_outside loop_outside_stack.json "/loop/last: " [=[value 13 is out of range. allowed: an integer in \[1, 12\]]=])
report_rejects(top_k top_k_over_experts.json "/ffn/top_k: " [=[top_k 9 is out of range. allowed: an integer in \[1, num_experts = 8\]]=])
report_rejects(overflow_32bit overflow_32bit.json "/ffn/expert_dim: " [=[value 4294967296 is out of range. allowed: an integer in \[1, 2147483647\]]=])
report_rejects(overflow_64bit overflow_64bit_total.json "/: " [=[the config is too large.*64-bit]=])
report_rejects(float_for_integer float_for_integer.json "/num_layers: " [=[value 12\.5 is not an integer]=])
report_rejects(span_and_first span_fraction_and_first.json "/loop/span_fraction: " [=[give either span_fraction or first/last, not both]=])
report_rejects(not_an_object not_an_object.json "/: " [=[expected a JSON object, found an array]=])
report_rejects(not_json not_json.json "" [=[not valid JSON: parse error at line 1]=])
report_rejects(empty empty.json "" [=[the file is empty; expected a JSON object]=])
report_rejects(missing_file does_not_exist.json "" [=[cannot open file for reading: no such file]=])

function(report_rejects_workload name file path message)
  budget_cli_test(NAME report.rejects.${name} ARGS report ${base} --workload tests/data/bad/${file}
    EXPECT_EXIT 2
    STDERR_MATCHES "${one_error_line}" "budget-match: error: tests/data/bad/${file}: ${path}${message}"
    STDOUT_NOT_MATCHES ".")
endfunction()
report_rejects_workload(workload_causal_with_keys workload_causal_with_keys.json "/attended_keys: "
  [=[attended_keys cannot be given with "attention_mask": "causal"]=])
report_rejects_workload(workload_unknown_key workload_unknown_key.json "/atended_keys: "
  [=[unknown key "atended_keys" \(did you mean "attended_keys"\?\)]=])
report_rejects_workload(workload_keys_over_window workload_keys_over_seq_len.json "/attended_keys: "
  [=[value 400 is out of range. allowed: a number in \[1, 256\]]=])
report_rejects_workload(workload_missing_file no_such_workload.json "" [=[cannot open file for reading: no such file]=])

budget_cli_test(NAME report.rejects.directory ARGS report tests/data/bad
  EXPECT_EXIT 2 STDERR_MATCHES "${one_error_line}" [=[tests/data/bad: cannot open file for reading: it is a directory]=] STDOUT_NOT_MATCHES ".")

# --- usage errors: exit 64 ---------------------------------------------------------------------
budget_cli_test(NAME report.unknown_option ARGS report ${base} --bogus
  EXPECT_EXIT 64 STDERR_MATCHES [=[not expected: --bogus]=] [=[Run with --help]=] STDOUT_NOT_MATCHES ".")
budget_cli_test(NAME unknown_top_level_option ARGS --bogus
  EXPECT_EXIT 64 STDERR_MATCHES [=[--bogus]=] [=[Run with --help]=])
budget_cli_test(NAME report.missing_config ARGS report
  EXPECT_EXIT 64 STDERR_MATCHES [=[config is required]=])
budget_cli_test(NAME report.bad_format ARGS report ${base} --format yaml
  EXPECT_EXIT 64 STDERR_MATCHES [=[--format]=] [=[yaml]=])

# Hugging Face config.json files are recognised and read (docs/config.md, "Hugging Face configs").
budget_cli_test(NAME report.hf_mixtral ARGS report examples/hf/mixtral-8x7b.json
  STDOUT_MATCHES "non-embedding params \\(N\\) +46\\.4 G" "heads 32×128 \\(KV 8\\)")
budget_cli_test(NAME match.hf_qwen_moe ARGS --baseline examples/hf/qwen1.5-moe-a2.7b.json --top 1
  STDOUT_MATCHES "matched: #1 max deviation")
budget_cli_test(NAME report.format_not_offered ARGS report examples/configs/paper-200M-S95-baseline.json --format csv
  EXPECT_EXIT 64 STDERR_MATCHES "--format: value \"csv\" is not allowed; allowed: json\\|markdown\\|table")
budget_cli_test(NAME report.format_case_insensitive ARGS report examples/configs/paper-200M-S95-baseline.json --format JSON
  STDOUT_MATCHES "\"schema_version\": 1")
