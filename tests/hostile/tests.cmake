# Hostile inputs and shared folders (docs/failures.md 26-30): links, FIFOs and folders planted where
# feedbench writes, names that are paths, malformed JSON inputs, full disks, signals, pauses and
# mismatched MPI launches. Label `hostile` (also rerun under address+undefined sanitizers by
# `make test-sanitize`: 23 cases, about 33 s of ASan/UBSan time); those that start mpiexec also `mpi`.
set(FB_HOSTILE_SH ${CMAKE_CURRENT_LIST_DIR}/hostile.sh)

function(fb_hostile_test name labels)
  add_test(NAME hostile.${name} COMMAND bash ${FB_HOSTILE_SH} ${name})
  set_tests_properties(hostile.${name} PROPERTIES
    LABELS "${labels}" TIMEOUT 90 ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
endfunction()

foreach(case compare_json_symlink generate_symlink generate_fifo generate_hardlink read_fifo read_fifo_uring
             set_mpiio_empty_name name_escape plot_many_keys plot_malformed plot_zip_lengths plot_point_escape compare_point_escape compare_summary_link
             output_is_file same_output full_disk_plots sigint_writing)
  fb_hostile_test(${case} hostile)
endforeach()
foreach(case sigterm_ranks sigstop_resume mpmd_configs mpmd_commands mpmd_sets)
  fb_hostile_test(${case} "hostile;mpi")
endforeach()
set_tests_properties(hostile.same_output hostile.full_disk_plots hostile.sigint_writing
  PROPERTIES SKIP_RETURN_CODE 77)

# Nothing outside the output (untrusted.sh): devices, FIFOs, folders, sockets and links at the
# names feedbench writes; links where its own folders belong; foreign files that crash the
# library parsing them; bounded foreign inputs; import-dlio's values; the modes of what it
# creates. Label `hostile` (also under ASan/UBSan through `make test-sanitize`).
set(FB_UNTRUSTED_SH ${CMAKE_CURRENT_LIST_DIR}/untrusted.sh)
function(fb_untrusted_test name labels)
  add_test(NAME hostile.${name} COMMAND bash ${FB_UNTRUSTED_SH} ${name})
  set_tests_properties(hostile.${name} PROPERTIES
    LABELS "${labels}" TIMEOUT 90 SKIP_RETURN_CODE 77 ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
endfunction()
foreach(case output_import_dlio output_compare output_history config_bom umask_000
             link_metadata_rank link_sweep_point yaml_bounds plot_timeout
             yaml_values link_checkpoint_step)
  fb_untrusted_test(${case} hostile)
endforeach()
fb_untrusted_test(hdf5_crash "hostile;mpi")
