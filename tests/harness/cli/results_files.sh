#!/usr/bin/env bash
# The results store against hostile files, end to end (docs/results.md): `results merge` keeps the
# union of evaluations (a task added in one array task survives in both directions); OUT must be an
# attnbench database (a text file or another application's database is refused, untouched); a
# `.dump` restore (which loses PRAGMA user_version) is read and merged; read-only commands never
# create a file and work in a read-only folder; SQLite errors name the file. Fixtures are written
# with Python's sqlite3 (its iterdump() is the `sqlite3 .dump` of the CLI).
set -euo pipefail
: "${ATTNBENCH:?path of the attnbench binary}"
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*"; exit 1; }
expect_error() {  # $1 = exit code, $2 = expected substring of stderr, rest = command
  local code=$1 want=$2; shift 2
  set +e
  "$@" > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  set -e
  [ "$rc" = "$code" ] || { cat "$tmp/err"; fail "exit $rc (expected $code) for: $*"; }
  grep -qF -- "$want" "$tmp/err" || { cat "$tmp/err"; fail "'$want' not in stderr of: $*"; }
}
expect_line() {  # $1 = exact line, $2 = file
  grep -qxF -- "$1" "$2" || { cat "$2"; fail "line '$1' missing"; }
}
sql() { "$ATTNBENCH" results sql "$1" --db "$2" --format csv | tail -n +2; }
# Checks of fixtures read them with Python (attnbench starts in half a second; Python at once).
pysql() { python3 -c 'import sqlite3,sys; print(*sqlite3.connect(sys.argv[2]).execute(sys.argv[1]).fetchone())' "$1" "$2"; }
"$ATTNBENCH" results merge "$tmp/schema.db" > /dev/null

# A database with run r1 of sweep sw, finished at $2, evaluated on the tasks "task:time" in $3...
make_db() {
  local db=$1 finished=$2; shift 2
  cp "$tmp/schema.db" "$db"
  python3 - "$db" "$finished" "$@" <<'PY'
import sqlite3, sys
db, finished, evals = sys.argv[1], sys.argv[2], sys.argv[3:]
c = sqlite3.connect(db)
c.execute("INSERT INTO sweeps(name, created) VALUES ('sw', '2026-01-01T00:00:00.000Z')")
c.execute("INSERT INTO runs(id, sweep, cell, status, config, created, finished) "
          "VALUES ('r1', 'sw', 'c', 'finished', '{}', '2026-01-01T00:00:00.000Z', ?)", (finished,))
c.execute("INSERT INTO sweep_runs(sweep, run, cell) VALUES ('sw', 'r1', 'c')")
c.execute("INSERT INTO params(run, key, value, type) VALUES ('r1', 'attention.variant', 'lazy', 'string')")
for item in evals:
    task, time = item.split(":")
    c.execute("INSERT INTO evals(run, task, metric, value, stderr, n, time) "
              "VALUES ('r1', ?, 'acc', 0.5, 0.01, 100, ?)", (task, float(time)))
c.commit()
PY
}
early=2026-01-01T01:00:00.000Z
late=2026-01-02T01:00:00.000Z

# 1. A sweep added a task: IN has it, OUT does not. It is added (the run row stays OUT's)...
make_db "$tmp/out.db" "$early" piqa:1000
make_db "$tmp/in.db" "$early" piqa:1000 hellaswag:2000
"$ATTNBENCH" results merge "$tmp/out.db" "$tmp/in.db" > "$tmp/m1"
expect_line "  runs: 0 added, 0 replaced, 1 kept" "$tmp/m1"
expect_line "  evals: 1 added, 0 replaced, 1 kept" "$tmp/m1"
[ "$(pysql "SELECT group_concat(task, ' ') FROM (SELECT task FROM evals ORDER BY rowid)" "$tmp/out.db")" = \
  "piqa hellaswag" ] || fail "hellaswag lost"
# ...and when IN's copy of the run wins (it finished first), OUT's extra task is not deleted.
make_db "$tmp/out2.db" "$late" piqa:1000 hellaswag:2000
make_db "$tmp/in2.db" "$early" piqa:1000
"$ATTNBENCH" results merge "$tmp/out2.db" "$tmp/in2.db" > "$tmp/m2"
expect_line "  runs: 0 added, 1 replaced, 0 kept" "$tmp/m2"
expect_line "  evals: 0 added, 0 replaced, 1 kept" "$tmp/m2"
[ "$(pysql "SELECT count(*) FROM evals" "$tmp/out2.db")" = 2 ] || fail "OUT's hellaswag deleted"
"$ATTNBENCH" results table --sweep sw --db "$tmp/out2.db" --format csv | grep -q "hellaswag" ||
  fail "the table lacks hellaswag"

