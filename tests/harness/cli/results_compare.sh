#!/usr/bin/env bash
# `attnbench results compare` end to end: a fixture database (Python's sqlite3 into a schema that
# attnbench created) with per-item samples; the McNemar and bootstrap lines with their n and p,
# the same numbers in csv and json, notes on stderr only, and usage errors (exit 2). Then the same
# tests as marks in `results table --baseline`, and the gold signals under `--metric`.
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

"$ATTNBENCH" results merge "$db" > /dev/null   # creates the schema
python3 - "$db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("INSERT INTO sweeps(name, file, created) VALUES ('mini', 'm.toml', '2026-01-01T00:00:00.000Z')")
# One seed each; lazy gets items 0..11 of 30 right where softmax gets 0..4: b = 7, c = 0.
for i, (rid, variant, right) in enumerate([("s0", "softmax", 5), ("l0", "lazy", 12)]):
    t = "2026-01-01T00:00:0%d.000Z" % i
    c.execute("INSERT INTO runs(id, sweep, cell, status, config, created, finished) "
              "VALUES (?, 'mini', ?, 'finished', '{}', ?, ?)", (rid, variant, t, t))
    c.execute("INSERT INTO sweep_runs(sweep, run, cell) VALUES ('mini', ?, ?)", (rid, rid))
    for k, v, ty in [("attention.variant", variant, "string"), ("train.seed", "0", "int")]:
        c.execute("INSERT INTO params(run, key, value, type) VALUES (?, ?, ?, ?)", (rid, k, v, ty))
    c.execute("INSERT INTO evals(run, task, metric, value, stderr, n, time) "
              "VALUES (?, 'copa', 'acc', ?, 0.09, 30, 0)", (rid, right / 30))
    # PIQA: the same accuracy in both runs, a difference of exactly 0.
    c.execute("INSERT INTO evals(run, task, metric, value, stderr, n, time) "
              "VALUES (?, 'piqa', 'acc', 0.5, 0.09, 30, 0)", (rid,))
    for metric, v in [("logprob", -2 + right / 30), ("bits_per_byte", 1.5 - right / 100)]:
        c.execute("INSERT INTO evals(run, task, metric, value, stderr, n, time) "
                  "VALUES (?, 'copa', ?, ?, 0.01, 30, 0)", (rid, metric, v))
    for doc in range(30):
        ok = doc < right
        for req, ll in [(0, -1.0 if ok else -2.0), (1, -2.0 if ok else -1.0)]:
            c.execute("INSERT INTO samples(run, task, doc, request, loglikelihood, is_greedy, "
                      "is_gold, tokens) VALUES (?, 'copa', ?, ?, ?, 0, ?, 2)", (rid, doc, req, ll, req == 0))
c.commit()
PY

"$ATTNBENCH" results compare --sweep mini --baseline attention.variant=softmax --db "$db" \
  > "$tmp/t.txt" 2> "$tmp/t.err"
# McNemar: p = 2 * 2^-7 = 0.015625 over 30 pairs; each line names its test and its n, under its
# row's label, and fits 100 columns.
grep -qx 'attention.variant=lazy' "$tmp/t.txt" || { cat "$tmp/t.txt"; fail "row label"; }
grep -qE '^  copa +acc +McNemar +30 pairs +[-+0-9.e]+ +— +0.016$' "$tmp/t.txt" \
  || { cat "$tmp/t.txt"; fail "McNemar line"; }
grep -qE '^  copa +acc +bootstrap +30 items ' "$tmp/t.txt" || fail "bootstrap line"
grep -qE '^  copa +acc +Welch +1 vs 1 seeds ' "$tmp/t.txt" || fail "Welch line"
# No difference is printed as 0, without a sign that would read as a gain.
grep -qE '^  piqa +acc +Welch +1 vs 1 seeds +0 ' "$tmp/t.txt" || { cat "$tmp/t.txt"; fail "a zero difference"; }
grep -qF "McNemar = McNemar exact, two-sided (items)" "$tmp/t.txt" || fail "test legend"
python3 -c 'import sys; sys.exit(any(len(l.rstrip("\n")) > 100 for l in open(sys.argv[1], encoding="utf-8")))' "$tmp/t.txt" || { cat "$tmp/t.txt"; fail "a line over 100 columns"; }
"$ATTNBENCH" results compare --sweep mini --baseline attention.variant=softmax --db "$db" --details \
  > "$tmp/d.txt" 2> /dev/null
