# Issue 33: an exported trainer config is run as its trainer would run it, in a fresh directory
# WORK, and nothing a name from data holds may run. EXE ARGS (with %WORK% replaced) must write
# WORK/OUT (KIND megatron: a bash array file; python: a Python module); then
#   megatron: `bash -c 'set -e; source OUT; echo ${#MODEL_ARGS[@]}'` must print a count > 0;
#   python:   `python3 -c 'import ast; ast.parse(open(OUT).read())'` must succeed;
# and afterwards WORK must hold OUT alone (a `touch pwned...` in a name would have created a file).
# The first comment line of OUT must match HEADER_MATCHES when given.
include("${CMAKE_CURRENT_LIST_DIR}/fresh_work.cmake")
run_in_fresh_work()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "export: exit code ${rc}\nstdout: ${out}\nstderr: ${err}")
endif()
if(KIND STREQUAL "megatron")
  execute_process(COMMAND bash -c "set -e; source ./${OUT}; echo \${#MODEL_ARGS[@]}" WORKING_DIRECTORY "${WORK}"
    RESULT_VARIABLE src_rc OUTPUT_VARIABLE src_out ERROR_VARIABLE src_err)
  if(NOT src_rc EQUAL 0 OR NOT src_out MATCHES "^[1-9][0-9]*\n$")
    message(FATAL_ERROR "source ${OUT}: exit ${src_rc}, stdout '${src_out}', stderr '${src_err}'")
  endif()
else()
  execute_process(COMMAND python3 -c "import ast, sys; ast.parse(open(sys.argv[1], encoding='utf-8').read())" "${OUT}"
    WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE src_rc ERROR_VARIABLE src_err)
  if(NOT src_rc EQUAL 0)
    message(FATAL_ERROR "python cannot parse ${OUT}: ${src_err}")
  endif()
endif()
file(GLOB found LIST_DIRECTORIES true RELATIVE "${WORK}" "${WORK}/*" "${WORK}/.*")
if(NOT "${found}" STREQUAL "${OUT}")
  message(FATAL_ERROR "files in ${WORK} after running ${OUT}: [${found}]; expected ${OUT} alone")
endif()
if(DEFINED HEADER_MATCHES)
  file(STRINGS "${WORK}/${OUT}" first LIMIT_COUNT 1)
  if(NOT first MATCHES "${HEADER_MATCHES}")
    message(FATAL_ERROR "first line of ${OUT} does not match '${HEADER_MATCHES}': ${first}")
  endif()
endif()
message(STATUS "${OUT} ran; no other file")
