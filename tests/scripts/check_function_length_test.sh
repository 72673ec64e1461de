#!/usr/bin/env bash
# scripts/check-function-length: passes on the repository; on a planted tree fails on a 61-line
# function, a 61-line lambda and names file and line, passes a 60-line one, and ignores braces
# inside comments and strings, control statements' blocks, tests/ and the kernel loops.
set -uo pipefail
src=${ATTNBENCH_SOURCE_DIR:?}
check="$src/scripts/check-function-length"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

out=$("$check" "$src" 2>&1) || fail "the repository itself: $out"

# body NAME LINES: a function NAME whose braces span LINES lines (its body LINES - 2 statements).
body() {
  echo "int $1(int x) {"
  for ((i = 0; i < $2 - 2; i++)); do echo "  x += $i;"; done
  echo "  return x; }"
}
mkdir -p "$tmp/t/results" "$tmp/t/tests" "$tmp/t/kernels/cpu"
{ body fits 60; } > "$tmp/t/results/ok.cpp"
out=$("$check" "$tmp/t" 2>&1) || fail "a 60-line function was refused: $out"

{ echo '// a comment with { braces } and "quotes {"'; body too_long 61; } > "$tmp/t/results/long.cpp"
body in_tests 80 > "$tmp/t/tests/long_test.cpp"
body kernel_loop 80 > "$tmp/t/kernels/cpu/loop.cpp"
{
  echo "const auto f = [](int x) {"
  for ((i = 0; i < 59; i++)); do echo "  x += $i;"; done
  echo "};"
} > "$tmp/t/results/lambda.cpp"
{
  echo "int h(int x) {"
  echo "  if (x) {"
  for ((i = 0; i < 40; i++)); do echo "    x += $i;"; done
  echo "  }"
  echo "  const char* s = \"}}}\";"
  echo "  return x; }"
} > "$tmp/t/results/statement.cpp"
out=$("$check" "$tmp/t" 2>&1); rc=$?
[[ $rc -eq 1 ]] || fail "exit $rc instead of 1 for a 61-line function"
grep -qF "results/long.cpp:2: a body of 61 lines (at most 60)" <<<"$out" || fail "no line for long.cpp in: $out"
grep -qF "results/lambda.cpp:1: a body of 61 lines" <<<"$out" || fail "no line for the lambda in: $out"
grep -q "ok.cpp\|long_test.cpp\|loop.cpp\|statement.cpp" <<<"$out" && fail "a file that passes is named: $out"
[[ $(grep -c "a body of" <<<"$out") -eq 2 ]] || fail "expected exactly 2 problems: $out"

[[ $fails -eq 0 ]] && echo "check_function_length_test: all passed"
exit $((fails > 0))
