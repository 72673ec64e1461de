#!/usr/bin/env bash
# Multi-rank cells (docs/sweeps.md, "Multi-GPU and multi-node cells") on the CPU, with Gloo:
#  1. a one-cell sweep with --gpus-per-cell 2 trains as two local ranks; the store gets every
#     step's training loss, the same as a one-process run's, and (with $ATTNBENCH_DATA) the scores;
#  2. Ctrl-C interrupts the cell (exit 130); a rank killed mid-run leaves it interrupted with the
#     reason and the sweep exits 1; the same command resumes the cell to the losses of an
#     uninterrupted run;
#  3. inside a Slurm allocation (SLURM_JOB_ID set, a fake srun first on PATH that starts the tasks
#     as srun would) a 2 nodes x 2 GPUs cell runs as one srun job step; a failed step leaves the
#     cell resumable; SIGTERM stops the ranks cleanly;
#  4. launches that cannot run are usage errors before any work.
set -euo pipefail
source "$(dirname "$0")/sweep_fixture.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset SLURM_JOB_ID MASTER_ADDR MASTER_PORT RANK WORLD_SIZE  # parts 1, 2 and 4 run outside Slurm

make_sweep "$tmp"
tasks=""
[ -n "${ATTNBENCH_DATA:-}" ] && tasks='tasks = ["copa"]'
printf '[sweep]\nname = "dist"\nbase = "base.toml"\n%s\nlimit = 4\n' "$tasks" > "$tmp/one.toml"

cell_id() {  # cell_id [SWEEP OPTIONS...]: the run id of one.toml's cell
  "$ATTNBENCH" sweep "$tmp/one.toml" --dry-run --db "$tmp/none.db" "$@" | grep -oE '^[0-9a-f]{12}'
}

# check_cell DB ID STEPS: finished, steps 1..STEPS of the training loss each stored once, and the
# task scored when there is data.
check_cell() {
  local db=$1 id=$2 steps=$3
  [ "$(sql "$db" "SELECT status FROM runs WHERE id = '$id'")" = finished ] ||
    fail "cell $id not finished: $(sql "$db" "SELECT status, error FROM runs WHERE id = '$id'")"
  [ "$(sql "$db" "SELECT count(*) || ' ' || count(DISTINCT step) || ' ' || min(step) || ' ' || max(step)
                  FROM metrics WHERE run = '$id' AND key = 'train/loss'")" = "$steps $steps 1 $steps" ] ||
    fail "training-loss rows of $id: $(sql "$db" "SELECT count(*), min(step), max(step) FROM metrics WHERE run = '$id' AND key = 'train/loss'")"
  [ "$(sql "$db" "SELECT count(*) FROM metrics WHERE run = '$id' AND key = 'val/loss'")" -gt 0 ] ||
    fail "no validation loss for $id"
  if [ -n "${ATTNBENCH_DATA:-}" ]; then
    [ "$(sql "$db" "SELECT count(*) FROM evals WHERE run = '$id' AND task = 'copa'")" -gt 0 ] ||
      fail "copa not scored for $id"
  fi
}

