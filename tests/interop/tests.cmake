# Interop tests: files feedbench writes are opened by the real tools (numpy, tarfile,
# webdataset, h5py, a TFRecord reader); files those tools write are read by feedbench.
# pytest runs in a virtual environment under the build folder (${PROJECT_BINARY_DIR}/venv),
# made once by setup_venv_interop.sh (setup_venv.sh) in the fixture test interop.venv. Every interop test lists
# FIXTURES_REQUIRED interop_venv and runs through run_pytest.sh. When pip cannot install the
# packages interop.venv fails (and ctest does not run the tests that need it): a machine
# without them is not a pass.
set(FB_INTEROP_DIR ${CMAKE_CURRENT_LIST_DIR})

add_test(NAME interop.venv
  COMMAND sh ${FB_INTEROP_DIR}/setup_venv_interop.sh ${PROJECT_BINARY_DIR})
set_tests_properties(interop.venv PROPERTIES
  FIXTURES_SETUP interop_venv LABELS interop TIMEOUT 900)

# fb_interop_test(name test_file.py): one ctest per pytest file.
function(fb_interop_test name file)
  add_test(NAME interop.${name}
    COMMAND sh ${FB_INTEROP_DIR}/run_pytest.sh ${PROJECT_BINARY_DIR} ${FB_INTEROP_DIR}/${file})
  set_tests_properties(interop.${name} PROPERTIES
    FIXTURES_REQUIRED interop_venv LABELS "interop;mpi" TIMEOUT 300
    ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
endfunction()

fb_interop_test(npy test_npy.py)
fb_interop_test(npz test_npz.py)
fb_interop_test(wds test_wds.py)
# hdf5 / tfrecord
fb_interop_test(hdf5 test_hdf5.py)
fb_interop_test(tfrecord test_tfrecord.py)
# parquet (pyarrow)
fb_interop_test(parquet test_parquet.py)
# jpeg / png (PIL)
if(FEEDBENCH_HAVE_TURBOJPEG AND FEEDBENCH_HAVE_SPNG)
  fb_interop_test(image test_image.py)
endif()
# zarr (zarr-python 3: v2 and v3 arrays)
fb_interop_test(zarr test_zarr.py)
# mds (MosaicML Streaming): its own venv on Debian's torch (setup_venv_mds.sh); skipped (77)
# where python3-torch and python3-torchvision are not installed
add_test(NAME interop.mds
  COMMAND sh -c "sh '${FB_INTEROP_DIR}/setup_venv_mds.sh' '${PROJECT_BINARY_DIR}' || exit $?; mkdir -p '${PROJECT_BINARY_DIR}/tmp/interop' && exec '${PROJECT_BINARY_DIR}/venv-mds/bin/python' -m pytest -q -p no:cacheprovider -o console_output_style=classic --basetemp='${PROJECT_BINARY_DIR}/tmp/interop/test_mds' '${FB_INTEROP_DIR}/test_mds.py'")
set_tests_properties(interop.mds PROPERTIES
  LABELS "interop;mpi" TIMEOUT 600 SKIP_RETURN_CODE 77 ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
