# Runs the soak twice with one seed and fails unless both summaries are equal (wall time aside):
# the library, the simulator and the game hold no hidden state, clock or address-dependent
# behaviour. Usage: cmake -DSOAK=<retcon_soak> -DFRAMES=<n> -DSEED=<s> [-DRUNNER=<wine_run>] -P same_run_twice.cmake
foreach(run 1 2)
  execute_process(COMMAND ${RUNNER} ${SOAK} ${FRAMES} ${SEED} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "run ${run} failed (${rc}):\n${out}")
  endif()
  string(REGEX REPLACE "wall [0-9.]+ s" "wall - s" out "${out}")
  set(summary_${run} "${out}")
endforeach()
if(NOT summary_1 STREQUAL summary_2)
  message(FATAL_ERROR "the same seed gave two different runs:\n${summary_1}\n${summary_2}")
endif()
message(STATUS "same run twice: ${summary_1}")
