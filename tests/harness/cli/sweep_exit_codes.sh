#!/usr/bin/env bash
# A sweep's exit code tells whether every cell finished (docs/sweeps.md, "Running: resume and
# skip"): a failed cell, a cell left running by a process that is gone and a cell whose run folder
# was busy exit 1 with a line naming them on stderr; a cell that another live process holds is
# waited for, then settled here. A busy run folder leaves its cell interrupted (resumable), not
# failed.
set -euo pipefail
source "$(dirname "$0")/sweep_fixture.bash"
tmp=$(mktemp -d)
holder=""
trap '[ -z "$holder" ] || kill "$holder" 2>/dev/null || true; rm -rf "$tmp"' EXIT

make_sweep "$tmp" 2>/dev/null
# Two cells of 4 steps each, no tasks: seconds to train.
printf '[sweep]\nname = "exits"\nbase = "base.toml"\n[grid]\n"attention.variant" = ["softmax", "alibi"]\n"train.steps" = [4]\n' \
  > "$tmp/two.toml"
db=$tmp/results.db
args=("$tmp/two.toml" --db "$db" --runs-dir "$tmp/runs" --quiet)
ids=($("$ATTNBENCH" sweep "$tmp/two.toml" --dry-run --db "$tmp/none.db" | grep -oE '^[0-9a-f]{12}'))
[ "${#ids[@]}" = 2 ] || fail "expected two cells"
a=${ids[0]}

run_sweep() {  # run_sweep EXPECTED_RC ARGS...: stdout in $tmp/out, stderr in $tmp/err
  local want=$1; shift
  local rc=0
  "$ATTNBENCH" sweep "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
  [ "$rc" = "$want" ] || { cat "$tmp/out" "$tmp/err"; fail "exit $rc (expected $want) for: sweep $*"; }
}
status() { sql "$db" "SELECT status FROM runs WHERE id = '$1'"; }

run_sweep 0 "${args[@]}"
[ "$(status "$a")" = finished ] || fail "the first run should finish $a"

# --- a cell that failed before: skipped, and the sweep says so (exit 1) ----------------------------
for jobs in 1 2; do
  sqlite3 "$db" "UPDATE runs SET status = 'failed', error = 'boom' WHERE id = '$a'"
  run_sweep 1 "${args[@]}" --jobs "$jobs"
  grep -q "1 cell(s) did not finish: $a (variant=softmax)" "$tmp/err" ||
    { cat "$tmp/err"; fail "--jobs $jobs: the summary should name the failed cell"; }
  grep -q "$a variant=softmax: failed: boom (--retry-failed runs it again)" "$tmp/err" ||
    { cat "$tmp/err"; fail "--jobs $jobs: the reason should follow"; }
done
run_sweep 0 "${args[@]}" --retry-failed
[ "$(status "$a")" = finished ] || fail "--retry-failed should finish $a"

# --- a cell marked running: by a live process (not ours to finish), or by one that is gone ---------
mark_running() {  # mark_running AGE_S: held by another host, silent for AGE_S seconds
  sqlite3 "$db" "UPDATE runs SET status = 'running', owner_host = 'elsewhere', owner_pid = 1,
                 heartbeat = CAST(strftime('%s', 'now') AS REAL) - $1 WHERE id = '$a'"
}
# A live holder is waited for (its results are not stored yet), then the cell is settled here: a
# sweep that exited 0 while another process still ran its cell said nothing true about it.
sleep 60 &
holder=$!
sqlite3 "$db" "UPDATE runs SET status = 'running', owner_host = '$(hostname)', owner_pid = $holder,
               heartbeat = CAST(strftime('%s', 'now') AS REAL) WHERE id = '$a'"
"$ATTNBENCH" sweep "${args[@]}" > "$tmp/out" 2> "$tmp/err" &
runner=$!
for _ in $(seq 300); do grep -q "waiting for 1 cell(s) running in other processes: $a" "$tmp/out" && break; sleep 0.1; done
grep -q "waiting for 1 cell(s)" "$tmp/out" || { cat "$tmp/out" "$tmp/err"; fail "a live holder should be waited for"; }
sleep 1
kill -0 "$runner" 2>/dev/null || { cat "$tmp/out" "$tmp/err"; fail "the sweep ended while the holder lived"; }
kill "$holder"
rc=0; wait "$runner" || rc=$?
[ "$rc" = 0 ] || { cat "$tmp/out" "$tmp/err"; fail "exit $rc after the holder ended"; }
[ "$(status "$a")" = finished ] || fail "the cell of a holder that ended should be taken over"
# Under --only (a child of --jobs, a Slurm task) nothing waits: the holder's cell is reported.
mark_running 0
run_sweep 1 "${args[@]}" --only "$a"
grep -q "$a variant=softmax: still running in elsewhere:1: not finished" "$tmp/err" ||
  { cat "$tmp/err"; fail "a live holder under --only should be reported"; }
mark_running 600  # through a child of --jobs, which claims (and here skips) running cells itself
run_sweep 1 "${args[@]}" --jobs 2
grep -q "$a variant=softmax: marked running by elsewhere:1, which is gone or silent" "$tmp/err" ||
  { cat "$tmp/err"; fail "a silent holder should be reported"; }
# On this host, a holder whose pid is gone: the claim takes the cell over and finishes it.
sqlite3 "$db" "UPDATE runs SET status = 'running', owner_host = '$(hostname)', owner_pid = 999999999,
               heartbeat = CAST(strftime('%s', 'now') AS REAL) WHERE id = '$a'"
run_sweep 0 "${args[@]}" --only "$a"
[ "$(status "$a")" = finished ] || fail "a dead holder's cell should be taken over"

# --- a busy run folder: the cell is left interrupted, and the same command resumes it -------------
rm -rf "$db" "$tmp/runs"
mkdir -p "$tmp/runs/$a"
# The lock belongs to fd 9, which `sleep` inherits by exec: killing it releases the lock.
(exec 9> "$tmp/runs/$a/.lock"; flock -x 9; touch "$tmp/locked"; exec sleep 60) &
holder=$!
for _ in $(seq 100); do [ -e "$tmp/locked" ] && break; sleep 0.1; done
run_sweep 1 "${args[@]}"
[ "$(status "$a")" = interrupted ] || fail "a busy run folder should leave $a interrupted, not $(status "$a")"
grep -q "$a variant=softmax: interrupted: run folder .* is being trained by another process" "$tmp/err" ||
  { cat "$tmp/err"; fail "the reason should name the busy run folder"; }
[ "$(status "${ids[1]}")" = finished ] || fail "the other cell should still run"
kill "$holder"; wait "$holder" 2>/dev/null || true; holder=""
run_sweep 0 "${args[@]}"
[ "$(status "$a")" = finished ] || fail "the interrupted cell should resume"

echo ok
