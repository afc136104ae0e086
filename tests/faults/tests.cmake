# Fault tests (docs/failures.md 14-18, 21) and the storage back-end matrix: real mpiexec runs of
# tests/faults/fault.sh on tiny datasets in temporary folders. Label `faults`; the matrix is
# also labelled `mpiio`.
set(FB_FAULT_SH ${CMAKE_CURRENT_LIST_DIR}/fault.sh)

function(fb_fault_test name timeout)
  add_test(NAME faults.${name} COMMAND bash ${FB_FAULT_SH} ${ARGN})
  set_tests_properties(faults.${name} PROPERTIES
    LABELS "faults;mpi" TIMEOUT ${timeout} ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
endfunction()

fb_fault_test(enospc_generate 60 enospc_generate)
fb_fault_test(fsync_generate 60 fsync_generate)
fb_fault_test(close_generate 60 close_generate)
fb_fault_test(eio_read_rank1 90 eio_read_rank1)
fb_fault_test(sigkill_rank 90 sigkill_rank)
fb_fault_test(sigint 90 sigint)
fb_fault_test(watchdog_fires 90 watchdog_fires)
fb_fault_test(short_eintr 60 short_eintr)
fb_fault_test(stripe_unsupported 60 stripe_unsupported)
fb_fault_test(list_dir_fail 90 list_dir_fail)
fb_fault_test(rmdir_fail 60 rmdir_fail)
foreach(case data_missing data_fewer_files data_foreign_files data_resized cache_resident)
  fb_fault_test(${case} 60 ${case})
endforeach()

# posix vs mpiio (independent and collective) on shared files: raw at 1, 2 and 4 ranks; the
# other formats that can be shared at 2 ranks.
foreach(mode posix mpiio collective)
  foreach(n 1 2 4)
    fb_fault_test(matrix_raw_${mode}_${n} 60 matrix raw ${mode} ${n})
    set_tests_properties(faults.matrix_raw_${mode}_${n} PROPERTIES LABELS "faults;mpi;mpiio")
  endforeach()
  foreach(fmt tfrecord npz hdf5)
    fb_fault_test(matrix_${fmt}_${mode}_2 60 matrix ${fmt} ${mode} 2)
    set_tests_properties(faults.matrix_${fmt}_${mode}_2 PROPERTIES LABELS "faults;mpi;mpiio")
  endforeach()
endforeach()
