# Per-operation traces and import-trace (tests/trace/trace.sh; docs/trace.md): a traced 2-rank
# run validated against the Chrome trace event format and its summary.json (posix and io_uring);
# the import-trace round trip of a traced DataLoader job (PyTorch where Debian's python3-torch
# is installed, else Python threads) and bad traces. Label `trace` (trace.run also `mpi`).
set(FB_TRACE_SH ${CMAKE_CURRENT_LIST_DIR}/trace.sh)

function(fb_trace_test name labels)
  add_test(NAME trace.${name} COMMAND bash ${FB_TRACE_SH} ${name})
  set_tests_properties(trace.${name} PROPERTIES
    LABELS "${labels}" TIMEOUT 120 SKIP_RETURN_CODE 77 ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
endfunction()

# trace.run also carries `mpi`: make test-sanitize repeats it (reader threads filling their
# buffers, the ranks' files gathered over MPI) under the address and undefined sanitizers.
fb_trace_test(run "trace;mpi")
fb_trace_test(import "trace")
