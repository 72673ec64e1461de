#!/usr/bin/env bash
# The quickstart survives interruption: running it again resumes, and the final table equals an
# uninterrupted run's. The real scripts/quickstart (shrunken budget, quickstart_fixture.bash) runs
# three times into one work folder: killed with SIGKILL (process group, as a closed terminal or the
# OOM killer) once the first checkpoint exists, interrupted with SIGINT (Ctrl-C) once a cell has
# finished, then to the end. Its table and training curves must equal a run that was never stopped.
set -euo pipefail
source "$(dirname "$0")/quickstart_fixture.bash"
quickstart_workspace
export ATTNBENCH_DATA=$tmp/data

quickstart() {  # quickstart WORK: the README's first command, into WORK
  ATTNBENCH_WORK=$1 "$src/scripts/quickstart" >> "$1.log" 2>&1
}
sql() { sqlite3 -readonly -cmd ".timeout 5000" "$1" "$2" 2>/dev/null || true; }
wait_for() {  # wait_for WHAT CONDITION...: poll until the condition holds (at most 5 minutes)
  local what=$1; shift
  local i
  for i in $(seq 3000); do
    if "$@"; then return 0; fi
    sleep 0.1
  done
  fail "waited 5 minutes for $what"
}
has_checkpoint() { compgen -G "$tmp/b/*/checkpoint/MANIFEST.json" > /dev/null; }
has_finished() { [ "$(sql "$tmp/b/attnbench.db" "SELECT count(*) FROM runs WHERE status = 'finished'")" -ge 1 ] 2>/dev/null; }
stop_group() {  # stop_group SIGNAL PID: signal the quickstart's whole process group, wait for it
  kill "-$1" -- "-$2" 2>/dev/null || true
  wait "$2" 2>/dev/null || true
}

quickstart "$tmp/a" || { cat "$tmp/a.log"; fail "the uninterrupted quickstart failed"; }

# setsid: the quickstart leads its own process group, as a command typed in a terminal does.
ATTNBENCH_WORK=$tmp/b setsid "$src/scripts/quickstart" >> "$tmp/b.log" 2>&1 &
pid=$!
wait_for "a first checkpoint" has_checkpoint
stop_group KILL "$pid"
echo "SIGKILL after the first checkpoint: $(sql "$tmp/b/attnbench.db" "SELECT group_concat(status) FROM runs")"

ATTNBENCH_WORK=$tmp/b setsid "$src/scripts/quickstart" >> "$tmp/b.log" 2>&1 &
pid=$!
wait_for "a finished cell" has_finished
stop_group INT "$pid"
echo "SIGINT after a finished cell: $(sql "$tmp/b/attnbench.db" "SELECT group_concat(status) FROM runs")"
[ "$(sql "$tmp/b/attnbench.db" "SELECT count(*) FROM runs WHERE status = 'finished'")" -lt 6 ] ||
  fail "the quickstart finished before it could be interrupted: the test interrupted nothing"

quickstart "$tmp/b" || { tail -40 "$tmp/b.log"; fail "the quickstart did not resume"; }

diff <(quickstart_table "$tmp/a/attnbench.db") <(quickstart_table "$tmp/b/attnbench.db") ||
  fail "the interrupted quickstart's table differs from the uninterrupted one's"
# Run ids differ between the two work folders (the shard paths are part of the config), so the
# curves are compared by cell label.
curves="SELECT s.cell, m.key, m.step, m.value FROM metrics m JOIN sweep_runs s ON s.run = m.run
        WHERE m.key IN ('train/loss', 'val/loss') ORDER BY s.cell, m.key, m.step"
diff <(sql "$tmp/a/attnbench.db" "$curves") <(sql "$tmp/b/attnbench.db" "$curves") > "$tmp/curves.diff" ||
  { head -20 "$tmp/curves.diff"; fail "training curves differ from the uninterrupted quickstart's"; }
[ "$(sql "$tmp/b/attnbench.db" "SELECT count(*) FROM runs WHERE status = 'finished'")" = 6 ] ||
  fail "not every cell finished"
echo "ok: killed and interrupted quickstart = uninterrupted ($(sql "$tmp/b/attnbench.db" \
  "SELECT count(*) FROM metrics WHERE key = 'train/loss'") loss rows)"
