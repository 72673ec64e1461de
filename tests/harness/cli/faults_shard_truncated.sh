# A training shard truncated while a run trains on it: exit 1 with the shard named (before, the
# memory-mapped shard killed the process with SIGBUS), the checkpoint intact, and once the shard is
# restored the same command resumes from that checkpoint.
source "$(dirname "$0")/train_fixture.bash"
copy_task_shard "$WORK/train.bin" 400 1
copy_task_shard "$WORK/val.bin" 50 2
write_config
cp "$WORK/train.bin" "$WORK/train.good"
# Far more steps than the test waits for: the run is always mid-way when the shard changes.
start() {
  "$ATTNBENCH" train --config "$WORK/run.toml" --set train.steps=100000 --out "$WORK/run" \
    2> "$WORK/err" > /dev/null & pid=$!
}
wait_for() {  # wait_for CONDITION...: up to 30 s
  for _ in $(seq 600); do "$@" && return 0; sleep 0.05; done
  echo "FAIL: timed out waiting for: $*"; kill -9 "$pid" 2>/dev/null; cat "$WORK/err"; exit 1
}
step_of_checkpoint() { sed -n 's/.*"step": \([0-9]*\).*/\1/p' "$WORK/run/checkpoint/MANIFEST.json"; }

start
wait_for test -f "$WORK/run/checkpoint/MANIFEST.json"
truncate -s 4096 "$WORK/train.bin"
rc=0; wait "$pid" || rc=$?
[[ $rc -eq 1 ]] || { echo "FAIL: exit $rc after the shard was truncated, expected 1"; cat "$WORK/err"; exit 1; }
grep -q "$WORK/train.bin: the shard shrank from" "$WORK/err" \
  || { echo "FAIL: the error does not name the shard"; cat "$WORK/err"; exit 1; }
[[ ! -e "$WORK/run/checkpoint.tmp" ]] || { echo "FAIL: a half-written checkpoint was left"; exit 1; }
step=$(step_of_checkpoint)

# Restored, the same command resumes from that checkpoint (stopped with Ctrl-C once it is under way).
cp "$WORK/train.good" "$WORK/train.bin"
start
wait_for grep -q "resuming $WORK/run at step $step" "$WORK/err"
kill -INT "$pid"
rc=0; wait "$pid" || rc=$?
[[ $rc -eq 130 ]] || { echo "FAIL: the resumed run exited $rc, expected 130"; cat "$WORK/err"; exit 1; }
echo PASS
