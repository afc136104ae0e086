# Config and command-line errors (docs/failures.md 1-8, 24) through the real binary: one ctest per
# file in tests/configs/bad/ (each says in its comments what exit status and message it owes),
# a few generated files git would mangle (NUL bytes, CRLF, empty), and the usage errors and
# informational commands of the CLI. Label `configs`; the ones that start mpiexec also `mpi`.
set(FB_CONFIG_SH ${CMAKE_CURRENT_LIST_DIR}/check_config.sh)
set(FB_CLI_SH ${CMAKE_CURRENT_LIST_DIR}/cli.sh)

file(GLOB FB_BAD_CONFIGS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/bad/*.ini)
foreach(ini ${FB_BAD_CONFIGS})
  get_filename_component(name ${ini} NAME_WE)
  add_test(NAME configs.${name} COMMAND bash ${FB_CONFIG_SH} ${ini})
  file(STRINGS ${ini} ranks_line REGEX "^; ranks:")
  if(ranks_line)
    set(labels "configs;mpi")
  else()
    set(labels "configs")
  endif()
  set_tests_properties(configs.${name} PROPERTIES
    LABELS "${labels}" TIMEOUT 60 ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
endforeach()

foreach(case nul_byte empty crlf crlf_error_line missing_file)
  add_test(NAME configs.generated_${case} COMMAND bash ${FB_CONFIG_SH} --generated ${case})
  set_tests_properties(configs.generated_${case} PROPERTIES
    LABELS configs TIMEOUT 60 ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
endforeach()

foreach(case no_arguments unknown_command missing_config config_not_found unknown_option
             extra_argument unknown_set_key set_bad_value set_applies keys list help version
             subcommand_help effective_roundtrip)
  add_test(NAME cli.${case} COMMAND bash ${FB_CLI_SH} ${case})
  set_tests_properties(cli.${case} PROPERTIES
    LABELS "configs;cli" TIMEOUT 60 ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
endforeach()
foreach(case validate_mpi accelerator_once readme_mpiexec)
  add_test(NAME cli.${case} COMMAND bash ${FB_CLI_SH} ${case})
  set_tests_properties(cli.${case} PROPERTIES
    LABELS "configs;cli;mpi" TIMEOUT 60 ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
endforeach()
