# Tests of the CUDA compute plug-in.
#
# Label gpu: they need a device. Where none answers they exit 77 and ctest reports them as
# skipped (never as passed). On a GPU machine: tests/gpu/run.sh, or `ctest -L gpu` in a build
# made with `cmake --preset cuda`.
# Label accel: the CPU side, which runs everywhere (CI included): with the device hidden, or
# the plug-in not built, accelerator = auto falls back to the CPU emulation and says so, and
# accelerator = cuda exits 2 with the reason.
set(FB_GPU_DIR ${CMAKE_CURRENT_LIST_DIR})

# RESOURCE_LOCK: under `ctest -j` two GPU tests at once would time-slice the device and spoil
# each other's timings.
function(fb_gpu_test name label)
  set(env ${FEEDBENCH_TEST_ENV} ${ARGN})
  set_tests_properties(${name} PROPERTIES
    LABELS ${label} SKIP_RETURN_CODE 77 TIMEOUT 180 ENVIRONMENT "${env}")
  if(label STREQUAL "gpu")
    set_tests_properties(${name} PROPERTIES RESOURCE_LOCK gpu)
  endif()
endfunction()

if(FEEDBENCH_HAVE_CUDA)
  add_executable(test_gpu_cuda ${FB_GPU_DIR}/test_cuda.c)
  target_link_libraries(test_gpu_cuda PRIVATE feedbench_core)
  target_compile_options(test_gpu_cuda PRIVATE ${FEEDBENCH_WARNINGS})
  set(FB_GPU_PROBE TEST_GPU_CUDA=$<TARGET_FILE:test_gpu_cuda>)

  foreach(mode calibration checksum pinned pageable)
    add_test(NAME gpu.cuda_${mode} COMMAND test_gpu_cuda ${mode})
    fb_gpu_test(gpu.cuda_${mode} gpu)
  endforeach()
  foreach(mode auto quickstart)
    add_test(NAME gpu.feedbench_${mode} COMMAND sh ${FB_GPU_DIR}/accel.sh ${mode})
    fb_gpu_test(gpu.feedbench_${mode} gpu ${FB_GPU_PROBE} FEEDBENCH_HAVE_CUDA=1)
  endforeach()

  # CUDA_VISIBLE_DEVICES=-1 hides every device, so these run the same with or without a GPU.
  add_test(NAME accel.cuda_nodevice COMMAND test_gpu_cuda nodevice)
  fb_gpu_test(accel.cuda_nodevice accel CUDA_VISIBLE_DEVICES=-1)
  add_test(NAME accel.fallback COMMAND sh ${FB_GPU_DIR}/accel.sh fallback)
  fb_gpu_test(accel.fallback accel CUDA_VISIBLE_DEVICES=-1 FEEDBENCH_HAVE_CUDA=1)
else()
  add_test(NAME gpu.cuda_not_built
    COMMAND sh -c "echo \"CUDA plug-in not built ($1)\"; exit 77" sh "${FEEDBENCH_CUDA_WHY}")
  fb_gpu_test(gpu.cuda_not_built gpu)
  add_test(NAME accel.fallback COMMAND sh ${FB_GPU_DIR}/accel.sh fallback)
  fb_gpu_test(accel.fallback accel FEEDBENCH_HAVE_CUDA=0)
endif()
