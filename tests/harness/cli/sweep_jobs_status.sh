#!/usr/bin/env bash
# `sweep --jobs 2` says where each running cell is: every --status-every seconds a summary line
# (running, finished, waiting) and one line per running cell with the last line of its log.
set -euo pipefail
source "$(dirname "$0")/sweep_fixture.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make_sweep "$tmp"
"$ATTNBENCH" sweep "$tmp/sweep.toml" --db "$tmp/results.db" --runs-dir "$tmp/runs" --jobs 2 \
  --status-every 0.2 > "$tmp/out" 2> "$tmp/err" || { cat "$tmp/out" "$tmp/err"; fail "sweep --jobs 2"; }
grep -qE "^status: [12] running, [0-9] finished, [0-9] waiting of 6 cell\(s\)$" "$tmp/out" ||
  { cat "$tmp/out"; fail "no status line"; }
grep -qE "^  [0-9a-f]{12} variant=[a-z]+ seed=[01]: .+" "$tmp/out" || { cat "$tmp/out"; fail "no cell line"; }
expect_error "--status-every" "$ATTNBENCH" sweep "$tmp/sweep.toml" --jobs 2 --status-every 0
# Not a number of seconds at all (nan passes every comparison, so a range check alone lets it in).
for bad in nan inf -inf; do
  expect_error "--status-every" "$ATTNBENCH" sweep "$tmp/sweep.toml" --jobs 2 "--status-every=$bad"
done
echo "ok"
