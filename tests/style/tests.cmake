# Formatting is automatic (.clang-format); CI checks it.
# Without clang-format the test fails (make deps installs it); it never silently disappears.
find_program(CLANG_FORMAT clang-format)
if(NOT CLANG_FORMAT)
  set(CLANG_FORMAT clang-format)
endif()
add_test(NAME style.clang_format
  COMMAND sh -c "cd ${PROJECT_SOURCE_DIR} && git ls-files '*.c' '*.h' '*.cu' | xargs ${CLANG_FORMAT} --dry-run -Werror")
set_tests_properties(style.clang_format PROPERTIES LABELS style TIMEOUT 120)

# Every document a file names is in the repository; no issue numbers (tests/style/refs.sh).
add_test(NAME style.refs COMMAND ${PROJECT_SOURCE_DIR}/tests/style/refs.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(style.refs PROPERTIES LABELS style TIMEOUT 60)

# Which file calls which, read from the core library's object files with nm: no loop, no arrow
# docs/architecture.md forbids (tests/style/deps.py). Needs the library built first.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
add_test(NAME style.deps
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/style/deps.py
          ${CMAKE_BINARY_DIR}/CMakeFiles/feedbench_core.dir ${PROJECT_SOURCE_DIR})
set_tests_properties(style.deps PROPERTIES LABELS style TIMEOUT 60)

# Sizes of the C sources in bench/, workloads/, formats/ (tests/style/counts.py): printed, and
# no file over 1 200 lines, no function over 100, at most 15 over 80 (its defaults, no allowance).
add_test(NAME style.counts
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/style/counts.py ${PROJECT_SOURCE_DIR})
set_tests_properties(style.counts PROPERTIES LABELS style TIMEOUT 60)
