# A full disk while a checkpoint is written (write() fails with ENOSPC, injected by
# tests/harness/cli/fault_shim.c): exit 1 naming the file and the cause, the previous checkpoint
# intact, no staging folder left, and the same command then resumes and trains exactly the losses
# of an uninterrupted run. Also a failing fsync.
source "$(dirname "$0")/train_fixture.bash"
source "$(dirname "$0")/fault_shim.bash"
build_fault_shim "$WORK"
copy_task_shard "$WORK/train.bin" 400 1
copy_task_shard "$WORK/val.bin" 50 2
write_config   # 40 steps, a checkpoint every 10
run() { "$ATTNBENCH" train --config "$WORK/run.toml" --out "$1" --quiet; }

run "$WORK/straight" > /dev/null
# Room for one checkpoint and a half: the first one is written, the second runs out of space.
bytes=$(cat "$WORK/straight/checkpoint"/* | wc -c)
export FAULT_SHIM_PATH=checkpoint.tmp FAULT_SHIM_WRITE_BYTES=$((bytes * 3 / 2))
expect_fail 1 "No space left on device" env LD_PRELOAD="$FAULT_SHIM" \
  "$ATTNBENCH" train --config "$WORK/run.toml" --out "$WORK/full" --quiet
grep -q "cannot write the checkpoint of step 20" "$WORK/err" || { echo "FAIL: message"; cat "$WORK/err"; exit 1; }
grep -q "$WORK/full/checkpoint is intact" "$WORK/err" || { echo "FAIL: message"; cat "$WORK/err"; exit 1; }
grep -q '"step": 10' "$WORK/full/checkpoint/MANIFEST.json" || { echo "FAIL: checkpoint of step 10 lost"; exit 1; }
[[ ! -e "$WORK/full/checkpoint.tmp" ]] || { echo "FAIL: staging folder left behind"; exit 1; }

# The first checkpoint's fsync fails: nothing was published, and the message says so.
expect_fail 1 "fsync: No space left on device" env LD_PRELOAD="$FAULT_SHIM" FAULT_SHIM_WRITE_BYTES= \
  FAULT_SHIM_FSYNC=1 "$ATTNBENCH" train --config "$WORK/run.toml" --out "$WORK/nosync" --quiet
grep -q "No checkpoint was written yet" "$WORK/err" || { echo "FAIL: message"; cat "$WORK/err"; exit 1; }
[[ ! -e "$WORK/nosync/checkpoint" && ! -e "$WORK/nosync/checkpoint.tmp" ]] \
  || { echo "FAIL: a checkpoint folder was left"; ls "$WORK/nosync"; exit 1; }
unset FAULT_SHIM_PATH FAULT_SHIM_WRITE_BYTES

# Space again: the same command resumes from step 10 and ends where the straight run did.
run "$WORK/full" > /dev/null
diff <(losses "$WORK/straight/metrics.jsonl") <(losses "$WORK/full/metrics.jsonl") \
  || { echo "FAIL: losses after the failed checkpoint and resume differ"; exit 1; }
echo PASS