grep -qE '^      baseline .*no p: needs >= 2 seeds' "$tmp/d.txt" || { cat "$tmp/d.txt"; fail "--details"; }
grep -qF "note: baseline: attention.variant=softmax (1 finished run(s))" "$tmp/t.err" || fail "note"
grep -q "note" "$tmp/t.txt" && fail "notes belong on stderr"

"$ATTNBENCH" results compare --sweep mini --baseline s0 --format csv --db "$db" > "$tmp/c.csv" 2> /dev/null
head -1 "$tmp/c.csv" | grep -qxF "row,task,metric,test,n,baseline,value,diff,se,unpaired_se,p,detail" || fail "csv header"
grep -qF '"McNemar exact, two-sided (items)",30 pairs,0.166667,0.4,0.233333,,,0.015625,' "$tmp/c.csv" \
  || { cat "$tmp/c.csv"; fail "csv McNemar line"; }
"$ATTNBENCH" results compare --sweep mini --baseline s0 --format json --db "$db" 2> /dev/null \
  | python3 -c "import json,sys; r=[x for x in json.load(sys.stdin) if x['test'].startswith('McNemar')]; assert r[0]['p']==0.015625 and r[0]['n']=='30 pairs', r"

# The same seed gives the same bootstrap; another seed may not.
a=$("$ATTNBENCH" results compare --sweep mini --baseline s0 --format csv --db "$db" 2> /dev/null)
b=$("$ATTNBENCH" results compare --sweep mini --baseline s0 --format csv --db "$db" 2> /dev/null)
[ "$a" = "$b" ] || fail "the bootstrap is not reproducible"

expect_error "matches no row" "$ATTNBENCH" results compare --sweep mini --baseline attention.variant=alibi --db "$db"
expect_error "did you mean" "$ATTNBENCH" results compare --sweep mini --baseline attention.varaint=softmax --db "$db"
expect_error "no run 'zz'" "$ATTNBENCH" results compare --sweep mini --baseline zz --db "$db"
expect_error "--seed: '-1' is not an integer >= 0" "$ATTNBENCH" results compare --sweep mini --seed -1 --db "$db"
expect_error "unknown format" "$ATTNBENCH" results compare --sweep mini --baseline s0 --format md --db "$db"
expect_error "--resamples" "$ATTNBENCH" results compare --sweep mini --baseline s0 --resamples 0 --db "$db"
expect_error "no results database" "$ATTNBENCH" results compare --sweep mini --baseline s0 --db "$tmp/none.db"
# The table marks the cell by the very line above (the bootstrap's p of 30 items) and says so.
"$ATTNBENCH" results table --sweep mini --baseline attention.variant=softmax --metric acc --db "$db" > "$tmp/b.md"
grep -qxF "| softmax (baseline) | 1 | 16.7 | 50.0 | 33.3 |" "$tmp/b.md" || { cat "$tmp/b.md"; fail "baseline row"; }
grep -qxF "| lazy | 1 | **40.0** ▲ | 50.0 | 45.0 |" "$tmp/b.md" || { cat "$tmp/b.md"; fail "marked row"; }
grep -qF "(paired bootstrap, two-sided (items) of acc, 30 items)." "$tmp/b.md" || fail "test and n of the mark"
grep -qF "see attnbench results compare --sweep mini --baseline attention.variant=softmax" "$tmp/b.md" \
  || fail "the footnote names compare"
"$ATTNBENCH" results table --sweep mini --baseline s0 --metric bits_per_byte --format json --db "$db" \
  | python3 -c "import json,sys; j=json.load(sys.stdin); c=j['rows'][1]['cells'][0]; \
assert j['columns'][0]['metric']=='bits_per_byte' and c['mean']==1.38 and c['vs_baseline']['mark']=='better' \
and c['vs_baseline']['measure']=='gold_loglikelihood' and c['vs_baseline']['n']=='30 items', j"
"$ATTNBENCH" results table --sweep mini --metric logprob --format csv --db "$db" > "$tmp/l.csv"
head -1 "$tmp/l.csv" | grep -q "^attention.variant,n,copa/logprob," || { cat "$tmp/l.csv"; fail "logprob column"; }
expect_error "did you mean 'logprob'" "$ATTNBENCH" results table --sweep mini --metric logprobs --db "$db"
expect_error "valid: auto, acc, acc_norm, logprob, bits_per_byte" "$ATTNBENCH" results compare --sweep mini --baseline s0 --metric bpb --db "$db"
expect_error "matches no row" "$ATTNBENCH" results table --sweep mini --baseline attention.variant=alibi --db "$db"
echo "results_compare: ok"
