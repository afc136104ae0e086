# Lab tests (label `lab`): a single-machine CephFS whose OSDs sit behind their own
# rate-limited links, and two emulated hosts (network namespaces) with their own ceph-fuse
# clients. lab.up starts it (fixture setup), lab.down stops it (fixture cleanup, run even when
# a test failed). Where the lab cannot start (not root, no /dev/fuse, no network namespaces,
# packages missing: `make lab-deps`) every lab test is SKIPPED with the reason. RUN_SERIAL:
# the ratios they check need the machine's cores. The lab's id comes from the build folder, so
# two build trees never share one.
set(FB_LABTEST ${CMAKE_CURRENT_LIST_DIR}/labtest.sh)
string(SHA1 fb_lab_hash "${PROJECT_BINARY_DIR}")
string(SUBSTRING "${fb_lab_hash}" 0 6 fb_lab_id)
set(FB_LAB_ENV ${FEEDBENCH_TEST_ENV} FEEDBENCH_LAB_ID=${fb_lab_id}
  FEEDBENCH_LAB_DIR=/tmp/feedbench-lab-${fb_lab_id} FEEDBENCH_LAB_TTL=900)

function(fb_lab_test name timeout)
  add_test(NAME lab.${name} COMMAND bash ${FB_LABTEST} ${name})
  set_tests_properties(lab.${name} PROPERTIES LABELS lab TIMEOUT ${timeout} RUN_SERIAL TRUE
    SKIP_RETURN_CODE 77 ENVIRONMENT "${FB_LAB_ENV}")
  if(NOT name STREQUAL "up" AND NOT name STREQUAL "down")
    set_tests_properties(lab.${name} PROPERTIES FIXTURES_REQUIRED lab)
  endif()
endfunction()

fb_lab_test(up 120)
set_tests_properties(lab.up PROPERTIES FIXTURES_SETUP lab)
fb_lab_test(down 60)
set_tests_properties(lab.down PROPERTIES FIXTURES_CLEANUP lab)
fb_lab_test(stripe 180)
fb_lab_test(small 120)
fb_lab_test(hosts 180)
fb_lab_test(srun 180)
fb_lab_test(formats 180)
# S3 on the lab's radosgw: one object over the 4 shaped OSDs read by a whole-object GET and by
# 8 ranged GETs in flight, against the prediction from the placement read back.
fb_lab_test(s3_physics 180)
# feedbench with backend = s3 on radosgw: training reads generated, verified and read again
# from 2 hosts x 2 ranks (tests/lab/s3_train_lab.py); SKIPPED where s3 is not built.
fb_lab_test(s3_train 240)

# Multi-host result fields on 2 emulated hosts x 2 ranks (nodes, hosts, local ranks, per-node
# bandwidth, eviction once per node) and a host dying mid-run (tests/lab/nodes_lab.sh).
add_test(NAME lab.nodes COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/nodes_lab.sh)
set_tests_properties(lab.nodes PROPERTIES LABELS lab TIMEOUT 180 RUN_SERIAL TRUE
  SKIP_RETURN_CODE 77 ENVIRONMENT "${FB_LAB_ENV}" FIXTURES_REQUIRED lab)
