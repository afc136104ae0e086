# The CUDA compute plug-in (bench/compute/cuda.cu), included by the top-level CMakeLists.txt.
#
# FEEDBENCH_CUDA = AUTO: build it when a CUDA compiler is found (check_language looks at
#                        CMAKE_CUDA_COMPILER, $CUDACXX, PATH; the presets pass /usr/local/cuda/bin/nvcc)
#                  ON:   the same, but a missing compiler or toolkit fails the configure step
#                  OFF:  never
# Sets FEEDBENCH_HAVE_CUDA (0/1) and FEEDBENCH_CUDA_WHY (why it was not built; shown by
# `feedbench list` and by accelerator = auto), and when built defines the static library
# feedbench_cuda that feedbench_core links.
#
# Build machines have no GPU, so the architectures are listed, never `native`: sm_80 (A100) and
# sm_90 (H100/H200) machine code plus compute_90 PTX, which newer GPUs JIT-compile. A user's
# CMAKE_CUDA_ARCHITECTURES (cache or -D) or $CUDAARCHS wins.

set(FEEDBENCH_HAVE_CUDA 0)
string(TOUPPER "${FEEDBENCH_CUDA}" _fb_cuda_mode)
if(NOT _fb_cuda_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "FEEDBENCH_CUDA='${FEEDBENCH_CUDA}': expected AUTO, ON or OFF")
endif()
if(_fb_cuda_mode STREQUAL "OFF")
  set(FEEDBENCH_CUDA_WHY "disabled at build time by FEEDBENCH_CUDA=OFF")
  message(STATUS "CUDA plug-in: ${FEEDBENCH_CUDA_WHY}")
  return()
endif()

# Reports why the plug-in is not built: fatal under ON, a status line under AUTO.
macro(_fb_cuda_not_built why)
  set(FEEDBENCH_CUDA_WHY "${why}")
  if(_fb_cuda_mode STREQUAL "ON")
    message(FATAL_ERROR "FEEDBENCH_CUDA=ON but ${why}. Set CMAKE_CUDA_COMPILER to nvcc "
                        "(e.g. -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc) or use "
                        "FEEDBENCH_CUDA=AUTO/OFF.")
  endif()
  message(STATUS "CUDA plug-in: not built (${why})")
  return()
endmacro()

# check_language() skips its test when CMAKE_CUDA_COMPILER is already set, as the presets do;
# a preset's /usr/local/cuda/bin/nvcc on a machine without CUDA would then fail the configure
# step in enable_language() even under AUTO. So a given compiler is tested too (through
# $CUDACXX, which the test honours), once per path.
include(CheckLanguage)
if(DEFINED CMAKE_CUDA_COMPILER AND NOT CMAKE_CUDA_COMPILER) # NOTFOUND from an earlier search
  unset(CMAKE_CUDA_COMPILER CACHE)
  unset(CMAKE_CUDA_COMPILER)
endif()
if(DEFINED CMAKE_CUDA_COMPILER AND NOT "${CMAKE_CUDA_COMPILER}" STREQUAL "${_FB_CUDA_CHECKED}")
  set(_fb_given "${CMAKE_CUDA_COMPILER}")
  set(_fb_cudacxx "$ENV{CUDACXX}")
  unset(CMAKE_CUDA_COMPILER CACHE)
  unset(CMAKE_CUDA_COMPILER)
  set(ENV{CUDACXX} "${_fb_given}")
  check_language(CUDA)
  set(ENV{CUDACXX} "${_fb_cudacxx}")
  if(NOT CMAKE_CUDA_COMPILER)
    # Keep the user's choice so that the next configure tries it again.
    set(CMAKE_CUDA_COMPILER "${_fb_given}" CACHE FILEPATH "CUDA compiler" FORCE)
    _fb_cuda_not_built("CUDA not found: CMAKE_CUDA_COMPILER=${_fb_given} is missing or does not work")
  endif()
  set(_FB_CUDA_CHECKED "${CMAKE_CUDA_COMPILER}" CACHE INTERNAL "CUDA compiler that passed the check")