# same_losses DB REF_DB ID: every training loss of ID equals the reference's (to reduction order).
same_losses() {
  local differ
  differ=$(sqlite3 -readonly "$1" "ATTACH '$2' AS ref;
    SELECT count(*) FROM metrics a JOIN ref.metrics b ON b.run = a.run AND b.key = a.key AND b.step = a.step
    WHERE a.run = '$3' AND a.key = 'train/loss' AND abs(a.value - b.value) > 1e-4 * abs(b.value)")
  [ "$differ" = 0 ] || fail "$differ training losses of $3 differ from the one-process run"
}

# --- 1. two local ranks ---------------------------------------------------------------------------
id=$(cell_id)
"$ATTNBENCH" sweep "$tmp/one.toml" --db "$tmp/ref.db" --runs-dir "$tmp/ref" --quiet \
  > "$tmp/ref.log" 2>&1 || { cat "$tmp/ref.log"; fail "the one-process sweep"; }
"$ATTNBENCH" sweep "$tmp/one.toml" --gpus-per-cell 2 --db "$tmp/local.db" --runs-dir "$tmp/local" \
  --quiet > "$tmp/local.log" 2>&1 || { cat "$tmp/local.log"; fail "the two-rank sweep"; }
check_cell "$tmp/local.db" "$id" 20
same_losses "$tmp/local.db" "$tmp/ref.db" "$id"
grep -q "x 2 ranks" <<< "$(sql "$tmp/local.db" "SELECT device FROM runs WHERE id = '$id'")" ||
  fail "the run's device should say it trained on 2 ranks"
# The ranks' config file is the cell's resolved config: the same run id.
"$ATTNBENCH" train --config "$tmp/local/$id/cell-config.json" --dry-run 2>/dev/null |
  grep -q "^run id: $id$" || fail "cell-config.json is not the cell's run"

# --- 2. Ctrl-C, then a rank killed mid-run -------------------------------------------------------
long=(--set train.steps=80)
id=$(cell_id "${long[@]}")
"$ATTNBENCH" sweep "$tmp/one.toml" "${long[@]}" --db "$tmp/ref.db" --runs-dir "$tmp/ref" --quiet \
  > "$tmp/ref.log" 2>&1 || { cat "$tmp/ref.log"; fail "the one-process sweep of 80 steps"; }
start_long() {  # the 80-step cell on two local ranks, in the background: $sweep_pid
  "$ATTNBENCH" sweep "$tmp/one.toml" "${long[@]}" --gpus-per-cell 2 --db "$tmp/crash.db" \
    --runs-dir "$tmp/crash" > "$tmp/crash.log" 2>&1 &
  sweep_pid=$!
}
wait_for_step() {  # wait_for_step N: until the cell's metrics.jsonl has step N's training loss
  for _ in $(seq 600); do
    grep -q "\"key\":\"train/loss\",\"step\":$1," "$tmp/crash/$id/metrics.jsonl" 2>/dev/null && return
    sleep 0.05
  done
}
# Ctrl-C reaches the sweep alone (the ranks have their own process group): passed on, every rank
# checkpoints, the cell is interrupted and the sweep exits 130.
start_long
wait_for_step 6
kill -INT "$sweep_pid"
rc=0
wait "$sweep_pid" || rc=$?
[ "$rc" = 130 ] || { cat "$tmp/crash.log"; fail "exit $rc after Ctrl-C (expected 130)"; }
[ "$(sql "$tmp/crash.db" "SELECT status || '|' || coalesce(error, '') FROM runs WHERE id = '$id'")" = "interrupted|" ] ||
  fail "Ctrl-C should leave the cell interrupted: $(sql "$tmp/crash.db" "SELECT status, error FROM runs")"
# A rank killed: the job fails, the cell is left resumable with the reason, the sweep exits 1.
start_long
wait_for_step 20  # past the step Ctrl-C stopped at: the resumed job runs
rank1=""
for p in $(pgrep -P "$sweep_pid"); do
  tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx 'RANK=1' && rank1=$p
done
[ -n "$rank1" ] || { kill "$sweep_pid"; cat "$tmp/crash.log"; fail "rank 1 of the sweep's cell not found"; }
kill -9 "$rank1"
rc=0
wait "$sweep_pid" || rc=$?
[ "$rc" = 1 ] || { cat "$tmp/crash.log"; fail "exit $rc after a rank was killed (expected 1)"; }
[ "$(sql "$tmp/crash.db" "SELECT status FROM runs WHERE id = '$id'")" = interrupted ] ||
  fail "a cell whose rank died should be interrupted: $(sql "$tmp/crash.db" "SELECT status, error FROM runs")"
sql "$tmp/crash.db" "SELECT error FROM runs WHERE id = '$id'" | grep -q "training job failed" ||
  fail "the run's error should say that the training job failed"
grep -q "rank 1 (pid $rank1) was killed by signal 9" "$tmp/crash.log" ||
  { cat "$tmp/crash.log"; fail "the log should name the killed rank"; }
"$ATTNBENCH" sweep "$tmp/one.toml" "${long[@]}" --gpus-per-cell 2 --db "$tmp/crash.db" \
  --runs-dir "$tmp/crash" --quiet > "$tmp/resume.log" 2>&1 || { cat "$tmp/resume.log"; fail "resume"; }
grep -q "resuming (interrupted before)" "$tmp/resume.log" || { cat "$tmp/resume.log"; fail "not resumed"; }
check_cell "$tmp/crash.db" "$id" 80
same_losses "$tmp/crash.db" "$tmp/ref.db" "$id"

# --- 3. inside Slurm: a fake srun ----------------------------------------------------------------
mkdir -p "$tmp/bin"
cat > "$tmp/bin/srun" <<'SH'
#!/usr/bin/env bash
# srun's part in a job step, on one machine: --nodes=N --ntasks-per-node=G [--other] CMD... starts
# N x G copies of CMD with the task's SLURM_* variables, waits for all, fails when one fails.
echo "srun $*" >> "$FAKE_SRUN_LOG"
echo "MASTER_PORT=${MASTER_PORT:-}" >> "$FAKE_SRUN_LOG"
[ -z "${FAKE_SRUN_FAIL:-}" ] || { echo "srun: error: fake failure" >&2; exit 1; }
nodes=1 per_node=1
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes=*) nodes=${1#*=} ;;
    --ntasks-per-node=*) per_node=${1#*=} ;;
    --*) ;;
    *) break ;;
  esac
  shift
