#!/usr/bin/env bash
# The sweep's attention measurement: eval.attention_tokens and eval.attention_window decide what is
# measured, progress lines say how far it is, and what was measured (window, tokens, text) is stored
# with the statistics; a measurement of another window is refused by attn-stats --db, naming both,
# and leaves the stored statistics alone; results table says how they were measured.
set -euo pipefail
source "$(dirname "$0")/sweep_fixture.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

make_sweep "$tmp"
printf 'attention_tokens = 64\nattention_window = 16\n' >> "$tmp/base.toml"
cell="variant=softmax seed=0"
"$ATTNBENCH" sweep "$tmp/sweep.toml" --only "$cell" --db "$tmp/r.db" --runs-dir "$tmp/runs" \
  > "$tmp/sweep.log" 2>&1 || { cat "$tmp/sweep.log"; fail "sweep"; }
grep -q "measuring attention: val.bin (first 64 of 4000 tokens), windows of 16 tokens" "$tmp/sweep.log" ||
  { cat "$tmp/sweep.log"; fail "no line saying what is measured"; }
grep -q "measuring attention: 4/4 windows" "$tmp/sweep.log" || { cat "$tmp/sweep.log"; fail "no progress line"; }
id=$(sql "$tmp/r.db" "SELECT id FROM runs")
[ "$(sql "$tmp/r.db" "SELECT window, tokens, text FROM attn_measurements WHERE run = '$id'")" = "16|64|val.bin" ] ||
  fail "stored measurement: $(sql "$tmp/r.db" 'SELECT * FROM attn_measurements')"
[ "$(sql "$tmp/r.db" "SELECT value FROM attn_stats WHERE run = '$id' AND layer = -1 AND head = -1 AND stat = 'tokens'")" = 64.0 ] ||
  fail "the statistics should cover 64 tokens"

before=$(sql "$tmp/r.db" "SELECT stat, layer, head, idx, value FROM attn_stats ORDER BY 1, 2, 3, 4")
expect_error "already holds attention statistics measured on windows of 16 tokens, 64 tokens of val.bin; these were measured on windows of 32 tokens, 64 tokens of val.bin" \
  "$ATTNBENCH" attn-stats --checkpoint "$tmp/runs/$id" --tokens 64 --window 32 --db "$tmp/r.db"
[ "$(sql "$tmp/r.db" "SELECT stat, layer, head, idx, value FROM attn_stats ORDER BY 1, 2, 3, 4")" = "$before" ] ||
  fail "a refused measurement changed the stored statistics"
# The same measurement again is accepted.
"$ATTNBENCH" attn-stats --checkpoint "$tmp/runs/$id" --tokens 64 --window 16 --db "$tmp/r.db" > /dev/null 2>&1 ||
  fail "re-measuring as stored"

"$ATTNBENCH" results table --sweep tiny_cells --db "$tmp/r.db" > "$tmp/table.md"
grep -q "attention statistics measured on windows of 16 tokens, 64 tokens of val.bin" "$tmp/table.md" ||
  { cat "$tmp/table.md"; fail "the table should say how the statistics were measured"; }
# The same run in a table of runs named one by one (no sweep needed); one of --sweep or --runs.
"$ATTNBENCH" results table --runs "${id:0:6}" --db "$tmp/r.db" > "$tmp/runs.md"
grep -q "^- Runs $id, metric" "$tmp/runs.md" || { cat "$tmp/runs.md"; fail "a table of --runs"; }
expect_error "give --sweep NAME or --runs" "$ATTNBENCH" results table --sweep tiny_cells --runs "$id" --db "$tmp/r.db"
expect_error "give --sweep NAME or --runs" "$ATTNBENCH" results table --db "$tmp/r.db"
echo ok
