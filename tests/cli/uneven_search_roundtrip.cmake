# budget-match layout CFG --gpus N (a search) on a config whose layers PP does not divide: the best
# layout is an uneven pipeline ("PP<p> first <f> last <l>"), --megatron-out writes Megatron's
# --decoder-first/last-pipeline-num-layers, and those arguments read back (--megatron-args) price
# the same layout to the same step time.
execute_process(COMMAND "${EXE}" layout "${CFG}" --cluster "${CLUSTER}" --nodes "${NODES}" --gpus "${GPUS}" --top 1
                        --megatron-out "${OUT}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE searched ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "search failed (${rc}): ${err}")
endif()
if(NOT searched MATCHES "\n1 +TP[0-9]+ CP[0-9]+ PP([0-9]+) first ([0-9]+) last ([0-9]+) [^\n]* ([0-9]+[.][0-9]+) +[0-9]+ +[0-9.]+%")
  message(FATAL_ERROR "the best layout is not an uneven pipeline:\n${searched}")
endif()
set(pp "${CMAKE_MATCH_1}")
set(first "${CMAKE_MATCH_2}")
set(last "${CMAKE_MATCH_3}")
set(seconds "${CMAKE_MATCH_4}")
file(READ "${OUT}" args)
foreach(flag "--pipeline-model-parallel-size ${pp}" "--decoder-first-pipeline-num-layers ${first}"
             "--decoder-last-pipeline-num-layers ${last}")
  string(FIND "${args}" "${flag}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${OUT} lacks \"${flag}\":\n${args}")
  endif()
endforeach()
execute_process(COMMAND "${EXE}" layout "${CFG}" --cluster "${CLUSTER}" --nodes "${NODES}" --gpus "${GPUS}"
                        --megatron-args "${OUT}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE priced ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pricing the written arguments failed (${rc}): ${err}\n${priced}")
endif()
if(NOT priced MATCHES "\n${seconds} s a step of ")
  message(FATAL_ERROR "the written arguments price to another step time than the search's ${seconds} s:\n${priced}")
endif()
