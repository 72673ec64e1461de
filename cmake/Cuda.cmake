# The CUDA build (-DATTNBENCH_CUDA=ON; docs/toolchain.md, "CUDA build"): the same sources against the
# LibTorch inside the PyPI torch 2.11.0 wheel (CUDA 13.0), unpacked by scripts/fetch-torch.
# Included by Dependencies.cmake before find_package(Torch); attnbench_cuda_check_torch() runs after.

set(ATTNBENCH_TORCH_ROOT "${PROJECT_SOURCE_DIR}/.deps/torch-2.11.0-cu130/torch" CACHE PATH
    "The torch/ folder of the unpacked torch wheel (scripts/fetch-torch)")
get_filename_component(ATTNBENCH_TORCH_ROOT "${ATTNBENCH_TORCH_ROOT}" ABSOLUTE)
if(NOT EXISTS "${ATTNBENCH_TORCH_ROOT}/share/cmake/Torch/TorchConfig.cmake")
  message(FATAL_ERROR "ATTNBENCH_CUDA: no LibTorch in ATTNBENCH_TORCH_ROOT=${ATTNBENCH_TORCH_ROOT}. "
                      "Run scripts/fetch-torch, or point ATTNBENCH_TORCH_ROOT at a pip torch's torch/ folder.")
endif()

# Torch_DIR alone is not enough: TorchConfig finds Caffe2 with PATHS, searched after the system
# prefixes, so Debian's Caffe2 1.13 config would be picked up and the build would silently mix 1.13
# and 2.11. The prefix path puts the wheel first for both.
list(PREPEND CMAKE_PREFIX_PATH "${ATTNBENCH_TORCH_ROOT}")
set(Torch_DIR "${ATTNBENCH_TORCH_ROOT}/share/cmake/Torch" CACHE PATH "" FORCE)
set(Caffe2_DIR "${ATTNBENCH_TORCH_ROOT}/share/cmake/Caffe2" CACHE PATH "" FORCE)

# Without a GPU to look at, Caffe2 targets eleven architectures and nvcc 13 fails on compute_50.
# The GPU machines are H100/H200 (sm_90a). Caffe2 reads this before it enables CUDA (it ignores
# CMAKE_CUDA_ARCHITECTURES).
set(TORCH_CUDA_ARCH_LIST "9.0a" CACHE STRING "CUDA architectures for nvcc (H100/H200: 9.0a)")

if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
  find_program(ATTNBENCH_NVCC nvcc PATHS /usr/local/cuda/bin NO_CACHE)
  if(NOT ATTNBENCH_NVCC)
    message(FATAL_ERROR "ATTNBENCH_CUDA: nvcc not found (on PATH or in /usr/local/cuda/bin)")
  endif()
  set(CMAKE_CUDA_COMPILER "${ATTNBENCH_NVCC}")
endif()
# Every kernel of ours must keep its state in registers and shared memory: ptxas reports each
# kernel's registers, spills and stack (-v, in the build log) and fails the build on a register
# spill or any local memory (a kernel that spills runs at a fraction of its speed, and the build
# machine has no GPU to notice). tests/kernels/cuda/ptxas_checks.sh shows these flags reject both.
set(ATTNBENCH_PTXAS_CHECKS "-Xptxas=-v,-warn-spills,-warn-lmem-usage,-Werror")
# LibTorch links the shared cudart; two runtimes in one process do not share a context.
set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
set(CMAKE_CUDA_STANDARD 17)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
enable_language(CUDA)
# enable_language defaults CMAKE_CUDA_ARCHITECTURES to nvcc's (75); Caffe2 warns on any value and
# passes its own -gencode flags. attnbench_cuda_check_torch() sets it OFF for our targets.
unset(CMAKE_CUDA_ARCHITECTURES CACHE)
unset(CMAKE_CUDA_ARCHITECTURES)

# After find_package(Torch): fail loudly on a mixed or CPU-only LibTorch. A macro: it sets
# CMAKE_CUDA_ARCHITECTURES in the caller's scope.
macro(attnbench_cuda_check_torch)
  set(CMAKE_CUDA_ARCHITECTURES OFF)  # the architectures come from TORCH_CUDA_ARCH_LIST's -gencode
  # caffe2::mkl adds $MKL_ROOT/lib/intel64... as link folders (run paths), with MKL_ROOT empty: the
  # wheel has MKL linked into libtorch_cpu.so.
  if(TARGET caffe2::mkl AND NOT MKL_ROOT)
    set_property(TARGET caffe2::mkl PROPERTY INTERFACE_LINK_DIRECTORIES "")
  endif()
  get_filename_component(_ab_root "${ATTNBENCH_TORCH_ROOT}" REALPATH)
  foreach(_ab_var Torch_DIR Caffe2_DIR)
    get_filename_component(_ab_dir "${${_ab_var}}" REALPATH)
    string(FIND "${_ab_dir}/" "${_ab_root}/" _ab_at)
    if(NOT _ab_at EQUAL 0)
      message(FATAL_ERROR "ATTNBENCH_CUDA: ${_ab_var}=${${_ab_var}} lies outside the wheel's LibTorch "
                          "(${ATTNBENCH_TORCH_ROOT}): the build would mix two LibTorch versions")
    endif()
  endforeach()
  if(NOT TARGET torch_cuda OR NOT EXISTS "${ATTNBENCH_TORCH_ROOT}/lib/libtorch_cuda.so")
    message(FATAL_ERROR "ATTNBENCH_CUDA: ${ATTNBENCH_TORCH_ROOT} is a LibTorch without CUDA "
                        "(no torch_cuda library)")
  endif()
  file(STRINGS "${ATTNBENCH_TORCH_ROOT}/include/torch/headeronly/version.h" _ab_v
       REGEX "#define TORCH_VERSION_(MAJOR|MINOR|PATCH) ")
  string(REGEX REPLACE "[^;]*_(MAJOR|MINOR|PATCH) ([0-9]+)" "\\2" _ab_v "${_ab_v}")
  string(REPLACE ";" "." _ab_v "${_ab_v}")
  message(STATUS "attnbench: CUDA build against LibTorch ${_ab_v} in ${ATTNBENCH_TORCH_ROOT}, nvcc ${CMAKE_CUDA_COMPILER_VERSION}, TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST}")

  # The wheel is built with the C++11 ABI (its symbols carry [abi:cxx11]; TorchConfig no longer says
  # so in TORCH_CXX_FLAGS). Our objects must use the same one.
  include(CheckCXXSourceCompiles)
  check_cxx_source_compiles("#include <string>
    #if !_GLIBCXX_USE_CXX11_ABI
    #error old ABI
    #endif
    int main() { return 0; }" ATTNBENCH_CXX11_ABI)
  if(NOT ATTNBENCH_CXX11_ABI)
    message(FATAL_ERROR "ATTNBENCH_CUDA: the compiler does not use the C++11 ABI "
                        "(_GLIBCXX_USE_CXX11_ABI=1) that the torch wheel is built with")
  endif()
endmacro()

# TorchConfig looks for a separate libkineto and warns when there is none: the wheel links it into
# libtorch_cpu.so. Naming that file answers its find_library (only TORCH_LIBRARIES, which we do not
# use, sees it).
set(kineto_LIBRARY "${ATTNBENCH_TORCH_ROOT}/lib/libtorch_cpu.so")

add_compile_definitions(ATTNBENCH_CUDA=1)
