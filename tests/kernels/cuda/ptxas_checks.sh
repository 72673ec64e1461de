#!/usr/bin/env bash
# The CUDA build's ptxas flags (cmake/Cuda.cmake, ATTNBENCH_PTXAS_CHECKS) fail a kernel that uses
# local memory or spills registers, and pass a clean one: planted kernels compiled for $CUDA_ARCH.
set -euo pipefail
: "${NVCC:?set NVCC}" "${PTXAS_CHECKS:?set PTXAS_CHECKS}" "${CUDA_ARCH:?set CUDA_ARCH}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

compile() {  # file.cu -> nvcc's exit code, its output in $work/log
  local rc=0
  "$NVCC" -c -arch="$CUDA_ARCH" "$PTXAS_CHECKS" "$1" -o "$work/out.o" > "$work/log" 2>&1 || rc=$?
  return $rc
}

# Clean: a few registers, no stack.
cat > "$work/clean.cu" <<'CU'
__global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }
CU
compile "$work/clean.cu" || { echo "FAIL: a clean kernel was rejected:"; cat "$work/log"; exit 1; }
grep -q "Used [0-9]* registers" "$work/log" || { echo "FAIL: no register report (-v)"; exit 1; }

# Local memory: a per-thread array indexed at run time cannot live in registers.
cat > "$work/lmem.cu" <<'CU'
__global__ void gather(float* x, int n) {
  float buf[256];
  for (int i = 0; i < 256; ++i) buf[i] = x[i] * 2.f;
  x[threadIdx.x] = buf[(threadIdx.x * n) & 255];
}
CU
if compile "$work/lmem.cu"; then echo "FAIL: a kernel using local memory compiled"; exit 1; fi
grep -q "Local memory used" "$work/log" || { echo "FAIL: unexpected error:"; cat "$work/log"; exit 1; }

# Spills: more live values than the register cap allows.
cat > "$work/spill.cu" <<'CU'
__global__ void __launch_bounds__(1024, 2) many(const float* x, float* y) {
  float v[96];
#pragma unroll
  for (int i = 0; i < 96; ++i) v[i] = x[threadIdx.x + i * 1024];
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < 96; ++i) s += v[i] * v[95 - i] + v[(i * 7) % 96];
  y[threadIdx.x] = s;
}
CU
if compile "$work/spill.cu"; then echo "FAIL: a spilling kernel compiled"; cat "$work/log"; exit 1; fi
grep -q "Registers are spilled" "$work/log" || { echo "FAIL: unexpected error:"; cat "$work/log"; exit 1; }
echo PASS
