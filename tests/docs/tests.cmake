# The shell commands of README.md and the task guides (docs/guide-*.md) run as written, or are
# checked with validate / --dry-run where their block is marked long or cluster
# (tests/docs/commands.py). Label `docs`.
add_test(NAME docs.commands COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/commands.py)
set_tests_properties(docs.commands PROPERTIES LABELS docs TIMEOUT 300
  ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
