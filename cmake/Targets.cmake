# Helpers shared by every target.

# One precompiled torch header for the whole project (docs/toolchain.md, "Compile time": a PCH per
# target is 568 MB and slower overall). Torch targets call attnbench_use_torch(), which links torch
# and reuses it.
if(NOT ATTNBENCH_TORCH_FREE)  # the sanitizer and fuzz builds have no torch (cmake/Sanitize.cmake)
  add_library(attnbench_pch OBJECT ${PROJECT_SOURCE_DIR}/cmake/pch.cpp)
  target_link_libraries(attnbench_pch PUBLIC torch)
  target_precompile_headers(attnbench_pch PRIVATE <torch/torch.h>)
endif()

function(attnbench_use_torch target)
  target_link_libraries(${target} PUBLIC torch)
  target_precompile_headers(${target} REUSE_FROM attnbench_pch)
endfunction()

# ATTNBENCH_UNITY: `target`'s C++ files compile ATTNBENCH_UNITY_BATCH at a time (CMake's unity
# build; CUDA files are left out where they are globbed). Files of one target must then not define
# the same name at namespace scope, anonymous namespaces included: each CLI command keeps its code
# in its own namespace, attnbench::cli::cmd_<name>.
function(attnbench_unity target)
  if(ATTNBENCH_UNITY)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON
                          UNITY_BUILD_BATCH_SIZE ${ATTNBENCH_UNITY_BATCH})
  endif()
endfunction()

function(attnbench_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
endfunction()

# Executables: OpenMP OpenBLAS (the CUDA build: the wheel's torch/lib) through the run path and
# tcmalloc linked in (see Dependencies.cmake).
function(attnbench_executable target)
  set_target_properties(${target} PROPERTIES
    BUILD_RPATH "${ATTNBENCH_RUNTIME_DIRS}"
    INSTALL_RPATH "${ATTNBENCH_RUNTIME_DIRS}")
  target_link_options(${target} PRIVATE -Wl,--disable-new-dtags -Wl,--no-as-needed)
  if(ATTNBENCH_CUDA)
    # The wheel's libtorch.so exports its own, statically linked copies of libstdc++'s
    # std::filesystem functions (pytorch/pytorch#133437); first in the lookup order, they replace the
    # system's for every library in the process, and std::filesystem::remove_all jumps to address 0.
    # Naming libstdc++ before the objects makes it the first DT_NEEDED ahead of libtorch.so, so the
    # system's definitions win (docs/toolchain.md, "CUDA build").
    target_link_options(${target} PRIVATE -lstdc++)
  endif()
  if(TCMALLOC_LIBRARY)
    target_link_libraries(${target} PRIVATE ${TCMALLOC_LIBRARY})
  endif()
endfunction()
