# Sweep tests: configs/sweeps/*-small.ini run for real at 2 ranks (a few seconds each), the
# resume logic, error messages, and `feedbench plot` over tests/sweep/fixtures. Label `sweep`.
set(FB_SWEEP_SH ${CMAKE_CURRENT_LIST_DIR}/sweep.sh)

function(fb_sweep_test name timeout)
  add_test(NAME sweep.${name} COMMAND bash ${FB_SWEEP_SH} ${name})
  set_tests_properties(sweep.${name} PROPERTIES
    LABELS "sweep;mpi" TIMEOUT ${timeout} ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
endfunction()

fb_sweep_test(dry_run 60)
fb_sweep_test(checks 90)
fb_sweep_test(shipped 120)
fb_sweep_test(interrupted 120)
fb_sweep_test(stripe 120)
fb_sweep_test(stripe_2reps 120)
fb_sweep_test(stripe_shared 120)
fb_sweep_test(formats 120)
fb_sweep_test(loader 120)
fb_sweep_test(tiny_vs_shards 120)
fb_sweep_test(zip_errors 60)
fb_sweep_test(resume 180)
fb_sweep_test(unfinished 120)
fb_sweep_test(bad_value 60)
fb_sweep_test(no_gnuplot 120)
fb_sweep_test(plot 60)
set_tests_properties(sweep.plot PROPERTIES LABELS "sweep;plot")
