#!/usr/bin/env bash
# `attnbench results ...` end to end on a fixture database: the table in every format, runs, show,
# curves, the read-only sql (writes refused, exit 2), bound --where values, merge idempotency, and
# clear usage errors (exit 2). The fixture rows are written with Python's sqlite3 into a database
# whose schema attnbench itself created (`results merge OUT` with no inputs).
set -euo pipefail
: "${ATTNBENCH:?path of the attnbench binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
db="$tmp/r.db"

fail() { echo "FAIL: $*"; exit 1; }
expect_error() {  # $1 = expected substring of stderr, rest = command; exit code must be 2
  local want=$1; shift
  set +e
  "$@" > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  set -e
  [ "$rc" = 2 ] || { cat "$tmp/err"; fail "exit $rc (expected 2) for: $*"; }
  grep -qF -- "$want" "$tmp/err" || { cat "$tmp/err"; fail "'$want' not in stderr of: $*"; }
}
expect_line() {  # $1 = exact line, $2 = file
  grep -qxF -- "$1" "$2" || { cat "$2"; fail "line '$1' missing"; }
}

expect_error "no results database at $tmp/none.db" "$ATTNBENCH" results runs --db "$tmp/none.db"
# An empty value is refused, never replaced by the default database.
expect_error "empty value" "$ATTNBENCH" results runs --db ""
expect_error "empty value" "$ATTNBENCH" report --sweep s --out "$tmp/r" --db ""
expect_error "--heatmap-tokens" "$ATTNBENCH" report --sweep s --out "$tmp/r" --heatmap-tokens -3
"$ATTNBENCH" results merge "$db" > /dev/null   # creates the schema
python3 - "$db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
now = "2026-01-01T00:00:00.000Z"
c.execute("INSERT INTO sweeps(name, file, created) VALUES ('mini', 'sweeps/mini.toml', ?)", (now,))
runs = [("s0", "softmax", 0, "finished"), ("s1", "softmax", 1, "finished"),
        ("l0", "lazy", 0, "finished"), ("l1", "lazy", 1, "failed")]
for i, (rid, variant, seed, status) in enumerate(runs):
    t = "2026-01-01T00:00:0%d.000Z" % i
    c.execute("INSERT INTO runs(id, sweep, cell, status, config, created, finished, error) "
              "VALUES (?, 'mini', ?, ?, '{}', ?, ?, ?)",
              (rid, variant + "-" + str(seed), status, t, t, "boom" if status == "failed" else None))
    c.execute("INSERT INTO sweep_runs(sweep, run, cell) VALUES ('mini', ?, ?)", (rid, rid))
    for k, v, ty in [("attention.variant", variant, "string"), ("train.seed", str(seed), "int")]:
        c.execute("INSERT INTO params(run, key, value, type) VALUES (?, ?, ?, ?)", (rid, k, v, ty))
for rid, acc_norm in [("s0", 0.50), ("s1", 0.52), ("l0", 0.55)]:
    for metric, v in [("acc", acc_norm + 0.1), ("acc_norm", acc_norm)]:
        c.execute("INSERT INTO evals(run, task, metric, value, stderr, n, time) "
                  "VALUES (?, 'piqa', ?, ?, 0.01, 1838, 0)", (rid, metric, v))
for step, loss in [(10, 4.5), (20, 3.25)]:
    c.execute("INSERT INTO metrics(run, key, step, value, time) VALUES ('s0', 'loss', ?, ?, 1)",
              (step, loss))
c.commit()
PY

# The table: rows = attention.variant (train.seed is the replicate), mean ± sample std, n, Avg.
"$ATTNBENCH" results table --sweep mini --db "$db" > "$tmp/t.md"
expect_line "| attention.variant | n | piqa acc_norm ↑ | Avg ↑ |" "$tmp/t.md"
expect_line "| softmax | 2 | 51.0 ± 1.4 | 51.0 ± 1.4 |" "$tmp/t.md"
expect_line "| lazy | 1 | **55.0** | 55.0 |" "$tmp/t.md"
grep -qF "1 failed: not included" "$tmp/t.md" || fail "the failed run is not reported"
ATTNBENCH_DB="$db" "$ATTNBENCH" results table --sweep mini --metric acc --format json > "$tmp/t.json"
python3 - "$tmp/t.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
assert t["columns"] == [{"task": "piqa", "metric": "acc", "lower_is_better": False, "accuracy": True,
                        "in_average": True}], t
