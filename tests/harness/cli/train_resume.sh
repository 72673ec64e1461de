# Kill -9 mid-run, run the same command again: the losses equal an uninterrupted run's exactly.
# Ctrl-C (SIGINT) stops gracefully: checkpoint, exit 130, and the same command resumes.
source "$(dirname "$0")/train_fixture.bash"
copy_task_shard "$WORK/train.bin" 400 1
copy_task_shard "$WORK/val.bin" 50 2
write_config
run() { "$ATTNBENCH" train --config "$WORK/run.toml" --set train.steps=300 --out "$1" --quiet "${@:2}"; }
# Starts the binary itself in the background (not a subshell), so that $pid is the trainer's.
start() { "$ATTNBENCH" train --config "$WORK/run.toml" --set train.steps=300 --out "$1" --quiet & pid=$!; }

run "$WORK/straight" > /dev/null

# Kill once the first checkpoint exists (if the run is already done, resuming is a no-op: still
# equal).
start "$WORK/killed" > /dev/null
for _ in $(seq 600); do [[ -d "$WORK/killed/checkpoint" ]] && break; sleep 0.05; done
kill -9 "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
run "$WORK/killed" > /dev/null
diff <(losses "$WORK/straight/metrics.jsonl") <(losses "$WORK/killed/metrics.jsonl") \
  || { echo "FAIL: losses after kill and resume differ"; exit 1; }
[[ $(losses "$WORK/killed/metrics.jsonl" | wc -l) -eq 300 ]] || { echo "FAIL: not 300 loss lines"; exit 1; }
grep -q '"status": "finished"' "$WORK/killed/status.json" || { echo "FAIL: status"; exit 1; }

# SIGINT: graceful stop with a checkpoint and exit 130; the same command finishes the run.
start "$WORK/interrupted" > /dev/null
for _ in $(seq 600); do [[ -d "$WORK/interrupted/checkpoint" ]] && break; sleep 0.05; done
kill -INT "$pid" 2>/dev/null || true
rc=0; wait "$pid" || rc=$?
if [[ $rc -eq 130 ]]; then
  grep -q '"status": "interrupted"' "$WORK/interrupted/status.json" || { echo "FAIL: status"; exit 1; }
elif [[ $rc -ne 0 ]]; then
  echo "FAIL: SIGINT gave exit $rc (expected 130, or 0 if the run had already finished)"; exit 1
fi
run "$WORK/interrupted" > /dev/null
diff <(losses "$WORK/straight/metrics.jsonl") <(losses "$WORK/interrupted/metrics.jsonl") \
  || { echo "FAIL: losses after SIGINT and resume differ"; exit 1; }
echo PASS
