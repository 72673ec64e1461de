#!/usr/bin/env bash
# scripts/check-layers: passes on the repository, and fails, naming file, line and layers, on a
# planted upward include, a peer include, an include not written from the root, a source folder
# in no layer, and tests/ that stop mirroring the source folders.
set -uo pipefail
src=${ATTNBENCH_SOURCE_DIR:?}
check="$src/scripts/check-layers"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

out=$("$check" "$src" 2>&1) || fail "the repository itself: $out"

# A copy of the sources (no build folders, data or runs) to plant problems in, one at a time.
fresh() {
  rm -rf "$tmp/tree"; mkdir "$tmp/tree"
  (cd "$src" && find cmake core kernels variants model results evals train harness tests bench \
     -name '*.cpp' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' -o -name layers.txt) |
    (cd "$src" && xargs cp --parents -t "$tmp/tree")
}
# expect_problem MESSAGE: check-layers on the planted tree exits 1 and prints MESSAGE.
expect_problem() {
  local got rc
  got=$("$check" "$tmp/tree" 2>&1); rc=$?
  [[ $rc -eq 1 ]] || fail "exit $rc instead of 1 for: $1"
  grep -qF -- "$1" <<<"$got" || fail "expected '$1' in: $got"
}

fresh
out=$("$check" "$tmp/tree" 2>&1) || fail "the unchanged copy: $out"

fresh  # upward: the foundation reaching for the CLI
sed -i '0,/^#include/s//#include "harness\/cli\/command.h"\n&/' "$tmp/tree/core/common/error.h"
line=$(grep -n 'harness/cli/command.h' "$tmp/tree/core/common/error.h" | cut -d: -f1)
expect_problem "core/common/error.h:$line: layer 'core' includes \"harness/cli/command.h\" from layer 'harness/cli', which is not below it"

fresh  # peers: the training loop may not include the evaluation layer
echo '#include "evals/evaluator.h"' >> "$tmp/tree/train/trainer.cpp"
expect_problem "layer 'train' includes \"evals/evaluator.h\" from layer 'evals'"

fresh  # a sub-folder belongs to its layer: kernels/cpu may not include variants
echo '#include "variants/variant.h"' >> "$tmp/tree/kernels/cpu/fused_attention.cpp"
expect_problem "layer 'kernels' includes \"variants/variant.h\" from layer 'variants'"

fresh
echo '#include "error.h"' >> "$tmp/tree/core/common/paths.cpp"
expect_problem "#include \"error.h\" is not written from the repository root"

fresh
mkdir -p "$tmp/tree/plugins" && echo 'int x;' > "$tmp/tree/plugins/extra.cpp"
expect_problem "plugins/extra.cpp: folder is in no layer"

fresh
mkdir -p "$tmp/tree/tests/nowhere" && echo 'int x;' > "$tmp/tree/tests/nowhere/thing_test.cpp"
expect_problem "tests/nowhere/ mirrors no source folder"
echo 'int y;' > "$tmp/tree/tests/model/helpers.cpp"
expect_problem "tests/model/helpers.cpp: a test source is named <subject>_test.cpp"

fresh
echo 'results   nowhere' >> "$tmp/tree/cmake/layers.txt"
"$check" "$tmp/tree" >/dev/null 2>&1; rc=$?
[[ $rc -eq 2 ]] || fail "a malformed layers.txt exits $rc instead of 2"

if [[ $fails -ne 0 ]]; then echo "$fails failure(s)"; exit 1; fi
echo "check_layers_test: all passed"
