# attnbench train rejects malformed llm.c shards before any work: exit 2, the file named, what was
# expected, and no run folder created.
source "$(dirname "$0")/train_fixture.bash"
copy_task_shard "$WORK/val.bin" 50 2
write_config

check() {  # check PATTERN: training on the current $WORK/train.bin fails with PATTERN
  expect_fail 2 "$1" "$ATTNBENCH" train --config "$WORK/run.toml" --out "$WORK/run" --quiet
  grep -q "$WORK/train.bin" "$WORK/err" || { echo "FAIL: error does not name the shard"; exit 1; }
  [[ ! -e "$WORK/run" ]] || { echo "FAIL: a run folder was created"; exit 1; }
}

write_shard "$WORK/train.bin" 12345 1 3 1 2 3
check "bad magic 12345"
write_shard "$WORK/train.bin" 20240520 3 3 1 2 3
check "unsupported shard version 3"
write_shard "$WORK/train.bin" 20240520 1 100 1 2 3   # header promises 100 tokens, holds 3
check "truncated or corrupt"
head -c 100 /dev/zero > "$WORK/train.bin"
check "too small for an llm.c shard"
write_shard "$WORK/train.bin" 20240520 2 3 1 2 3       # valid, but shorter than one window
check "fewer than one window"
rm "$WORK/train.bin"
expect_fail 2 "no token shards match" "$ATTNBENCH" train --config "$WORK/run.toml" --out "$WORK/run"
# --dry-run validates the data too.
write_shard "$WORK/train.bin" 12345 1 3 1 2 3
expect_fail 2 "bad magic" "$ATTNBENCH" train --config "$WORK/run.toml" --dry-run
echo PASS
