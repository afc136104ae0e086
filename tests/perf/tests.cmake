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
