# The checkpoint workload (workloads/checkpoint.c): real mpiexec runs on 2 ranks of
# tests/checkpoint/checkpoint.sh in temporary folders. Label `checkpoint`.
foreach(case dcp single keep_last fsync_fail corrupt enospc remove_first namespace_faults killed sweep
    train_steps train_async train_steps_fail train_async_fail train_after_epoch)
  add_test(NAME checkpoint.${case}
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/checkpoint.sh ${case})
  set_tests_properties(checkpoint.${case} PROPERTIES
    LABELS "checkpoint;mpi" TIMEOUT 150 SKIP_RETURN_CODE 77
    ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
endforeach()

# MLPerf Storage's phases on 2 local ranks, and its llama3_70b.yaml imported
# (tests/checkpoint/phases.sh).
foreach(case phases_both phases_split phases_drop phases_config import_llama)
  add_test(NAME checkpoint.${case} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/phases.sh ${case})
  set_tests_properties(checkpoint.${case} PROPERTIES
    LABELS "checkpoint;mpi" TIMEOUT 120 SKIP_RETURN_CODE 77
    ENVIRONMENT "${FEEDBENCH_TEST_ENV}" RESOURCE_LOCK page_cache) # drops it: tests/mpi
endforeach()
