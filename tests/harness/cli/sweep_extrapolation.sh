#!/usr/bin/env bash
# A sweep whose run config lists [eval] contexts: every cell is scored at its own context and at
# each listed length (length extrapolation, docs/evaluation.md), stored as task@N; the table shows
# a column per task and length, and a second run finds nothing missing.
set -euo pipefail
source "$(dirname "$0")/sweep_fixture.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "${ATTNBENCH_DATA:-}" ]; then
  echo "skip: ATTNBENCH_DATA is not set; the cells' evaluation needs the task files" >&2
  exit 77  # Skipped (tests/CMakeLists.txt)
fi

make_sweep "$tmp"
printf 'contexts = [64, 32]\n' >> "$tmp/base.toml"  # 32 is the model's own: scored once
cat > "$tmp/long.toml" <<TOML
[sweep]
name = "long"
base = "base.toml"
seeds = [0]
tasks = ["copa"]
limit = 12

[grid]
"attention.variant" = ["softmax", "lazy"]
TOML
db="$tmp/db.sqlite"
"$ATTNBENCH" sweep "$tmp/long.toml" --db "$db" --runs-dir "$tmp/runs" --quiet > "$tmp/out" 2> "$tmp/err" ||
  { cat "$tmp/out" "$tmp/err"; fail "sweep"; }
grep -q "evaluating copa, copa@64" "$tmp/out" || { cat "$tmp/out"; fail "cells not scored at 64"; }
[ "$(sql "$db" "SELECT group_concat(task, ' ') FROM (SELECT DISTINCT task FROM evals ORDER BY task)")" = "copa copa@64" ] ||
  fail "stored tasks: $(sql "$db" "SELECT DISTINCT task FROM evals")"
[ "$(sql "$db" "SELECT COUNT(DISTINCT run) FROM evals WHERE task = 'copa@64' AND n = 12")" = 2 ] ||
  fail "copa@64 rows: $(sql "$db" "SELECT run, metric, n FROM evals WHERE task = 'copa@64'")"

"$ATTNBENCH" results table --db "$db" --sweep long > "$tmp/table" 2> "$tmp/err" || { cat "$tmp/err"; fail "table"; }
head -1 "$tmp/table" | grep -q "| copa acc ↑ | copa@64 acc ↑ |" || { cat "$tmp/table"; fail "table columns"; }

# Everything is stored: a second run scores nothing.
"$ATTNBENCH" sweep "$tmp/long.toml" --db "$db" --runs-dir "$tmp/runs" --quiet > "$tmp/out2" 2> "$tmp/err" ||
  { cat "$tmp/out2" "$tmp/err"; fail "second sweep"; }
if grep -q "evaluating" "$tmp/out2"; then cat "$tmp/out2"; fail "the second run scored again"; fi
echo "ok"
