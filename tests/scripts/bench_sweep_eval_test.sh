#!/usr/bin/env bash
# scripts/bench-sweep-eval: bad or missing options exit 2 before any work, naming the option.
set -uo pipefail
bench="${ATTNBENCH_SOURCE_DIR:?}/scripts/bench-sweep-eval"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect_usage MESSAGE OPTION...: exit 2 and MESSAGE on stderr.
expect_usage() {
  local want=$1 rc=0; shift
  "$bench" "$@" > /dev/null 2> "$tmp/err" || rc=$?
  [[ $rc -eq 2 ]] || fail "exit $rc instead of 2 for: $*"
  grep -qF -- "$want" "$tmp/err" || fail "expected '$want' for $* in: $(cat "$tmp/err")"
}
touch "$tmp/db"
all=(--baseline /bin/true --sweep s.toml --db "$tmp/db" --runs-dir "$tmp" --cell abc)
expect_usage "unknown argument --bogus" --bogus
expect_usage "--baseline is required" --sweep s.toml --db "$tmp/db" --runs-dir "$tmp" --cell abc
expect_usage "--cell needs a value" --cell
expect_usage "--repeats expects a positive integer" "${all[@]}" --repeats 0
expect_usage "--db $tmp/none is not a file" "${all[@]}" --db "$tmp/none"
expect_usage "$tmp/nobuild/attnbench is not an executable" "${all[@]}" --build "$tmp/nobuild"
"$bench" --help | grep -q "evaluation phase" || fail "--help does not describe the script"
[[ $fails -eq 0 ]] || { echo "$fails failure(s)"; exit 1; }
