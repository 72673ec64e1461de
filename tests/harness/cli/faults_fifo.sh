# A FIFO (or another non-regular file) where an input file belongs is refused at once with exit 2,
# the path and the config key named: before, open() blocked forever waiting for a writer, in
# `train --dry-run` too. Covers data.train, data.val, a folder of shards holding a FIFO, `data
# prepare --input`, the tokenizer files, the run config, a sweep file and its base config, and
# `tokenize --file`.
source "$(dirname "$0")/train_fixture.bash"
copy_task_shard "$WORK/val.bin" 50 2
write_config
mkfifo "$WORK/train.bin"
# `timeout` turns a regression (a hang) into a failure instead of a stuck test.
run() { timeout 20 "$ATTNBENCH" "$@"; }

expect_fail 2 "shard $WORK/train.bin is a FIFO (named pipe), expected a regular file" \
  run train --config "$WORK/run.toml" --dry-run
grep -q 'data.train = "' "$WORK/err" || { echo "FAIL: the key is not named"; cat "$WORK/err"; exit 1; }
expect_fail 2 "is a FIFO" run train --config "$WORK/run.toml" --out "$WORK/run" --quiet
[[ ! -e "$WORK/run/checkpoint" ]] || { echo "FAIL: a checkpoint was written"; exit 1; }

# data.val, and a folder whose *.bin include a FIFO.
rm "$WORK/train.bin"
copy_task_shard "$WORK/train.bin" 50 1
mv "$WORK/val.bin" "$WORK/val.real"
mkfifo "$WORK/val.bin"
expect_fail 2 'data.val = "' run train --config "$WORK/run.toml" --dry-run
mkdir "$WORK/shards"
cp "$WORK/train.bin" "$WORK/shards/a.bin"
mkfifo "$WORK/shards/b.bin"
expect_fail 2 "$WORK/shards/b.bin is a FIFO" \
  run train --config "$WORK/run.toml" --set "data.train=$WORK/shards" --set "data.val=$WORK/val.real" --dry-run

# data prepare: an input, and the tokenizer's files.
mkfifo "$WORK/in.jsonl"
expect_fail 2 "$WORK/in.jsonl" run data prepare --input "$WORK/in.jsonl" --out "$WORK/out" \
  --tokenizer "$WORK"
mkdir "$WORK/tok"
mkfifo "$WORK/tok/vocab.bpe" "$WORK/tok/encoder.json"
expect_fail 2 "is a FIFO" run tokenize --tokenizer "$WORK/tok" "hello"

# The files a command reads first: a run config, a sweep file, a sweep's base config, text.
mkfifo "$WORK/cfg.toml" "$WORK/text.txt"
expect_fail 2 "config $WORK/cfg.toml is a FIFO" run train --config "$WORK/cfg.toml" --dry-run
expect_fail 2 "sweep file $WORK/cfg.toml is a FIFO" run sweep "$WORK/cfg.toml" --dry-run
printf '[sweep]\nname = "fifo"\nbase = "%s"\n' "$WORK/cfg.toml" > "$WORK/sweep.toml"
expect_fail 2 "base config $WORK/cfg.toml is a FIFO" run sweep "$WORK/sweep.toml" --dry-run
expect_fail 2 "tokenize --file $WORK/text.txt is a FIFO" run tokenize --file "$WORK/text.txt"
# A FIFO as the results database: every command that reads one (before, the read-only ones and a
# merge from it blocked forever in SQLite's open()).
mkfifo "$WORK/db.fifo"
expect_fail 2 "$WORK/db.fifo is not a regular file" run results runs --db "$WORK/db.fifo"
expect_fail 2 "$WORK/db.fifo is not a regular file" run results table --sweep s --db "$WORK/db.fifo"
expect_fail 2 "$WORK/db.fifo is not a regular file" run results show abc --db "$WORK/db.fifo"
expect_fail 2 "$WORK/db.fifo is not a regular file" run results sql "SELECT 1" --db "$WORK/db.fifo"
expect_fail 2 "$WORK/db.fifo is not a regular file" run report --sweep s --out "$WORK/rep" --db "$WORK/db.fifo"
printf '[sweep]\nname = "fifo2"\nbase = "%s"\n' "$WORK/run.toml" > "$WORK/sweep2.toml"
expect_fail 2 "$WORK/db.fifo is not a regular file" run sweep "$WORK/sweep2.toml" --dry-run --db "$WORK/db.fifo"
expect_fail 2 "$WORK/db.fifo is not a regular file" run results merge "$WORK/merged.db" "$WORK/db.fifo"
echo PASS
