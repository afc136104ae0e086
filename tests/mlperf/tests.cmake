# MLPerf Storage v3.0 submissions (docs/mlperf.md): presets, `feedbench mlperf datasize`, a
# 2-rank `feedbench mlperf run` (warm-up + 5) and `feedbench mlperf check` with a passing and a
# failing folder per rule (tests/mlperf/check_rules.py). Label `mlperf`.
add_test(NAME mlperf.submission COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/mlperf.sh)
set_tests_properties(mlperf.submission PROPERTIES
  LABELS "mlperf;mpi" TIMEOUT 120 ENVIRONMENT "${FEEDBENCH_TEST_ENV}"
  RESOURCE_LOCK page_cache) # mlperf run drops the page cache: tests/mpi/tests.cmake
# The checkpointing rules over real one- and two-invocation runs (tests/mlperf/ckpt_rules.py).
add_test(NAME mlperf.checkpoint_rules COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/ckpt.sh)
set_tests_properties(mlperf.checkpoint_rules PROPERTIES
  LABELS "mlperf;mpi" TIMEOUT 120 ENVIRONMENT "${FEEDBENCH_TEST_ENV}"
  RESOURCE_LOCK page_cache) # mlperf run drops the page cache: tests/mpi/tests.cmake
