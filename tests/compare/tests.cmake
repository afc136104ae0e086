# Regression-comparison tests: `feedbench compare`, `baseline save|list` and `history` over
# real 2-rank runs of configs/ci.ini. The runs are made once by compare.runs (the fixture
# compare_runs, in ${PROJECT_BINARY_DIR}/tmp/compare, removed by compare.cleanup); each case
# of tests/compare/compare.sh reads them. Label `compare`.
#
# compare.runs is RUN_SERIAL: the false-alarm and sensitivity cases judge the timings of its
# runs, which nothing else may share the two cores with. Those cases only read the runs'
# summary.json files, so they run beside other tests. compare.junit
# validates the JUnit file with lxml in the interop venv (fixture interop_venv) and is
# skipped (77) only where that venv could not be made.
set(FB_COMPARE_SH ${CMAKE_CURRENT_LIST_DIR}/compare.sh)

add_test(NAME compare.runs COMMAND bash ${FB_COMPARE_SH} setup)
set_tests_properties(compare.runs PROPERTIES
  FIXTURES_SETUP compare_runs RUN_SERIAL TRUE
  LABELS "compare;mpi" TIMEOUT 300 ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
add_test(NAME compare.cleanup COMMAND bash ${FB_COMPARE_SH} cleanup)
set_tests_properties(compare.cleanup PROPERTIES
  FIXTURES_CLEANUP compare_runs LABELS "compare" TIMEOUT 60 ENVIRONMENT "${FEEDBENCH_TEST_ENV}")

function(fb_compare_test name timeout)
  add_test(NAME compare.${name} COMMAND bash ${FB_COMPARE_SH} ${name})
  set_tests_properties(compare.${name} PROPERTIES
    FIXTURES_REQUIRED compare_runs SKIP_RETURN_CODE 77
    LABELS "compare;mpi" TIMEOUT ${timeout} ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
endfunction()

fb_compare_test(summary 60)
fb_compare_test(two_runs 60)
fb_compare_test(false_alarms 120)
fb_compare_test(slowed 60)
fb_compare_test(verdicts 60)
fb_compare_test(refusals 60)
fb_compare_test(usage 60)
fb_compare_test(single_rep 60)
fb_compare_test(sweeps 120)
fb_compare_test(baseline 60)
fb_compare_test(history 60)
fb_compare_test(outputs 60)
fb_compare_test(junit 60)
fb_compare_test(multi_run 60)
fb_compare_test(impossible 60)
fb_compare_test(history_changes 60)
set_tests_properties(compare.junit PROPERTIES FIXTURES_REQUIRED "compare_runs;interop_venv")

# The CI guide's snippets (docs/guide-ci.md) run as written (their feedbench commands, in a scratch checkout).
add_test(NAME compare.readme_snippets
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/readme_snippets.py)
set_tests_properties(compare.readme_snippets PROPERTIES
  LABELS "compare;mpi" TIMEOUT 120 ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
