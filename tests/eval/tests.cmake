# The evaluation phase ([dataset] num_files_eval, [evaluation]): exact evaluation bytes and
# samples per pass on 2 ranks, the passes epochs_between_evals and eval_after_epoch ask for, DLIO's
# valid/ layout generated then found again with generate = never, bad values refused, and
# report.md's evaluation rows (tests/report/check_report.py).
# Label mpi (real mpiexec runs of tests/eval/eval.sh on tests/mpi/tiny.ini).
foreach(case bytes_per_rank bytes_shared after_epoch valid_layout bad_values)
  add_test(NAME eval.${case} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/eval.sh ${case})
  set_tests_properties(eval.${case} PROPERTIES
    LABELS mpi TIMEOUT 60 ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
endforeach()
