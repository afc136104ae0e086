# tests/lib.sh, the shell tests' shared prelude: its EXIT trap stops background mpiexec runs
# and their ranks, json_check fails on a false condition. Label `harness`.
foreach(case stops_jobs json_check)
  add_test(NAME harness.${case} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/lib_test.sh ${case})
  set_tests_properties(harness.${case} PROPERTIES
    LABELS harness TIMEOUT 60 ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
endforeach()
