# Benchmarks: built with the project, never registered with ctest (timings are not tests).
#   build/tfrecord_decode [RECORD_BYTES [TOTAL_MiB [ROUNDS]]] [--min GB/s]
# measures TFRecord record checking + Example decoding per core (target: >= 1 GB/s).
add_executable(tfrecord_decode ${CMAKE_CURRENT_LIST_DIR}/tfrecord_decode.c)
target_link_libraries(tfrecord_decode PRIVATE feedbench_core)
target_compile_options(tfrecord_decode PRIVATE ${FEEDBENCH_WARNINGS})
set_target_properties(tfrecord_decode PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})

#   build/compute_precision [ROUNDS]
# measures how precisely the CPU emulation holds computation_time (target: within 2 % >= 1 ms).
add_executable(compute_precision ${CMAKE_CURRENT_LIST_DIR}/compute_precision.c)
target_link_libraries(compute_precision PRIVATE feedbench_core m)
target_compile_options(compute_precision PRIVATE ${FEEDBENCH_WARNINGS})
set_target_properties(compute_precision PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})

#   build/pread_loop, build/bare_mpi: the bare pread loop, the CPU-time wrapper and the bare MPI
# program that tests/perf/limits.sh measures feedbench against.
add_executable(pread_loop ${CMAKE_CURRENT_LIST_DIR}/pread_loop.c)
target_compile_options(pread_loop PRIVATE ${FEEDBENCH_WARNINGS})
set_target_properties(pread_loop PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
add_executable(bare_mpi ${CMAKE_CURRENT_LIST_DIR}/bare_mpi.c)
target_link_libraries(bare_mpi PRIVATE MPI::MPI_C)
target_compile_options(bare_mpi PRIVATE ${FEEDBENCH_WARNINGS})
set_target_properties(bare_mpi PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})

#   build/trace_loop FILE DIR [READS [ROUNDS]]
# times 4 KiB cached preads with and without recording each in the trace, alternated in one
# process (tests/perf/trace_cost.sh MODE=loop; docs/performance.md, target < 5 %).
add_executable(trace_loop ${CMAKE_CURRENT_LIST_DIR}/trace_loop.c)
target_link_libraries(trace_loop PRIVATE feedbench_core)
target_compile_options(trace_loop PRIVATE ${FEEDBENCH_WARNINGS})
set_target_properties(trace_loop PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
