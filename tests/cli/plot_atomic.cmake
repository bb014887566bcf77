# Runs `EXE grid --plot WORK/plot.svg` with a fake gnuplot first on PATH that writes half a file
# to the output gnuplot was told to use, then fails. Checks: exit 2 naming the plot, the plot that
# was there before unchanged, no temporary ".plot.svg.*" left in WORK.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/bin")
file(WRITE "${WORK}/bin/gnuplot" [=[#!/bin/sh
out=$(sed -n "s/^set output '\(.*\)'$/\1/p")
printf '<svg partial' > "$out"
exit 1
]=])
file(CHMOD "${WORK}/bin/gnuplot" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
set(old "<svg>the previous plot</svg>\n")
file(WRITE "${WORK}/plot.svg" "${old}")
execute_process(COMMAND ${CMAKE_COMMAND} -E env "PATH=${WORK}/bin:$ENV{PATH}" "${EXE}" grid --plot "${WORK}/plot.svg"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "expected exit 2, got ${rc}\nstdout: ${out}\nstderr: ${err}")
endif()
if(NOT err MATCHES "plot[.]svg: gnuplot failed [(]status [0-9]+[)] while drawing the plot; nothing was written")
  message(FATAL_ERROR "unexpected message: ${err}")
endif()
file(READ "${WORK}/plot.svg" now)
if(NOT now STREQUAL old)
  message(FATAL_ERROR "the previous plot was changed: ${now}")
endif()
file(GLOB leftovers "${WORK}/.plot.svg.*")
if(leftovers)
  message(FATAL_ERROR "temporary plot files left behind: ${leftovers}")
endif()
