# Benchmarks: built with the project, never registered with ctest (timings are not tests).
#   build/tfrecord_decode [RECORD_BYTES [TOTAL_MiB [ROUNDS]]] [--min GB/s]
# measures TFRecord record checking + Example decoding per core (target: >= 1 GB/s).
add_executable(tfrecord_decode ${CMAKE_CURRENT_LIST_DIR}/tfrecord_decode.c)
target_link_libraries(tfrecord_decode PRIVATE feedbench_core)
target_compile_options(tfrecord_decode PRIVATE ${FEEDBENCH_WARNINGS})
set_target_properties(tfrecord_decode PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
