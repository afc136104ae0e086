# Format tests: real mpiexec runs of tests/formats/check_formats.py (Python standard library
# only) on the small configs in configs/formats/. Each format x access mode is generated,
# read for 2 epochs at 4 ranks and verified; corruption (a flipped payload byte, and each
# format's own damage) must end the run with exit 1 naming the file and the offset.
# Without Python the tests fail (make deps installs python3); they never silently disappear.
find_package(Python3 COMPONENTS Interpreter)
if(NOT Python3_Interpreter_FOUND)
  set(Python3_EXECUTABLE python3)
endif()
set(FB_FORMATS_PY ${CMAKE_CURRENT_LIST_DIR}/check_formats.py)

function(fb_format_test name timeout)
  add_test(NAME formats.${name} COMMAND ${Python3_EXECUTABLE} ${FB_FORMATS_PY} ${ARGN})
  set_tests_properties(formats.${name} PROPERTIES
    LABELS "formats;mpi" TIMEOUT ${timeout} ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
endfunction()

# npy / npz / wds
fb_format_test(npy_per_rank 120 matrix npy per_rank 4)
fb_format_test(npz_per_rank 120 matrix npz per_rank 4)
fb_format_test(npz_shared 120 matrix npz shared 4)
fb_format_test(npz_shared_whole 120 matrix npz shared 4 format.npz.read=whole)
fb_format_test(wds_per_rank 120 matrix wds per_rank 4)
fb_format_test(wds_shared 120 matrix wds shared 4)
fb_format_test(wds_no_shuffle 120 matrix wds per_rank 4 reader.sample_shuffle=off
               storage.transfer_size=4KiB)
fb_format_test(npy_shared_refused 60 refuse npy shared
               "format npy cannot be read with file_access = shared: npy stores one sample per file")
fb_format_test(npy_corrupt 120 corrupt npy)
fb_format_test(npz_corrupt 120 corrupt npz)
fb_format_test(wds_corrupt 120 corrupt wds)

# mds (MosaicML Streaming shards)
fb_format_test(mds_per_rank 120 matrix mds per_rank 4)
fb_format_test(mds_shared 120 matrix mds shared 4)
fb_format_test(mds_corrupt 120 corrupt mds)

# jpeg / png: decoded on every read; verify = true checks the decoded pixels
if(FEEDBENCH_HAVE_TURBOJPEG)
  fb_format_test(jpeg_per_rank 120 matrix jpeg per_rank 4)
  # shared access is refused as for npy; this one needs the decoded pixels to verify
  fb_format_test(jpeg_verify_needs_decode 60 refuse jpeg per_rank
                 "verify = true checks the decoded pixels of format jpeg" format.image.decode=false)
  fb_format_test(jpeg_corrupt 120 corrupt jpeg)
endif()
if(FEEDBENCH_HAVE_SPNG)
  fb_format_test(png_per_rank 120 matrix png per_rank 4)
  fb_format_test(png_corrupt 120 corrupt png)
endif()

# Files crafted to break readers' arithmetic: exit 1 with the format's message, no crash.
foreach(kind pax tfidx)
  add_test(NAME formats.hostile_${kind}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/hostile.py ${kind})
  set_tests_properties(formats.hostile_${kind} PROPERTIES
    LABELS "formats;mpi" TIMEOUT 90 ENVIRONMENT "${FEEDBENCH_TEST_ENV}")
endforeach()

# hdf5 / tfrecord (their corruption cases need h5py: tests/interop/test_{hdf5,tfrecord}.py)
fb_format_test(hdf5_per_rank 120 matrix hdf5 per_rank 4)
fb_format_test(hdf5_shared 120 matrix hdf5_shared shared 4)
fb_format_test(hdf5_shared_variable 120 matrix hdf5 shared 4)
fb_format_test(hdf5_collective 120 matrix hdf5_collective shared 4)
fb_format_test(hdf5_collective_variable 120 matrix hdf5 shared 4 format.hdf5.transfer=collective)
fb_format_test(tfrecord_per_rank 120 matrix tfrecord per_rank 4)
fb_format_test(tfrecord_shared 120 matrix tfrecord_shared shared 4)
# parquet (interop and refusals of what it does not read: tests/interop/test_parquet.py)
fb_format_test(parquet_per_rank 120 matrix parquet per_rank 4)
fb_format_test(parquet_shared 120 matrix parquet shared 4 format.parquet.compression=zstd)
fb_format_test(parquet_corrupt 120 corrupt parquet)
# zarr (zarr-python interop and refusals: tests/interop/test_zarr.py)
fb_format_test(zarr_per_rank 120 matrix zarr per_rank 4)
fb_format_test(zarr_shared_v2 120 matrix zarr shared 4 format.zarr.version=2
               format.zarr.shard_chunks=0 format.zarr.crc32c=false format.zarr.codec=zstd)
fb_format_test(zarr_corrupt 120 corrupt zarr)
fb_format_test(tfrecord_mpiio_collective 120 matrix tfrecord shared 4 storage.backend=mpiio
               storage.mpiio.collective=true)
