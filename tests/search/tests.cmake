# Accelerator-count search: `feedbench search` at 4 ranks on an emulated device of fixed
# capacity ([storage.faulty] shared_device); the answer is known from the config. Label `search`.
add_test(NAME search.emulated_device
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/search.sh)
set_tests_properties(search.emulated_device PROPERTIES
  LABELS "search;mpi" TIMEOUT 60 ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
