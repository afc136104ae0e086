# [train] accelerators_per_rank: K emulated accelerators per rank, each with its own loader and
# share of the samples. Exact samples and bytes per accelerator on 2 ranks (K = 2, and K = 3 with
# uneven shares and step barriers, read_threads = auto), report.md's per-accelerator rows
# (tests/report/check_report.py), and the combinations refused by name. Label mpi.
foreach(case per_rank shared uneven_barrier refused)
  add_test(NAME accelerators_per_rank.${case} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/accel.sh ${case})
  set_tests_properties(accelerators_per_rank.${case} PROPERTIES
    LABELS mpi TIMEOUT 60 ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
endforeach()
