# The S3 back-end (bench/storage/s3.c) without the lab: moto's S3 server on 127.0.0.1, started
# by the fixture test s3.moto_start and stopped by s3.moto_stop (tests/s3/moto.sh), in the venv
# tests/interop/setup_venv_s3.sh makes (s3.venv). Each case runs 2-rank feedbench runs against
# it in a bucket of its own (tests/s3/s3.sh). Label `s3`; skipped (77) when s3 is not built.
set(FB_S3_DIR ${CMAKE_CURRENT_LIST_DIR})

add_test(NAME s3.venv
  COMMAND sh ${PROJECT_SOURCE_DIR}/tests/interop/setup_venv_s3.sh ${PROJECT_BINARY_DIR})
set_tests_properties(s3.venv PROPERTIES FIXTURES_SETUP s3_venv LABELS s3 TIMEOUT 900)
add_test(NAME s3.moto_start COMMAND bash ${FB_S3_DIR}/moto.sh start ${PROJECT_BINARY_DIR})
set_tests_properties(s3.moto_start PROPERTIES
  FIXTURES_SETUP s3_moto FIXTURES_REQUIRED s3_venv LABELS s3 TIMEOUT 60)
add_test(NAME s3.moto_stop COMMAND bash ${FB_S3_DIR}/moto.sh stop ${PROJECT_BINARY_DIR})
set_tests_properties(s3.moto_stop PROPERTIES FIXTURES_CLEANUP s3_moto LABELS s3 TIMEOUT 30)

function(fb_s3_test name)
  add_test(NAME s3.${name} COMMAND bash ${FB_S3_DIR}/s3.sh ${ARGN})
  set_tests_properties(s3.${name} PROPERTIES
    FIXTURES_REQUIRED "s3_venv;s3_moto" LABELS "s3;mpi" TIMEOUT 120 SKIP_RETURN_CODE 77
    ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
endfunction()

fb_s3_test(raw train raw:per_rank raw:shared)
fb_s3_test(formats train npy:per_rank tfrecord:shared wds:shared)
fb_s3_test(workloads workloads)
fb_s3_test(interop interop)
fb_s3_test(auth auth)
fb_s3_test(transport transport)
fb_s3_test(faults faults)
