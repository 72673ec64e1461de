#!/usr/bin/env bash
# scripts/bench-eval: bad options exit 2 before any work; with $ATTNBENCH_DATA, five COPA items
# before and after prefix reuse on a tiny checkpoint print the ratio line and pass --check, and a
# "before" that scores differently (a BOS token prepended) fails it with exit 1, naming the request.
set -uo pipefail
bench="${ATTNBENCH_SOURCE_DIR:?}/scripts/bench-eval"
build=$(dirname "${ATTNBENCH:?}")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect_usage MESSAGE OPTION...: exit 2 and MESSAGE on stderr.
expect_usage() {
  local want=$1 rc=0; shift
  "$bench" --build "$build" "$@" > /dev/null 2> "$tmp/err" || rc=$?
  [[ $rc -eq 2 ]] || fail "exit $rc instead of 2 for: $*"
  grep -qF -- "$want" "$tmp/err" || fail "expected '$want' for $* in: $(cat "$tmp/err")"
}
expect_usage "unknown argument --bogus" --bogus
expect_usage "--repeats expects an integer >= 1, got '0'" --repeats 0
expect_usage "--limit expects an integer >= 0, got 'x'" --limit x
expect_usage "--context needs a value" --context
expect_usage "--baseline $tmp/none is not an executable file" --baseline "$tmp/none"

if [[ -z "${ATTNBENCH_DATA:-}" ]]; then
  echo "skip: ATTNBENCH_DATA is not set; the benchmark part of this test needs the task files" >&2
  [[ $fails -eq 0 ]] || { echo "$fails failure(s)"; exit 1; }
  exit 77  # Skipped (tests/CMakeLists.txt)
fi
# Shards from the Wikipedia sample's smallest file (the script's own input takes a minute to
# tokenize), where the script looks for them; a context of 128 keeps training and scoring short.
"$ATTNBENCH" data prepare --input "$ATTNBENCH_DATA/pretrain_wikipedia_en/wiki_pages_004.jsonl" \
  --out "$tmp/work/shards" --val-tokens 2048 > /dev/null 2> "$tmp/err" ||
  fail "data prepare: $(cat "$tmp/err")"
run() {  # run OPTION...: the script on five COPA items; its stdout in $tmp/out, exit status in $rc
  rc=0
  "$bench" --build "$build" --work "$tmp/work" --presets tiny --context 128 --tasks copa \
    --limit 5 --check "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
}
run
[[ $rc -eq 0 ]] || fail "exit $rc: $(cat "$tmp/out" "$tmp/err")"
grep -qE '^copa +5 +10 ' "$tmp/out" || fail "no copa row with 5 items, 10 requests: $(cat "$tmp/out")"
grep -qE '^tiny: all tasks: 5 items; .* ratio after/before [0-9.]+x; tokens saved [0-9.]+%' \
  "$tmp/out" || fail "no ratio line: $(cat "$tmp/out")"
grep -qE '^  copa +largest \|loglikelihood difference\| .*; metrics (identical|within tolerance)' \
  "$tmp/out" || fail "no check line for copa: $(cat "$tmp/out")"
grep -qx 'tiny check: passed' "$tmp/out" || fail "the check did not pass: $(cat "$tmp/out")"

# A "before" binary whose log-likelihoods differ: every request is reported, and the check fails.
printf '#!/bin/sh\n[ "$1" = eval ] && exec "%s" "$@" --bos prepend\nexec "%s" "$@"\n' \
  "$ATTNBENCH" "$ATTNBENCH" > "$tmp/bos-before"
chmod +x "$tmp/bos-before"
run --baseline "$tmp/bos-before"
[[ $rc -eq 1 ]] || fail "exit $rc instead of 1 for a differing baseline: $(cat "$tmp/out")"
grep -qE '^    doc 0 request 0: loglikelihood ' "$tmp/out" || fail "request not named: $(cat "$tmp/out")"
grep -qx 'tiny check: FAILED for 1 task(s)' "$tmp/out" || fail "no FAILED line: $(cat "$tmp/out")"

if [[ $fails -ne 0 ]]; then echo "$fails failure(s)"; exit 1; fi
echo "bench_eval_test: all passed"
