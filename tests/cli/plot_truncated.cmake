# Runs `EXE grid --plot WORK/plot.svg` with a fake gnuplot first on PATH that writes the first
# 8 KB of an SVG (as gnuplot does on a full disk) and exits 0. Checks: exit 2 "incomplete plot",
# the plot that was there before unchanged, no temporary ".plot.svg.*" left in WORK.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/bin")
file(WRITE "${WORK}/bin/gnuplot" [=[#!/bin/sh
out=$(sed -n "s/^set output '\(.*\)'$/\1/p")
{ printf '<?xml version="1.0"?>\n<svg width="900" height="560">\n'; i=0
  while [ $i -lt 200 ]; do printf '<path d="M0,0 L10,10"/>\n'; i=$((i+1)); done; } | head -c 8192 > "$out"
exit 0
]=])
file(CHMOD "${WORK}/bin/gnuplot" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
set(old "<svg>the previous plot</svg>\n")
file(WRITE "${WORK}/plot.svg" "${old}")
execute_process(COMMAND ${CMAKE_COMMAND} -E env "PATH=${WORK}/bin:$ENV{PATH}" "${EXE}" grid --plot "${WORK}/plot.svg"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "expected exit 2, got ${rc}\nstdout: ${out}\nstderr: ${err}")
endif()
if(NOT err MATCHES "plot[.]svg: gnuplot wrote an incomplete plot [(][0-9]+ bytes; a full disk[?][)]; nothing was written")
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
