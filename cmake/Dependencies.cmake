# Every dependency is a Debian package (scripts/setup installs them); nothing is downloaded here.
# The one exception is the CUDA build's LibTorch, the PyPI torch wheel that scripts/fetch-torch
# unpacks into .deps/ beforehand (cmake/Cuda.cmake).
# The sanitizer and fuzz builds (cmake/Sanitize.cmake) are torch-free: no LibTorch, no Gloo.
if(NOT ATTNBENCH_TORCH_FREE)
  if(ATTNBENCH_CUDA)
    include(${CMAKE_CURRENT_LIST_DIR}/Cuda.cmake)
  endif()
  find_package(Torch REQUIRED)
  if(ATTNBENCH_CUDA)
    attnbench_cuda_check_torch()
  endif()
  # Gloo's headers: c10d's ProcessGroupGloo.hpp includes them (data-parallel training on the CPU);
  # Debian's LibTorch links libgloo, the wheel has Gloo built in, neither ships the headers.
  find_path(GLOO_INCLUDE_DIR gloo/context.h)
  if(NOT GLOO_INCLUDE_DIR)
    message(FATAL_ERROR "Gloo's headers (gloo/context.h) not found: run scripts/setup (libgloo-dev)")
  endif()
endif()
find_package(tomlplusplus 3 REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(fmt REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(Threads REQUIRED)
find_package(ZLIB REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
# Unicode NFC for Hugging Face tokenizers' "NFC" normalizer (core/data/hf_normalizers.cpp).
pkg_check_modules(ICU REQUIRED IMPORTED_TARGET icu-uc)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
pkg_check_modules(CURL REQUIRED IMPORTED_TARGET libcurl)
# Heatmap PNGs (evals/diagnostics): Debian's libstb-dev ships stb_image_write compiled as libstb.so.
pkg_check_modules(STB REQUIRED IMPORTED_TARGET stb)
if(ATTNBENCH_TESTS)
  find_package(Catch2 2 REQUIRED)
endif()
if(ATTNBENCH_BENCH)
  find_package(benchmark REQUIRED)
endif()

# LibTorch must run on OpenBLAS built with OpenMP (docs/toolchain.md, "BLAS": the reference BLAS is
# ~100x slower, the pthread build 25-35% slower for training). Pin the openmp build through the run
# path, so the choice does not depend on which Debian alternative happens to be selected.
# The CUDA build's LibTorch (the wheel) has MKL linked in and needs no BLAS: its executables get a
# run path to the wheel's torch/lib instead (ATTNBENCH_RUNTIME_DIRS, used by attnbench_executable).
if(ATTNBENCH_CUDA)
  set(ATTNBENCH_RUNTIME_DIRS "${ATTNBENCH_TORCH_ROOT}/lib")
else()
  set(ATTNBENCH_OPENBLAS_DIR "/usr/lib/x86_64-linux-gnu/openblas-openmp" CACHE PATH
      "Folder with the OpenMP OpenBLAS libblas.so.3")
  if(NOT EXISTS "${ATTNBENCH_OPENBLAS_DIR}/libblas.so.3")
    message(WARNING "OpenBLAS (openmp) not found in ${ATTNBENCH_OPENBLAS_DIR}: LibTorch may fall back "
                    "to the reference BLAS, about 100x slower. Run scripts/setup.")
  endif()
  set(ATTNBENCH_RUNTIME_DIRS "${ATTNBENCH_OPENBLAS_DIR}")
endif()

# glibc malloc maps and unmaps the logits every step; tcmalloc gives +30-40% tokens/s
# (docs/toolchain.md, "malloc").
find_library(TCMALLOC_LIBRARY NAMES tcmalloc_minimal libtcmalloc_minimal.so.4
             PATHS /usr/lib/x86_64-linux-gnu)
if(NOT TCMALLOC_LIBRARY)
  message(WARNING "libtcmalloc_minimal not found: training will be 30-40% slower. Run scripts/setup.")
endif()
