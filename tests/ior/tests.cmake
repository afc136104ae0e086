# [workload] type = ior: real mpiexec runs, each in its own temporary folder, checking the files
# on disk, exact byte and call counts in summary.json, and failures (tests/ior/ior.sh).
foreach(c shared fpp_random removed mpiio_shared mpiio_collective collective_posix collective_enospc compare enospc bad_transfer shipped_config shared_repeated pattern)
  add_test(NAME ior.${c} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/ior.sh ${c})
  set_tests_properties(ior.${c} PROPERTIES
    LABELS ior TIMEOUT 60 ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
endforeach()
