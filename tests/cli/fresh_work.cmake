# Included by the -P scripts that run EXE in a fresh directory (files_written.cmake,
# source_export.cmake). run_in_fresh_work(): removes WORK, creates it with the sub-directories of
# the list DIRS (a ;-list passed escaped; none when unset), then runs EXE with ARGS (likewise passed
# escaped; "%WORK%" in an argument replaced by WORK) in WORK, setting rc, out and err.
macro(run_in_fresh_work)
  string(REPLACE "\\;" ";" ARGS "${ARGS}")
  string(REPLACE "\\;" ";" DIRS "${DIRS}")
  file(REMOVE_RECURSE "${WORK}")
  file(MAKE_DIRECTORY "${WORK}")
  foreach(dir IN LISTS DIRS)
    file(MAKE_DIRECTORY "${WORK}/${dir}")
  endforeach()
  set(args)
  foreach(arg IN LISTS ARGS)
    string(REPLACE "%WORK%" "${WORK}" arg "${arg}")
    list(APPEND args "${arg}")
  endforeach()
  execute_process(COMMAND "${EXE}" ${args} WORKING_DIRECTORY "${WORK}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
endmacro()
