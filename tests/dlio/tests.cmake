# `feedbench import-dlio`: DLIO's own workload YAMLs (tests/data/dlio/) converted and
# validated, unmapped keys explained by docs/dlio.md, YAML errors. Label `dlio` (and configs).
foreach(case shipped stdout_and_atomic yaml_error help eval checkpoint)
  add_test(NAME dlio.import_${case} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/import.sh ${case})
  set_tests_properties(dlio.import_${case} PROPERTIES
    LABELS "dlio;configs" TIMEOUT 60 ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
endforeach()