done
ntasks=$((nodes * per_node))
pids=()
for ((r = 0; r < ntasks; r++)); do
  SLURM_PROCID=$r SLURM_NTASKS=$ntasks SLURM_STEP_NUM_TASKS=$ntasks SLURM_LOCALID=$((r % per_node)) \
  SLURM_NODEID=$((r / per_node)) SLURM_STEP_TASKS_PER_NODE="$per_node(x$nodes)" \
  MASTER_ADDR=127.0.0.1 MASTER_PORT=${MASTER_PORT:-29500} "$@" &
  pids+=($!)
done
trap 'kill -TERM "${pids[@]}" 2>/dev/null' TERM INT  # as srun passes SIGTERM on
rc=0
for p in "${pids[@]}"; do
  while true; do  # a trapped signal ends `wait` early: wait again while the task lives
    wait "$p"; s=$?
    [ "$s" -gt 128 ] && kill -0 "$p" 2>/dev/null && continue
    break
  done
  [ "$s" = 0 ] || rc=1
done
exit $rc
SH
chmod +x "$tmp/bin/srun"
job=$(( 1000000 + ($$ * 7 + RANDOM) % 20000 ))
# As if inside allocation $job, with the fake srun (env execs the command: $! is its pid).
slurm=(env PATH="$tmp/bin:$PATH" SLURM_JOB_ID=$job FAKE_SRUN_LOG="$tmp/srun.log")
id=$(cell_id)
rc=0
"${slurm[@]}" FAKE_SRUN_FAIL=1 "$ATTNBENCH" sweep "$tmp/one.toml" --gpus-per-cell 2 --nodes-per-cell 2 \
  --db "$tmp/slurm.db" --runs-dir "$tmp/slurm" --quiet > "$tmp/slurm.log" 2>&1 || rc=$?
[ "$rc" = 1 ] || { cat "$tmp/slurm.log"; fail "exit $rc after srun failed (expected 1)"; }
[ "$(sql "$tmp/slurm.db" "SELECT status FROM runs WHERE id = '$id'")" = interrupted ] ||
  fail "a cell whose srun step failed should be interrupted"
sql "$tmp/slurm.db" "SELECT error FROM runs WHERE id = '$id'" | grep -q "srun exited with status 1" ||
  fail "the run's error should name srun's exit: $(sql "$tmp/slurm.db" "SELECT error FROM runs")"
"${slurm[@]}" "$ATTNBENCH" sweep "$tmp/one.toml" --gpus-per-cell 2 --nodes-per-cell 2 \
  --db "$tmp/slurm.db" --runs-dir "$tmp/slurm" --quiet > "$tmp/slurm.log" 2>&1 ||
  { cat "$tmp/slurm.log"; cat "$tmp/srun.log"; fail "the sweep inside Slurm"; }
