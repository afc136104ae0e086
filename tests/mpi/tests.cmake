# MPI tests: real mpiexec runs of tests/mpi/mpi.sh on the tiny workload of tests/mpi/tiny.ini
# (a few hundred KiB in a temporary folder each), at 1, 2 and 4 ranks with --oversubscribe.
# Every successful run is checked by check_summary.py: bytes, samples and read calls against
# what the config implies, rates against bytes over time, the CSVs against summary.json.
set(FB_MPI_SH ${CMAKE_CURRENT_LIST_DIR}/mpi.sh)

function(fb_mpi_test name timeout)
  add_test(NAME mpi.${name} COMMAND bash ${FB_MPI_SH} ${ARGN})
  set_tests_properties(mpi.${name} PROPERTIES
    LABELS mpi TIMEOUT ${timeout} SKIP_RETURN_CODE 77 ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
endfunction()

# raw_per_rank_N and raw_shared_N assert that the page cache holds the dataset they just wrote
# (mincore): RESOURCE_LOCK page_cache keeps the tests that drop the whole machine's page cache
# (mlperf run, the checkpoint phases' flush as root) from running beside them.
foreach(n 1 2 4)
  fb_mpi_test(raw_per_rank_${n} 60 per_rank ${n})
  fb_mpi_test(raw_shared_${n} 60 shared ${n})
  set_tests_properties(mpi.raw_per_rank_${n} mpi.raw_shared_${n} PROPERTIES
    RESOURCE_LOCK page_cache)
endforeach()
fb_mpi_test(uneven_files_7_on_4 60 uneven_files)
fb_mpi_test(uneven_shared_13_on_4 60 uneven_shared)
fb_mpi_test(shared_in_order 90 shared_in_order)
fb_mpi_test(step_barrier_uneven 60 step_barrier)
fb_mpi_test(drop_last 60 drop_last)
fb_mpi_test(read_threads_1 60 read_threads 1)
fb_mpi_test(read_threads_4 60 read_threads 4)
fb_mpi_test(read_threads_auto 90 read_threads_auto)
fb_mpi_test(transfer_pieces 60 transfer_pieces)
fb_mpi_test(prefetch_bytes 60 prefetch_bytes)
fb_mpi_test(lazy_wake 90 lazy_wake)
fb_mpi_test(lazy_wake_faults 60 lazy_wake_faults)
fb_mpi_test(variable_sizes_per_rank 60 variable_sizes per_rank)
fb_mpi_test(variable_sizes_shared 60 variable_sizes shared)
fb_mpi_test(direct 60 direct)
fb_mpi_test(page_cache_evict 60 evict)
fb_mpi_test(page_cache_evict_shared_once_per_node 60 evict_shared)
fb_mpi_test(repetitions_3 60 repetitions)
fb_mpi_test(verify_flipped_byte 60 verify_flip)
fb_mpi_test(verify_flipped_byte_collective 60 verify_flip_collective)
fb_mpi_test(collective_counts 60 collective_counts)
fb_mpi_test(uneven_watchdog 60 uneven_watchdog)
fb_mpi_test(wds_read_once 60 wds_read_once off)
fb_mpi_test(wds_read_once_shuffled 60 wds_read_once seed)
fb_mpi_test(dataset_other_seed 90 other_seed)
fb_mpi_test(dataset_stale_files 90 stale_files)
fb_mpi_test(interrupt_sigint 120 interrupt)
fb_mpi_test(progress_live 60 progress_live)
fb_mpi_test(mlperf_rules 60 mlperf_rules)
