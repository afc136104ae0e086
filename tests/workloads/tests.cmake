# The shipped DLIO / MLPerf Storage workloads (configs/workloads/): one ctest each, label
# `workloads` (not `mpi`: the sanitizer run of make test leaves them out, they add no code
# path of their own): validates at full size, runs scaled down by --set on 2 ranks.
file(GLOB FB_WORKLOADS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/configs/workloads/*.ini)
# ior.ini and mdtest.ini are not DLIO workloads: tests/ior/ runs them.
list(FILTER FB_WORKLOADS EXCLUDE REGEX "/(ior|mdtest)\\.ini$")
foreach(ini ${FB_WORKLOADS})
  get_filename_component(name ${ini} NAME_WE)
  add_test(NAME workloads.${name} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/workloads.sh ${name})
  set_tests_properties(workloads.${name} PROPERTIES
    LABELS workloads TIMEOUT 120 ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
endforeach()
