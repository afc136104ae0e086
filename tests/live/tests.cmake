# Live statistics and early stops (bench/live.c): real 2-rank mpiexec runs checking the live
# lines on stderr, live.csv and ranks.csv against summary.json, time_limit, steady_state on an
# emulated steady device (also with epochs shorter than an interval) and on one that slows
# down, the ior workload's stonewall with wear-out, one live thread per repetition (not per
# epoch), and a link or FIFO planted at live.csv before it is written (tests/live/live.sh).
foreach(c mpiexec time_limit steady steady_short ramp stonewall threads hostile)
  add_test(NAME live.${c} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/live.sh ${c})
  set_tests_properties(live.${c} PROPERTIES
    LABELS live TIMEOUT 90 ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
endforeach()
