// Process-wide runtime facts: intra-op threads and the BLAS library actually loaded.
#pragma once
#include <string>

namespace attnbench::cli {

// Sets LibTorch's intra-op threads: `threads` if > 0, else $OMP_NUM_THREADS, else all cores
// (Debian's LibTorch starts with one thread, docs/toolchain.md, "Threads"); more than the cores
// are capped with a warning. Returns the number set.
int init_threads(int threads = 0);

// Path of the BLAS shared library loaded into this process ("" if none was found).
std::string loaded_blas();

// True when `blas_path` is the slow reference BLAS rather than OpenBLAS.
bool is_reference_blas(const std::string& blas_path);

}  // namespace attnbench::cli