# 2. OUT that is not an attnbench database: refused (exit 2), left as it was.
printf 'not a database\n' > "$tmp/notes.txt"
cp "$tmp/notes.txt" "$tmp/notes.before"
expect_error 2 "$tmp/notes.txt: opening the database failed: file is not a database" \
  "$ATTNBENCH" results merge "$tmp/notes.txt" "$tmp/in.db"
cmp -s "$tmp/notes.txt" "$tmp/notes.before" || fail "the text file was changed"
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("CREATE TABLE contacts(name)"); c.commit()' "$tmp/app.db"
cp "$tmp/app.db" "$tmp/app.before"
expect_error 2 "$tmp/app.db: not an attnbench results database: it holds table(s) contacts" \
  "$ATTNBENCH" results merge "$tmp/app.db" "$tmp/in.db"
cmp -s "$tmp/app.db" "$tmp/app.before" || fail "the other application's database was changed"
# As an input too, before OUT is created.
expect_error 2 "$tmp/app.db: not an attnbench results database" \
  "$ATTNBENCH" results merge "$tmp/new.db" "$tmp/in.db" "$tmp/app.db"
[ ! -e "$tmp/new.db" ] || fail "OUT was created although an input was refused"
# An empty file holds nothing to lose: merging into it creates the schema.
: > "$tmp/empty.db"
expect_error 2 "$tmp/empty.db: an empty database" "$ATTNBENCH" results runs --db "$tmp/empty.db"
"$ATTNBENCH" results merge "$tmp/empty.db" "$tmp/in.db" | grep -qxF "  runs: 1 added, 0 replaced, 0 kept" ||
  fail "merge into an empty file"

# 3. A dump-and-restore database (user_version lost) is read as is, merged, then stamped.
python3 - "$tmp/in.db" "$tmp/restored.db" <<'PY'
import sqlite3, sys
src, dst = sqlite3.connect(sys.argv[1]), sqlite3.connect(sys.argv[2])
dst.executescript("\n".join(src.iterdump()))
assert dst.execute("PRAGMA user_version").fetchone()[0] == 0
PY
[ "$(sql "SELECT count(*) FROM evals" "$tmp/restored.db")" = 2 ] || fail "restored db not readable"
"$ATTNBENCH" results merge "$tmp/from_restored.db" "$tmp/restored.db" | grep -qxF "  evals: 2 added, 0 replaced, 0 kept" ||
  fail "merge from the restored db"
"$ATTNBENCH" results merge "$tmp/restored.db" "$tmp/out.db" | grep -qxF "  runs: 0 added, 0 replaced, 1 kept" ||
  fail "merge into the restored db"
[ "$(pysql "PRAGMA user_version" "$tmp/restored.db")" = 4 ] || fail "the restored db was not stamped (version 4)"

# 4. Read-only commands never create a database.
for cmd in "results runs" "results sql SELECT"; do
  expect_error 2 "no results database at $tmp/none/r.db" "$ATTNBENCH" $cmd --db "$tmp/none/r.db"
done
[ ! -e "$tmp/none" ] || fail "a read-only command created $tmp/none"

# 5. A read-only folder (chmod a-w on the file and the folder, no -wal/-shm): every reader works and
# nothing is written there. Root ignores permissions, so as root the readers run as nobody.
as_reader=()
if [ "$(id -u)" = 0 ]; then
  command -v setpriv > /dev/null || { echo "results files: all checks passed (read-only folder skipped: no setpriv)"; exit 0; }
  as_reader=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
  chmod 755 "$tmp"
fi
mkdir "$tmp/ro"
cp "$tmp/out.db" "$tmp/ro/r.db"
[ ! -e "$tmp/ro/r.db-wal" ] && [ ! -e "$tmp/ro/r.db-shm" ] || fail "fixture has a -wal or -shm"
chmod a-w "$tmp/ro/r.db" "$tmp/ro"
mkdir -m 777 "$tmp/page"
for cmd in "results show r1" "results table --sweep sw"; do
  "${as_reader[@]}" "$ATTNBENCH" $cmd --db "$tmp/ro/r.db" > /dev/null || fail "$cmd on a read-only folder"
done
[ "$("${as_reader[@]}" "$ATTNBENCH" results sql "SELECT count(*) FROM evals" --db "$tmp/ro/r.db" --format csv | tail -1)" = 2 ] ||
  fail "sql on a read-only folder"
"${as_reader[@]}" "$ATTNBENCH" report --sweep sw --out "$tmp/page/r" --db "$tmp/ro/r.db" --no-heatmaps > /dev/null ||
  fail "report on a read-only folder"
[ "$(ls "$tmp/ro")" = r.db ] || { ls -la "$tmp/ro"; fail "a reader wrote into the read-only folder"; }
# A writer there fails with the file and the reason.
expect_error 1 "$tmp/ro/r.db: opening the database failed: attempt to write a readonly database" \
  "${as_reader[@]}" "$ATTNBENCH" results merge "$tmp/ro/r.db" "$tmp/in.db"
echo "results files: all checks passed"