soft = t["rows"][0]
assert soft["keys"] == {"attention.variant": "softmax"} and soft["n"] == 2, soft
assert abs(soft["cells"][0]["mean"] - 0.61) < 1e-12, soft
PY
"$ATTNBENCH" results table --sweep mini --db "$db" --format csv > "$tmp/t.csv"
head -1 "$tmp/t.csv" | grep -q "^attention.variant,n,piqa/acc_norm," || fail "csv header"
"$ATTNBENCH" results table --sweep mini --db "$db" --format latex | grep -qF '\textbf{55.0}' || fail latex
"$ATTNBENCH" results table --sweep mini --db "$db" --where attention.variant=lazy --where train.seed=0 > "$tmp/w.md"
grep -q softmax "$tmp/w.md" && fail "--where kept softmax"
expect_line "| lazy | 1 | **55.0** | 55.0 |" "$tmp/w.md"
expect_error "no runs matching --where" "$ATTNBENCH" results table --sweep mini --db "$db" \
  --where "attention.variant=x' OR '1'='1"
expect_error "did you mean 'attention.variant'" "$ATTNBENCH" results table --sweep mini --db "$db" \
  --where attention.varient=lazy
expect_error "no sweep 'mni'" "$ATTNBENCH" results table --sweep mni --db "$db"
expect_error "registered: csv, json, latex, md" "$ATTNBENCH" results table --sweep mini --db "$db" --format html
# The format is checked before the database is opened (usage errors before any work).
expect_error "unknown table format 'html'" "$ATTNBENCH" results table --sweep mini \
  --db "$tmp/no/such.db" --format html

# runs, show, curves ($ATTNBENCH_DB is the default database).
ATTNBENCH_DB="$db" "$ATTNBENCH" results runs --format csv > "$tmp/runs.csv"
[ "$(wc -l < "$tmp/runs.csv")" = 5 ] || { cat "$tmp/runs.csv"; fail "runs should list 4 runs"; }
"$ATTNBENCH" results runs --db "$db" --status failed --format json > "$tmp/failed.json"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert [x["id"] for x in r]==["l1"] and r[0]["error"]=="boom", r' "$tmp/failed.json"
expect_error "unknown run status 'finshed'" "$ATTNBENCH" results runs --db "$db" --status finshed
"$ATTNBENCH" results show s0 --db "$db" > "$tmp/show.txt"
grep -q "piqa.*acc_norm.*0.5" "$tmp/show.txt" || { cat "$tmp/show.txt"; fail "show lacks the evals"; }
grep -q "loss.*3.25 (step 20)" "$tmp/show.txt" || { cat "$tmp/show.txt"; fail "show lacks the final loss"; }
expect_error "ambiguous" "$ATTNBENCH" results show s --db "$db"
"$ATTNBENCH" results curves s0 --metric loss --db "$db" > "$tmp/c.csv"
expect_line "step,loss,time" "$tmp/c.csv"
expect_line "20,3.25,1" "$tmp/c.csv"
expect_error "did you mean 'loss'" "$ATTNBENCH" results curves s0 --metric los --db "$db"

# sql: reads work, writes are refused before they run (exit 2), nothing changes.
"$ATTNBENCH" results sql "SELECT count(*) AS n FROM runs" --db "$db" --format csv > "$tmp/n.csv"
expect_line "4" "$tmp/n.csv"
expect_error "read-only" "$ATTNBENCH" results sql "DELETE FROM runs" --db "$db"
expect_error "read-only" "$ATTNBENCH" results sql "DROP TABLE metrics" --db "$db"
expect_error "read-only" "$ATTNBENCH" results sql "UPDATE runs SET status='failed'" --db "$db"
expect_error "read-only: ATTACH is refused" "$ATTNBENCH" results sql "ATTACH '$tmp/x.db' AS x" --db "$db"
expect_error "one statement at a time" "$ATTNBENCH" results sql "SELECT 1; DELETE FROM runs" --db "$db"
"$ATTNBENCH" results sql "SELECT count(*) FROM runs WHERE status = 'finished'" --db "$db" --format csv > "$tmp/n.csv"
expect_line "3" "$tmp/n.csv"

# merge: idempotent.
"$ATTNBENCH" results merge "$tmp/m.db" "$db" > "$tmp/merge1"
expect_line "  runs: 4 added, 0 replaced, 0 kept" "$tmp/merge1"
expect_line "  evals: 6 added, 0 replaced, 0 kept" "$tmp/merge1"
"$ATTNBENCH" results merge "$tmp/m.db" "$db" > "$tmp/merge2"
expect_line "  runs: 0 added, 0 replaced, 4 kept" "$tmp/merge2"
expect_line "  evals: 0 added, 0 replaced, 6 kept" "$tmp/merge2"
"$ATTNBENCH" results sql "SELECT count(*) FROM evals" --db "$tmp/m.db" --format csv > "$tmp/n.csv"
expect_line "6" "$tmp/n.csv"
expect_error "is the output itself" "$ATTNBENCH" results merge "$tmp/m.db" "$tmp/m.db"
echo "results cli: all checks passed"
