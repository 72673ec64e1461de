# The libraries, one per area of DESIGN.md's layout. Sources are globbed so that a new variant, task,
# command or output format is one new file and nothing else changes.
#
# attnbench_library(NAME DIR <dir>... [TORCH] [DEPS <targets>...] [WHOLE <targets>...])
#   TORCH: the sources include torch headers (links torch, reuses the shared PCH)
#   WHOLE: static libraries whose objects self-register: linked whole (--whole-archive), so the
#          linker never drops a registration nobody references (DESIGN.md, variant registry).
function(attnbench_library name)
  cmake_parse_arguments(A "TORCH" "" "DIR;DEPS;WHOLE" ${ARGN})
  set(srcs)
  foreach(d ${A_DIR})
    file(GLOB s CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${d}/*.cpp)
    list(APPEND srcs ${s})
  endforeach()
  if(NOT srcs)  # an area with no code yet still links
    set(srcs ${PROJECT_SOURCE_DIR}/cmake/pch.cpp)
  endif()
  add_library(${name} STATIC ${srcs})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${A_DEPS})
  foreach(w ${A_WHOLE})
    target_link_libraries(${name} PUBLIC "$<LINK_LIBRARY:WHOLE_ARCHIVE,${w}>")
  endforeach()
  if(A_TORCH)
    attnbench_use_torch(${name})
  endif()
  attnbench_warnings(${name})
endfunction()

# Leaves: no torch, compile in about a second each.
attnbench_library(ab_common  DIR harness/common
                  DEPS fmt::fmt nlohmann_json::nlohmann_json Threads::Threads OpenSSL::Crypto)
attnbench_library(ab_config  DIR harness/config
                  DEPS ab_common tomlplusplus::tomlplusplus PkgConfig::XXHASH)
attnbench_library(ab_results DIR results DEPS ab_common SQLite::SQLite3)
# The results table's formats self-register (results/table.h): linked whole by their users.
attnbench_library(ab_table_formats DIR results/formats DEPS ab_results)
attnbench_library(ab_text    DIR harness/data
                  DEPS ab_common PkgConfig::PCRE2 PkgConfig::ZSTD ZLIB::ZLIB PkgConfig::CURL)
attnbench_library(ab_task_registry DIR evals/tasks DEPS ab_text)

# Torch layers, bottom up.
# kernels/cpu self-registers its fused kernel, so it is linked whole into the variants.
attnbench_library(ab_kernels_cpu DIR kernels/cpu TORCH DEPS ab_common)
attnbench_library(ab_kernels  DIR kernels TORCH DEPS ab_common WHOLE ab_kernels_cpu)
attnbench_library(ab_variant_impls DIR variants TORCH DEPS ab_config ab_kernels)
attnbench_library(ab_model    DIR harness/model TORCH DEPS ab_config WHOLE ab_variant_impls)
attnbench_library(ab_train    DIR harness/train TORCH DEPS ab_model ab_text ab_results)
attnbench_library(ab_evals    DIR evals evals/diagnostics TORCH
                  DEPS ab_model ab_text ab_results PkgConfig::STB WHOLE ab_task_registry)
attnbench_library(ab_sweep    DIR harness/sweep TORCH DEPS ab_train ab_evals ab_results
                  WHOLE ab_table_formats)

file(GLOB cli_srcs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/harness/cli/*.cpp)
# Commands that include nothing from the torch layers (only harness/cli/command.h and the torch-free
# leaves above) skip the torch PCH: with it each took ~20 s to compile, without it a few (CLI11 and
# fmt alone), which the quickstart's first build on 2 cores feels. Decided when CMake runs.
foreach(src ${cli_srcs})
  file(STRINGS ${src} includes REGEX "^#include")
  set(torch_free TRUE)
  foreach(line ${includes})
    if(line MATCHES "<(torch|ATen|c10)/" OR (line MATCHES "\"" AND NOT line MATCHES
       "\"(harness/(common|config|data)/|results/|evals/tasks/|harness/cli/command\\.h)"))
      set(torch_free FALSE)
    endif()
  endforeach()
  if(torch_free)
    set_source_files_properties(${src} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
  endif()
endforeach()
add_executable(attnbench ${cli_srcs})
target_link_libraries(attnbench PRIVATE ab_sweep CLI11::CLI11)
attnbench_use_torch(attnbench)
attnbench_warnings(attnbench)
attnbench_executable(attnbench)
target_compile_definitions(attnbench PRIVATE ATTNBENCH_VERSION="${PROJECT_VERSION}")

if(ATTNBENCH_CUDA)
  include(cmake/Cuda.cmake)
endif()