elseif(NOT DEFINED CMAKE_CUDA_COMPILER)
  check_language(CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    _fb_cuda_not_built("CUDA not found: no nvcc in CMAKE_CUDA_COMPILER, CUDACXX or PATH")
  endif()
endif()

if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
  set(CMAKE_CUDA_ARCHITECTURES "80-real;90" CACHE STRING
      "CUDA architectures (80-real;90 = sm_80 and sm_90 code + compute_90 PTX)")
endif()
if(CMAKE_CUDA_ARCHITECTURES MATCHES "native")
  message(WARNING "CMAKE_CUDA_ARCHITECTURES=${CMAKE_CUDA_ARCHITECTURES}: 'native' needs a GPU "
                  "on the build machine; list architectures instead (e.g. 80-real;90)")
endif()
# cudart as a shared library everywhere (CUDA::cudart below); without this CMake would also add
# cudart_static to every executable that links the plug-in.
set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
set(CMAKE_CUDA_STANDARD 17)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
enable_language(CUDA)

find_package(CUDAToolkit)
if(NOT CUDAToolkit_FOUND OR NOT TARGET CUDA::cudart)
  _fb_cuda_not_built("CUDA toolkit (cudart) not found next to ${CMAKE_CUDA_COMPILER}")
endif()

add_library(feedbench_cuda STATIC ${CMAKE_CURRENT_SOURCE_DIR}/bench/compute/cuda.cu)
# The plug-in sees struct run, so it needs the core's headers and those they include (MPI,
# jansson); only their include folders, not the targets, whose compile options are for gcc.
target_include_directories(feedbench_cuda PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/bench ${CMAKE_CURRENT_BINARY_DIR}
  $<TARGET_PROPERTY:MPI::MPI_C,INTERFACE_INCLUDE_DIRECTORIES>
  $<TARGET_PROPERTY:PkgConfig::JANSSON,INTERFACE_INCLUDE_DIRECTORIES>)
# Open MPI's and MPICH's mpi.h pull in the C++ bindings when compiled as C++.
target_compile_definitions(feedbench_cuda PRIVATE OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
target_link_libraries(feedbench_cuda PUBLIC CUDA::cudart)
# The plug-in calls the core (fb_fail, run_warn) and the core's registry refers to the plug-in:
# a cycle of two static libraries, which CMake repeats on the link line. LINK_ONLY keeps the
# core's compile options (meant for gcc) away from nvcc.
set_property(TARGET feedbench_cuda APPEND PROPERTY INTERFACE_LINK_LIBRARIES
  $<LINK_ONLY:feedbench_core>)
# Executables find libcudart.so next to the toolkit that built them, even where the toolkit's
# folder is not in ld.so.conf.
if(CUDAToolkit_LIBRARY_DIR)
  target_link_options(feedbench_cuda INTERFACE "LINKER:-rpath,${CUDAToolkit_LIBRARY_DIR}")
endif()
set_target_properties(feedbench_cuda PROPERTIES
  POSITION_INDEPENDENT_CODE ON
  CUDA_SEPARABLE_COMPILATION OFF)

# nvcc takes its own warning flags; the host compiler's go through -Xcompiler. -Werror for CI
# covers both nvcc's front end (all-warnings) and the host pass. No -Wundef: CUDA's own
# headers test undefined macros in #if, and nvcc does not include them as system headers.
set(FEEDBENCH_CUDA_WARNINGS
  "-Xcompiler=-Wall,-Wextra,-Wshadow,-Wno-unused-parameter")
if(FEEDBENCH_WERROR)
  list(APPEND FEEDBENCH_CUDA_WARNINGS "--Werror=all-warnings" "-Xcompiler=-Werror")
endif()
target_compile_options(feedbench_cuda PRIVATE
  $<$<COMPILE_LANGUAGE:CUDA>:${FEEDBENCH_CUDA_WARNINGS}>)

set(FEEDBENCH_HAVE_CUDA 1)
set(FEEDBENCH_CUDA_WHY "")
message(STATUS "CUDA plug-in: built with nvcc ${CMAKE_CUDA_COMPILER_VERSION}, "
               "architectures ${CMAKE_CUDA_ARCHITECTURES}")
