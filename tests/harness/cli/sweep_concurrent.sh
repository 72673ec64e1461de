#!/usr/bin/env bash
# Two runner processes on the same sweep and database at once (one with --jobs 2, one plain): the
# claims in the store make them share the cells, so the sweep completes with every cell run exactly
# once (runs.attempts = 1), nothing lost and nothing duplicated. Either may find the database the
# other is creating still empty (no tables yet): that holds no runs, not a foreign file. So does an
# empty file given from the start, which the writer initialises.
set -euo pipefail
source "$(dirname "$0")/sweep_fixture.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make_sweep "$tmp"
args=("$tmp/sweep.toml" --db "$tmp/results.db" --runs-dir "$tmp/runs" --quiet)

"$ATTNBENCH" sweep "${args[@]}" --jobs 2 > "$tmp/a.log" 2>&1 &
a=$!
"$ATTNBENCH" sweep "${args[@]}" > "$tmp/b.log" 2>&1 &
b=$!
rc_a=0; wait "$a" || rc_a=$?
rc_b=0; wait "$b" || rc_b=$?
[ "$rc_a" = 0 ] || { cat "$tmp/a.log"; fail "runner with --jobs 2 exited $rc_a"; }
[ "$rc_b" = 0 ] || { cat "$tmp/b.log"; fail "plain runner exited $rc_b"; }

check_complete "$tmp/sweep.toml" "$tmp/results.db" "$tmp/runs"
[ "$(sql "$tmp/results.db" 'SELECT max(attempts) FROM runs')" = 1 ] ||
  fail "a cell was claimed twice: $(sql "$tmp/results.db" 'SELECT id, attempts FROM runs')"
echo "ok: cells started by the --jobs runner: $(grep -c ': started' "$tmp/a.log" || true)," \
     "by the plain runner: $(grep -c ': starting' "$tmp/b.log" || true)"

# An empty database file (what a runner finds while another creates its tables): no runs yet.
rm -rf "$tmp/results.db"* "$tmp/runs"
: > "$tmp/results.db"
"$ATTNBENCH" sweep "$tmp/sweep.toml" --db "$tmp/results.db" --runs-dir "$tmp/runs" --dry-run \
  > "$tmp/dry.log" 2>&1 || { cat "$tmp/dry.log"; fail "a dry run on an empty database failed"; }
"$ATTNBENCH" sweep "${args[@]}" > "$tmp/c.log" 2>&1 || { cat "$tmp/c.log"; fail "a sweep on an empty database failed"; }
check_complete "$tmp/sweep.toml" "$tmp/results.db" "$tmp/runs"
echo "ok: an empty database file holds no runs"
