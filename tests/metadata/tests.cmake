# [workload] type = metadata: real mpiexec runs of configs/workloads/mdtest.ini scaled down,
# checking files, folders, exact operation counts, the slowest rank's time (slow_rank) and
# failures (tests/metadata/metadata.sh).
foreach(c per_rank shared_removed slow_rank create_fails)
  add_test(NAME metadata.${c} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/metadata.sh ${c})
  set_tests_properties(metadata.${c} PROPERTIES
    LABELS metadata TIMEOUT 60 ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
endforeach()
