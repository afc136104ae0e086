# libFuzzer targets (tests/fuzz/fuzz_<name>.c) over every reader of untrusted input, with their
# seed corpora in tests/fuzz/corpus/<name>/. Built only in the `fuzz` preset (clang,
# -DFEEDBENCH_FUZZ=ON), where the whole project is compiled with -fsanitize=fuzzer-no-link,
# address,undefined. One ctest per target, label `fuzz`: a short run from the seeds alone with a
# fixed random seed (FEEDBENCH_FUZZ_SMOKE_SECONDS, default 8 s); a crash, leak or sanitizer
# report fails it and the input is kept under build-fuzz/fuzz/<name>/. `make fuzz` runs each for
# longer.
option(FEEDBENCH_FUZZ "Build the libFuzzer targets (needs clang)" OFF)
set(FEEDBENCH_FUZZ_SMOKE_SECONDS 8 CACHE STRING "Seconds each fuzz target runs in ctest")

if(FEEDBENCH_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "FEEDBENCH_FUZZ needs clang (cmake --preset fuzz)")
  endif()
  set(FB_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR})
  add_library(fuzz_common STATIC ${FB_FUZZ_DIR}/fuzz_common.c)
  target_link_libraries(fuzz_common PUBLIC feedbench_core)
  target_compile_definitions(fuzz_common PUBLIC FUZZ_SOURCE_DIR="${FB_FUZZ_DIR}")
  target_include_directories(fuzz_common PUBLIC ${FB_FUZZ_DIR})
  add_custom_target(fuzz_targets)

  file(GLOB FB_FUZZ_SOURCES CONFIGURE_DEPENDS ${FB_FUZZ_DIR}/fuzz_*.c)
  list(REMOVE_ITEM FB_FUZZ_SOURCES ${FB_FUZZ_DIR}/fuzz_common.c)
  foreach(src ${FB_FUZZ_SOURCES})
    get_filename_component(target ${src} NAME_WE)
    string(REGEX REPLACE "^fuzz_" "" name ${target})
    add_executable(${target} ${src})
    target_link_libraries(${target} PRIVATE fuzz_common)
    target_link_options(${target} PRIVATE -fsanitize=fuzzer)
    set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/fuzz)
    add_dependencies(fuzz_targets ${target})
    add_test(NAME fuzz.${name}
      COMMAND bash ${FB_FUZZ_DIR}/run_fuzz.sh ${name} ${FEEDBENCH_FUZZ_SMOKE_SECONDS} smoke)
    set_tests_properties(fuzz.${name} PROPERTIES LABELS fuzz
      TIMEOUT 300 ENVIRONMENT "FEEDBENCH_BUILD_DIR=${PROJECT_BINARY_DIR};FEEDBENCH_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
  endforeach()
endif()
