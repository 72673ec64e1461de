# Shared by tests/harness/cli/faults_*.sh (sourced; .bash files are not collected as tests): builds
# the LD_PRELOAD fault injector tests/harness/cli/fault_shim.c (see its header for the variables).
# build_fault_shim DIR: compiles it into DIR/fault_shim.so and sets FAULT_SHIM to that path.
build_fault_shim() {
  FAULT_SHIM="$1/fault_shim.so"
  "${CC:-cc}" -shared -fPIC -O1 -o "$FAULT_SHIM" "$(dirname "${BASH_SOURCE[0]}")/fault_shim.c" -ldl \
    || { echo "FAIL: cannot build the fault shim"; exit 1; }
}
