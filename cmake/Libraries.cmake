# The libraries. Sources are globbed so that a new variant, task,
# command or output format is one new file and nothing else changes.
#
# attnbench_library(NAME DIR <dir>... [TORCH] [DEPS <targets>...] [WHOLE <targets>...])
#   TORCH: the sources include torch headers (links torch, reuses the shared PCH)
#   WHOLE: static libraries whose objects self-register: linked whole (--whole-archive), so the
#          linker never drops a registration nobody references (tests assert the full lists of registered names).
function(attnbench_library name)
  cmake_parse_arguments(A "TORCH" "" "DIR;DEPS;WHOLE" ${ARGN})
  set(srcs)
  foreach(d ${A_DIR})
    file(GLOB s CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${d}/*.cpp)
    list(APPEND srcs ${s})
    if(ATTNBENCH_CUDA)  # device code: .cu files, torch-free (docs/toolchain.md, "CUDA build")
      file(GLOB cu CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${d}/*.cu)
      set_source_files_properties(${cu} PROPERTIES SKIP_PRECOMPILE_HEADERS ON
                                                   SKIP_UNITY_BUILD_INCLUSION ON)
      list(APPEND srcs ${cu})
    endif()
  endforeach()
  if(NOT srcs)  # an area with no code yet still links
    set(srcs ${PROJECT_SOURCE_DIR}/cmake/pch.cpp)
  endif()
  add_library(${name} STATIC ${srcs})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  if(ATTNBENCH_CUDA)
    target_compile_options(${name} PRIVATE
                           "$<$<COMPILE_LANGUAGE:CUDA>:${ATTNBENCH_PTXAS_CHECKS}>")
  endif()
  target_link_libraries(${name} PUBLIC ${A_DEPS})
  foreach(w ${A_WHOLE})
    target_link_libraries(${name} PUBLIC "$<LINK_LIBRARY:WHOLE_ARCHIVE,${w}>")
  endforeach()
  if(A_TORCH)
    attnbench_use_torch(${name})
    attnbench_unity(${name})
  endif()
  attnbench_warnings(${name})
endfunction()

# One library per layer folder (docs/ARCHITECTURE.md; the order is declared in cmake/layers.txt and
# checked by scripts/check-layers): ab_<folder>, with '/' as '_'. A sub-folder gets a library of its
# own only when its objects self-register and must be linked whole.

# Torch-free layers: compile in about a second a file.
attnbench_library(ab_core DIR core/common core/config core/data
                  DEPS fmt::fmt nlohmann_json::nlohmann_json Threads::Threads OpenSSL::Crypto
                       tomlplusplus::tomlplusplus PkgConfig::XXHASH PkgConfig::PCRE2
                       PkgConfig::ICU PkgConfig::ZSTD ZLIB::ZLIB PkgConfig::CURL)
attnbench_library(ab_results DIR results DEPS ab_core SQLite::SQLite3)
attnbench_library(ab_results_formats DIR results/formats DEPS ab_results)
attnbench_library(ab_results_report DIR results/report DEPS ab_results)
attnbench_library(ab_evals_tasks DIR evals/tasks DEPS ab_core)
if(ATTNBENCH_TORCH_FREE)  # the sanitizer and fuzz builds (cmake/Sanitize.cmake) stop here
  return()
endif()

# Torch layers, bottom up.
attnbench_library(ab_kernels_cpu DIR kernels/cpu TORCH DEPS ab_core)
# kernels/cpu/row_reduce.cpp computes on 32-byte GCC vectors in functions compiled for baseline
# x86-64 too; GCC's note that passing such vectors without AVX changes the ABI (-Wpsabi) concerns
# calls across object files, which these file-local helpers never make.
target_compile_options(ab_kernels_cpu PRIVATE -Wno-psabi)
set(ab_kernels_whole ab_kernels_cpu)
if(ATTNBENCH_CUDA)  # kernels/cuda: the family on LibTorch's SDPA for CUDA tensors (docs/kernels.md)
  attnbench_library(ab_kernels_cuda DIR kernels/cuda TORCH DEPS ab_core)
  list(APPEND ab_kernels_whole ab_kernels_cuda)
endif()
attnbench_library(ab_kernels DIR kernels TORCH DEPS ab_core WHOLE ${ab_kernels_whole})
attnbench_library(ab_variants DIR variants TORCH DEPS ab_kernels)
attnbench_library(ab_model DIR model TORCH DEPS ab_core WHOLE ab_variants)
# model/pretrained: Hugging Face folders as models; its architectures and the model.init_from
# resolver register themselves.
attnbench_library(ab_model_pretrained DIR model/pretrained TORCH DEPS ab_model)
attnbench_library(ab_train DIR train TORCH DEPS ab_model WHOLE ab_model_pretrained)
# c10d's headers hide each backend behind a switch; both LibTorch builds ship Gloo, the CUDA one
# NCCL (docs/distributed.md). Set on the one file that includes them, so the shared PCH is reused.
set(_ab_c10d USE_C10D_GLOO)
if(ATTNBENCH_CUDA)
  list(APPEND _ab_c10d USE_C10D_NCCL)
endif()
set_source_files_properties(${PROJECT_SOURCE_DIR}/train/distributed.cpp PROPERTIES
                            COMPILE_DEFINITIONS "${_ab_c10d}")
target_include_directories(ab_train SYSTEM PRIVATE ${GLOO_INCLUDE_DIR})
attnbench_library(ab_evals DIR evals evals/diagnostics TORCH
                  DEPS ab_model ab_results PkgConfig::STB WHOLE ab_evals_tasks ab_model_pretrained)
attnbench_library(ab_harness_sweep DIR harness/sweep TORCH
                  DEPS ab_train ab_evals ab_results WHOLE ab_results_formats ab_results_report)

file(GLOB cli_srcs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/harness/cli/*.cpp)
# Commands that include nothing from the torch layers (only harness/cli/command.h and the torch-free
# leaves above) skip the torch PCH: with it each took ~20 s to compile, without it a few (CLI11 and
# fmt alone), which the quickstart's first build on 2 cores feels. Decided when CMake runs.
foreach(src ${cli_srcs})
  file(STRINGS ${src} includes REGEX "^#include")
  set(torch_free TRUE)
  foreach(line ${includes})
    if(line MATCHES "<(torch|ATen|c10)/" OR (line MATCHES "\"" AND NOT line MATCHES
       "\"(core/|results/|evals/tasks/|harness/cli/command\\.h)"))
      set(torch_free FALSE)
    endif()
  endforeach()
  if(torch_free)
    set_source_files_properties(${src} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
  endif()
endforeach()
add_executable(attnbench ${cli_srcs})
target_link_libraries(attnbench PRIVATE ab_harness_sweep CLI11::CLI11)
attnbench_use_torch(attnbench)
attnbench_unity(attnbench)
attnbench_warnings(attnbench)
attnbench_executable(attnbench)
target_compile_definitions(attnbench PRIVATE ATTNBENCH_VERSION="${PROJECT_VERSION}")

# The CUDA build compiles one torch-free probe kernel, so a broken nvcc / host compiler / architecture
# combination fails the build here rather than at the first real kernel.
if(ATTNBENCH_CUDA)
  add_library(attnbench_cuda_probe OBJECT ${PROJECT_SOURCE_DIR}/cmake/cuda_probe.cu)
  target_compile_options(attnbench_cuda_probe PRIVATE ${ATTNBENCH_PTXAS_CHECKS})
endif()
