#!/usr/bin/env bash
# A stored result is never replaced by a different measurement (issue: a second sweep over stored
# runs with another `limit` re-scored COPA and ARC-Easy, called them "missing", and replaced their
# rows). A sweep whose limit differs from a stored task's is refused before any work, naming both;
# so is `attnbench eval --db` with another --limit; the stored rows survive both. The same limit
# re-scores in place.
set -euo pipefail
source "$(dirname "$0")/sweep_fixture.bash"
[ -n "${ATTNBENCH_DATA:-}" ] || { echo "skipped: ATTNBENCH_DATA is not set (no tasks to score)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

make_sweep "$tmp"
cell="variant=softmax seed=0"
"$ATTNBENCH" sweep "$tmp/sweep.toml" --only "$cell" --db "$tmp/r.db" --runs-dir "$tmp/runs" --quiet \
  > "$tmp/first.log" 2>&1 || { cat "$tmp/first.log"; fail "first sweep"; }
id=$("$ATTNBENCH" sweep "$tmp/sweep.toml" --only "$cell" --dry-run --db "$tmp/r.db" |
     grep -oE '^[0-9a-f]{12}' | head -1)
rows() { sql "$tmp/r.db" "SELECT task, metric, value, n, item_limit FROM evals WHERE run = '$id' ORDER BY task, metric"; }
before=$(rows)
[ -n "$before" ] && grep -q '|4$' <<< "$before" || fail "the first sweep stored no rows at limit 4: $before"

# The same sweep at limit 3: the stored limit-4 rows are a different measurement, not missing.
sed 's/^limit = 4$/limit = 3/' "$tmp/sweep.toml" > "$tmp/sweep3.toml"
expect_error "already holds copa scored with limit 4 (n = 4), and this sweep scores it with limit 3" \
  "$ATTNBENCH" sweep "$tmp/sweep3.toml" --only "$cell" --dry-run --db "$tmp/r.db" --runs-dir "$tmp/runs"
grep -q "missing" "$tmp/out" && fail "a differently scored task was planned as missing"
expect_error "a second scoring would replace a different measurement" \
  "$ATTNBENCH" sweep "$tmp/sweep3.toml" --db "$tmp/r.db" --runs-dir "$tmp/runs" --quiet
[ "$(rows)" = "$before" ] || fail "the sweep at limit 3 changed the stored rows"

# attnbench eval --db with another --limit: refused before scoring, naming both identities.
expect_error "already holds copa scored with limit 4, protocol " \
  "$ATTNBENCH" eval --checkpoint "$tmp/runs/$id" --tasks copa --limit 3 --db "$tmp/r.db" --bootstrap-iters 0
grep -qE "bos none \(n = 4\); this scoring \(limit 3, protocol [^,]+, bos none\) is a different measurement" "$tmp/err" || { cat "$tmp/err"; fail "the message should name the new identity"; }
grep -q "requests" "$tmp/err" && { cat "$tmp/err"; fail "eval scored before refusing"; }
[ "$(rows)" = "$before" ] || fail "eval --limit 3 changed the stored rows"

# The same identity re-scores in place (the same numbers, one row each).
"$ATTNBENCH" eval --checkpoint "$tmp/runs/$id" --tasks copa --limit 4 --db "$tmp/r.db" --bootstrap-iters 0 \
  > "$tmp/same.log" 2>&1 || { cat "$tmp/same.log"; fail "re-scoring with the stored limit"; }
[ "$(rows)" = "$before" ] || fail "re-scoring with the stored identity changed the rows"
echo ok
