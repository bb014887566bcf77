# Runs commands twice (and the bootstrap with different --threads) and checks that the outputs are
# byte-identical (docs/reliability.md, "Determinism"). Invoked by cli.robust.deterministic_outputs.
set(BASE examples/configs/paper-200M-S95-baseline.json)
set(cases
  "match_json|--baseline|${BASE}|--format|json"
  "match_table|--baseline|${BASE}"
  "grid_json|grid|--format|json"
  "ablation_json|grid|--ablation|span|--format|json"
  "attention_json|attention|--dist|exp:mean=600|--samples|200000|--format|json")
set(bootstrap "ce-gain|--target|examples/scaling/looped.json|--reference|examples/scaling/baseline.json|--C|1e21,1e22|--S|0.9|--bootstrap|tests/data/scaling_paired_domains.csv|--resamples|60|--format|json")
list(APPEND cases "bootstrap_t1|${bootstrap}|--threads|1" "bootstrap_t2|${bootstrap}|--threads|2")

set(outputs)
foreach(case IN LISTS cases)
  string(REPLACE "|" ";" parts "${case}")
  list(POP_FRONT parts name)
  foreach(run 1 2)
    execute_process(COMMAND "${EXE}" ${parts} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${name}: exit ${rc}: ${err}")
    endif()
    set(out_${name}_${run} "${out}")
  endforeach()
  if(NOT out_${name}_1 STREQUAL out_${name}_2)
    file(WRITE "${OUT}/${name}_1.txt" "${out_${name}_1}")
    file(WRITE "${OUT}/${name}_2.txt" "${out_${name}_2}")
    message(FATAL_ERROR "${name}: two runs differ (see ${OUT}/${name}_1.txt and _2.txt)")
  endif()
endforeach()
if(NOT out_bootstrap_t1_1 STREQUAL out_bootstrap_t2_1)
  file(WRITE "${OUT}/bootstrap_t1.txt" "${out_bootstrap_t1_1}")
  file(WRITE "${OUT}/bootstrap_t2.txt" "${out_bootstrap_t2_1}")
  message(FATAL_ERROR "ce-gain --bootstrap: --threads 1 and --threads 2 differ (see ${OUT}/bootstrap_t*.txt)")
endif()
