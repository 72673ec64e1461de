# The torch-free builds with sanitizers (docs/reliability.md, "Fuzzing and sanitizers"), included by
# CMakeLists.txt instead of the normal build when one of these options is on:
#   ATTNBENCH_SANITIZE  ab_core, ab_results (with formats and report), ab_evals_tasks and their Catch2 tests
#                       under AddressSanitizer + UndefinedBehaviorSanitizer (scripts/sanitize)
#   ATTNBENCH_FUZZ      one libFuzzer executable per parser, tests/fuzz/<name>_fuzz.cpp, on the same
#                       libraries built with ASan + UBSan and libFuzzer's coverage (scripts/fuzz)
# Only torch-free code: an instrumented LibTorch does not exist here, and an uninstrumented one
# would hide nothing of ours that these builds look for (memory errors, UB in the parsers).
if(ATTNBENCH_SANITIZE AND ATTNBENCH_FUZZ)
  message(FATAL_ERROR "ATTNBENCH_SANITIZE and ATTNBENCH_FUZZ are separate builds: turn on one")
endif()
if(ATTNBENCH_FUZZ AND NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "ATTNBENCH_FUZZ needs clang++ (libFuzzer): -DCMAKE_CXX_COMPILER=clang++")
endif()

set(ATTNBENCH_TORCH_FREE ON)
set(ATTNBENCH_BENCH OFF)
set(ATTNBENCH_CUDA OFF)
include(${CMAKE_CURRENT_LIST_DIR}/Dependencies.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/Targets.cmake)

# Every object, dependencies' headers included: -O1 keeps the stacks readable and the build quick;
# assertions stay on whatever the build type (-UNDEBUG), and libstdc++'s own checks catch
# out-of-range operator[].
# Undefined behaviour aborts instead of printing and going on, so a test or fuzzer fails on it.
set(_ab_sanitizers -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all)
add_compile_options(-O1 -g -fno-omit-frame-pointer -UNDEBUG -D_GLIBCXX_ASSERTIONS ${_ab_sanitizers})
add_link_options(${_ab_sanitizers})
if(ATTNBENCH_FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link)  # coverage feedback; the fuzzers link the driver
endif()

include(${CMAKE_CURRENT_LIST_DIR}/Libraries.cmake)  # stops after the torch-free libraries

if(ATTNBENCH_SANITIZE)
  # The torch-free folders' tests, as tests/CMakeLists.txt builds them but without tcmalloc (ASan
  # brings its own allocator) and with a sanitizer report failing the test.
  find_package(Catch2 2 REQUIRED)
  include(Catch)
  enable_testing()
  function(attnbench_sanitized_test folder lib)
    file(GLOB srcs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/${folder}/*_test.cpp)
    string(REPLACE "/" "_" name "test_${folder}")
    add_executable(${name} ${srcs})
    target_link_libraries(${name} PRIVATE ${lib} Catch2::Catch2WithMain)
    target_compile_definitions(${name} PRIVATE CATCH_CONFIG_PREFIX_ALL
                               ATTNBENCH_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
    target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
    attnbench_warnings(${name})
    catch_discover_tests(${name} TEST_PREFIX "${folder}: " PROPERTIES ENVIRONMENT
      "OMP_NUM_THREADS=1;UBSAN_OPTIONS=print_stacktrace=1" FAIL_REGULAR_EXPRESSION "No tests ran"
      DISCOVERY_TIMEOUT 120)
  endfunction()
  attnbench_sanitized_test(core/common ab_core)
  attnbench_sanitized_test(core/data   ab_core)
  attnbench_sanitized_test(results     "$<LINK_LIBRARY:WHOLE_ARCHIVE,ab_results_formats,ab_results_report>")
  attnbench_sanitized_test(evals/tasks "$<LINK_LIBRARY:WHOLE_ARCHIVE,ab_evals_tasks>")
endif()

if(ATTNBENCH_FUZZ)
  # attnbench_fuzzer(NAME [SOURCES <files>...] LIBS <targets>...): tests/fuzz/NAME_fuzz.cpp linked
  # with libFuzzer's main. SOURCES: torch-free files of a torch layer, compiled in directly (the
  # sweep file reader, the checkpoint manifest check), so their library's torch is not needed.
  function(attnbench_fuzzer name)
    cmake_parse_arguments(F "" "" "SOURCES;LIBS" ${ARGN})
    list(TRANSFORM F_SOURCES PREPEND ${PROJECT_SOURCE_DIR}/)
    add_executable(${name}_fuzz ${PROJECT_SOURCE_DIR}/tests/fuzz/${name}_fuzz.cpp ${F_SOURCES})
    target_link_libraries(${name}_fuzz PRIVATE ${F_LIBS})
    target_include_directories(${name}_fuzz PRIVATE ${PROJECT_SOURCE_DIR})
    target_link_options(${name}_fuzz PRIVATE -fsanitize=fuzzer)
    attnbench_warnings(${name}_fuzz)
  endfunction()
  set(_ab_tasks "$<LINK_LIBRARY:WHOLE_ARCHIVE,ab_evals_tasks>")
  attnbench_fuzzer(run_config LIBS ab_core)
  attnbench_fuzzer(run_config_json LIBS ab_core)
  attnbench_fuzzer(sweep_file SOURCES harness/sweep/sweep_file.cpp harness/sweep/values.cpp
                   LIBS ${_ab_tasks})
  attnbench_fuzzer(task_jsonl LIBS ${_ab_tasks})
  attnbench_fuzzer(shard LIBS ab_core)
  attnbench_fuzzer(safetensors LIBS ab_core)
  attnbench_fuzzer(checkpoint_manifest SOURCES model/checkpoint_dir.cpp LIBS ab_core)
  attnbench_fuzzer(tokenizer LIBS ab_core)
  attnbench_fuzzer(hf_tokenizer LIBS ab_core)
  attnbench_fuzzer(hf_files SOURCES model/pretrained/hf_config.cpp
                   model/pretrained/transformers_keys.cpp LIBS ab_core)
endif()
