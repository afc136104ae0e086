# report.md rewritten by `feedbench plot` from an older summary.json (no evaluation, per-
# accelerator, binding or file-table fields) and from one with damaged fields: written, no empty
# sections, no nan or (null). No MPI, no gnuplot. Label `plot`, which `make test-sanitize` selects
# (the other `plot` test, sweep.plot, is also `sweep` and left out there).
foreach(case old_summary malformed)
  add_test(NAME report.${case} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/report.sh ${case})
  set_tests_properties(report.${case} PROPERTIES
    LABELS plot TIMEOUT 30 ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
endforeach()
# Every workload's own report.md and table.md (train, checkpoint, ior, metadata on 2 ranks):
# tests/report/check_folder.py finds no '?' or nan and no file the folder lacks, and
# `feedbench plot` rewrites report.md byte for byte; controls show the checker failing. Label
# `report` only: the sanitizer run covers the renderer through unit.test_outputs.
add_test(NAME report.workloads COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/report.sh workloads)
set_tests_properties(report.workloads PROPERTIES
  LABELS report TIMEOUT 90 ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
