#!/usr/bin/env bash
# `attnbench results export-tb` end to end: a folder per run with one event file, --sweep, and
# clear usage errors (exit 2) for a non-empty or non-folder --out, an --out over the database, an
# unknown sweep and empty or missing options. The fixture rows are written with Python's sqlite3
# into a database whose schema attnbench created (`results merge OUT` with no inputs).
set -euo pipefail
source "$(dirname "$0")/sweep_fixture.bash"  # fail, expect_error
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
db="$tmp/r.db"

one_event_file() {  # $1 = folder: exactly one event file in it
  local n
  n=$(find "$1" -maxdepth 1 -name 'events.out.tfevents.*' | wc -l)
  [ "$n" = 1 ] || fail "$1 holds $n event files (expected 1)"
}

"$ATTNBENCH" results merge "$db" > /dev/null   # creates the schema
python3 - "$db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
now = "2026-01-01T00:00:00.000Z"
c.execute("INSERT INTO sweeps(name, file, created) VALUES ('mini', 'sweeps/mini.toml', ?)", (now,))
for rid, sweep, cell in [("s0", "mini", "softmax seed/0"), ("l0", "mini", "lazy"), ("x9", "", "")]:
    c.execute("INSERT INTO runs(id, sweep, cell, status, config, created) "
              "VALUES (?, ?, ?, 'finished', '{}', ?)", (rid, sweep, cell, now))
    if sweep:
        c.execute("INSERT INTO sweep_runs(sweep, run, cell) VALUES (?, ?, ?)", (sweep, rid, cell))
for step, loss in [(10, 4.5), (20, 3.25)]:
    c.execute("INSERT INTO metrics(run, key, step, value, time) VALUES ('s0', 'train/loss', ?, ?, 1)",
              (step, loss))
c.execute("INSERT INTO evals(run, task, metric, value, stderr, n, time) "
          "VALUES ('s0', 'piqa', 'acc', 0.6, 0.01, 1838, 0)")
c.execute("INSERT INTO attn_stats(run, layer, head, stat, idx, value) VALUES ('s0', 0, -1, 'sink_mass', -1, 0.4)")
c.commit()
PY

"$ATTNBENCH" results export-tb --db "$db" --sweep mini --out "$tmp/tb" > "$tmp/out"
[ "$(ls "$tmp/tb")" = "$(printf 'lazy\nsoftmax_seed_0')" ] || { ls "$tmp/tb"; fail "run folders"; }
one_event_file "$tmp/tb/softmax_seed_0"
one_event_file "$tmp/tb/lazy"
grep -qF "softmax_seed_0: 4 scalars of run s0" "$tmp/out" || { cat "$tmp/out"; fail "summary line"; }

# Without --sweep: every run; one outside any sweep is named by its id.
"$ATTNBENCH" results export-tb --db "$db" --out "$tmp/all" > /dev/null
one_event_file "$tmp/all/x9"

expect_error "exists and is not empty" "$ATTNBENCH" results export-tb --db "$db" --out "$tmp/tb"
"$ATTNBENCH" results export-tb --db "$db" --sweep mini --out "$tmp/tb" --force > /dev/null
one_event_file "$tmp/tb/lazy"
touch "$tmp/file"
expect_error "exists and is not a folder" "$ATTNBENCH" results export-tb --db "$db" --out "$tmp/file"
expect_error "an input of this command" "$ATTNBENCH" results export-tb --db "$db" --out "$db"
expect_error "an input of this command" "$ATTNBENCH" results export-tb --db "$db" --out "$tmp" --force
[ -f "$db" ] || fail "--force removed the database"
expect_error "no sweep 'mni'" "$ATTNBENCH" results export-tb --db "$db" --sweep mni --out "$tmp/n"
expect_error "empty value" "$ATTNBENCH" results export-tb --db "$db" --out ""
expect_error "--out is required" "$ATTNBENCH" results export-tb --db "$db"
expect_error "no results database" "$ATTNBENCH" results export-tb --db "$tmp/none.db" --out "$tmp/n"
[ ! -e "$tmp/n" ] || fail "a refused export made its --out"
echo ok
