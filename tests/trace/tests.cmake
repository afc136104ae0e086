# Per-operation traces and import-trace (tests/trace/trace.sh; docs/trace.md): a traced 2-rank
# run validated against the Chrome trace event format and its summary.json (posix and io_uring);
# the import-trace round trip of a traced DataLoader job (PyTorch where Debian's python3-torch
# is installed, else Python threads) and bad traces. Label `trace`.
set(FB_TRACE_SH ${CMAKE_CURRENT_LIST_DIR}/trace.sh)

function(fb_trace_test name)
  add_test(NAME trace.${name} COMMAND bash ${FB_TRACE_SH} ${name})
  set_tests_properties(trace.${name} PROPERTIES
    LABELS "trace" TIMEOUT 120 SKIP_RETURN_CODE 77 ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
endfunction()

fb_trace_test(run)
fb_trace_test(import)
