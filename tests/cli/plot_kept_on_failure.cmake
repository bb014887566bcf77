# Runs `EXE grid --plot WORK/plot.svg` with a fake gnuplot first on PATH that fails in the way MODE
# names:
#   failing:   writes half a file to the output gnuplot was told to use, then exits 1;
#   truncated: writes the first 8 KB of an SVG (as gnuplot does on a full disk) and exits 0.
# Checks: exit 2 with the message of that failure naming the plot, the plot that was there before
# unchanged, no temporary ".plot.svg.*" left in WORK.
if(MODE STREQUAL "failing")
  set(fake_gnuplot [=[#!/bin/sh
out=$(sed -n "s/^set output '\(.*\)'$/\1/p")
printf '<svg partial' > "$out"
exit 1
]=])
  set(expected_message "plot[.]svg: gnuplot failed [(]status [0-9]+[)] while drawing the plot; nothing was written")
elseif(MODE STREQUAL "truncated")
  set(fake_gnuplot [=[#!/bin/sh
out=$(sed -n "s/^set output '\(.*\)'$/\1/p")
{ printf '<?xml version="1.0"?>\n<svg width="900" height="560">\n'; i=0
  while [ $i -lt 200 ]; do printf '<path d="M0,0 L10,10"/>\n'; i=$((i+1)); done; } | head -c 8192 > "$out"
exit 0
]=])
  set(expected_message
      "plot[.]svg: gnuplot wrote an incomplete plot [(][0-9]+ bytes; a full disk[?][)]; nothing was written")
else()
  message(FATAL_ERROR "MODE must be failing or truncated, not '${MODE}'")
endif()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/bin")
file(WRITE "${WORK}/bin/gnuplot" "${fake_gnuplot}")
file(CHMOD "${WORK}/bin/gnuplot" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
set(old "<svg>the previous plot</svg>\n")
file(WRITE "${WORK}/plot.svg" "${old}")
execute_process(COMMAND ${CMAKE_COMMAND} -E env "PATH=${WORK}/bin:$ENV{PATH}" "${EXE}" grid --plot "${WORK}/plot.svg"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "expected exit 2, got ${rc}\nstdout: ${out}\nstderr: ${err}")
endif()
if(NOT err MATCHES "${expected_message}")
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