check_cell "$tmp/slurm.db" "$id" 20
same_losses "$tmp/slurm.db" "$tmp/ref.db" "$id"
grep -q "^srun --nodes=2 --ntasks-per-node=2 --kill-on-bad-exit=1 .* train --config $tmp/slurm/$id/cell-config.json --out $tmp/slurm/$id --quiet --dist-timeout 300$" \
  "$tmp/srun.log" || { cat "$tmp/srun.log"; fail "the srun command line"; }
grep -qx "MASTER_PORT=$((10000 + job % 20000))" "$tmp/srun.log" ||
  { cat "$tmp/srun.log"; fail "MASTER_PORT should come from the job id"; }
# SIGTERM to the sweep (a time limit, scancel) reaches the ranks through srun: they checkpoint, the
# cell is interrupted, the sweep exits 130.
id=$(cell_id "${long[@]}")
"${slurm[@]}" "$ATTNBENCH" sweep "$tmp/one.toml" "${long[@]}" --gpus-per-cell 2 --nodes-per-cell 2 \
  --db "$tmp/slurm.db" --runs-dir "$tmp/slurm" --quiet > "$tmp/slurm.log" 2>&1 &
sweep_pid=$!
for _ in $(seq 600); do
  grep -q '"key":"train/loss","step":6,' "$tmp/slurm/$id/metrics.jsonl" 2>/dev/null && break
  sleep 0.05
done
kill -TERM "$sweep_pid"
rc=0
wait "$sweep_pid" || rc=$?
[ "$rc" = 130 ] || { cat "$tmp/slurm.log"; fail "exit $rc after SIGTERM inside Slurm (expected 130)"; }
[ "$(sql "$tmp/slurm.db" "SELECT status || '|' || coalesce(error, '') FROM runs WHERE id = '$id'")" = "interrupted|" ] ||
  fail "SIGTERM should leave the cell interrupted: $(sql "$tmp/slurm.db" "SELECT status, error FROM runs")"
grep -q '"status": "interrupted"' "$tmp/slurm/$id/status.json" ||
  fail "the ranks should have stopped cleanly: $(cat "$tmp/slurm/$id/status.json" 2>&1)"

# --- 4. usage errors, before any work ------------------------------------------------------------
expect_error() {  # expect_error SUBSTRING COMMAND...: exit 2 and SUBSTRING on stderr
  local want=$1; shift
  local rc=0
  "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
  [ "$rc" = 2 ] || { cat "$tmp/out" "$tmp/err"; fail "exit $rc (expected 2) for: $*"; }
  grep -qF -- "$want" "$tmp/err" || { cat "$tmp/err"; fail "'$want' not in the error"; }
}
args=("$tmp/one.toml" --db "$tmp/rejected.db" --runs-dir "$tmp/rejected")
expect_error "--nodes-per-cell 2: ranks on several nodes are started by srun" \
  "$ATTNBENCH" sweep "${args[@]}" --nodes-per-cell 2
expect_error "--gpus-per-cell: '0' is not an integer in [1," "$ATTNBENCH" sweep "${args[@]}" --gpus-per-cell 0
expect_error "--jobs 2 cannot be combined with 2 ranks per cell" \
  "$ATTNBENCH" sweep "$tmp/sweep.toml" --jobs 2 --gpus-per-cell 2 --db "$tmp/rejected.db" --runs-dir "$tmp/rejected"
expect_error "cannot be split evenly over 3 ranks" "$ATTNBENCH" sweep "${args[@]}" --gpus-per-cell 3
# Sizes whose product overflowed int (each cell then trained as one local process), and more
# local CPU ranks than cores.
expect_error "--gpus-per-cell: '65536' is not an integer in [1, 1024]" \
  "$ATTNBENCH" sweep "${args[@]}" --gpus-per-cell 65536 --nodes-per-cell 65536
expect_error "--nodes-per-cell: '65537' is not an integer in [1, 65536]" \
  "$ATTNBENCH" sweep "${args[@]}" --nodes-per-cell 65537
expect_error "--gpus-per-cell 1024: 1024 CPU ranks on a machine with" \
  "$ATTNBENCH" sweep "${args[@]}" --gpus-per-cell 1024 --set train.batch_size=1024
[ ! -e "$tmp/rejected" ] && [ ! -e "$tmp/rejected.db" ] || fail "a rejected sweep left files behind"
echo ok
