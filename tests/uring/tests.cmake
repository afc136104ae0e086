# The io_uring back-end: verified reads of raw, npy and tfrecord at io_depth 1 and 8, per_rank
# and shared, raw with O_DIRECT, a file cut short, io_depth kept in flight across batches
# (exact counts over epochs, batch sizes, threads) and an EIO inside the queue
# (tests/uring/uring.sh): real mpiexec runs at 2 ranks. Label `uring`; the error case also `mpi` (repeated under sanitizers; the queue
# logic itself is unit.test_io, also repeated there).
# Skipped (77) when liburing was not found.
set(FB_URING_SH ${CMAKE_CURRENT_LIST_DIR}/uring.sh)

function(fb_uring_test name labels)
  add_test(NAME uring.${name} COMMAND bash ${FB_URING_SH} ${ARGN})
  set_tests_properties(uring.${name} PROPERTIES
    LABELS "${labels}" TIMEOUT 90 SKIP_RETURN_CODE 77 ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
endfunction()

fb_uring_test(raw "uring" read raw per_rank shared)
fb_uring_test(npy "uring" read npy per_rank)
fb_uring_test(tfrecord "uring" read tfrecord per_rank shared)
fb_uring_test(truncated "uring;mpi" truncated)
fb_uring_test(pipeline "uring;mpi" pipeline)
fb_uring_test(eio "uring;mpi" eio)
