#!/usr/bin/env bash
# Hostile command-line values (every command but sweep, results and report): negative, zero, empty,
# non-finite and overflowing numbers and empty strings exit 2 naming the option before the command
# starts, never replaced by a default; more threads than cores are capped with a warning.
source "$(dirname "$0")/train_fixture.bash"
A=$ATTNBENCH

expect_fail 2 "--limit: '-5' is not an integer >= 0" "$A" eval --checkpoint "$WORK/none" --limit -5
expect_fail 2 "--batch-size: '0' is not an integer >= 1" "$A" eval --checkpoint "$WORK/none" --batch-size 0
expect_fail 2 "--threads: '' is not an integer" "$A" eval --checkpoint "$WORK/none" --threads ""
expect_fail 2 "--device: empty value" "$A" eval --checkpoint "$WORK/none" --device ""
expect_fail 2 "--checkpoint: empty value" "$A" eval --checkpoint ""
expect_fail 2 "--tokens: '-1' is not an integer >= 1" "$A" attn-stats --checkpoint "$WORK/none" --tokens -1
expect_fail 2 "--sink-threshold: 'nan' is not a finite number" "$A" attn-stats --checkpoint "$WORK/none" --sink-threshold nan
expect_fail 2 "--jobs: '-3'" "$A" data prepare -i "$WORK/x.txt" -o "$WORK/out" --jobs -3
expect_fail 2 "--shard-tokens: '0'" "$A" data prepare -i "$WORK/x.txt" -o "$WORK/out" --shard-tokens 0
expect_fail 2 "--backoff: 'inf' is not a finite number" "$A" data fetch --out "$WORK/d" --backoff inf
expect_fail 2 "--out: empty value" "$A" export --checkpoint "$WORK/none" --out ""
expect_fail 2 "--nproc-per-node: '-1'" "$A" train --config "$WORK/none.toml" --nproc-per-node -1
expect_fail 2 "--set: empty value" "$A" train --config "$WORK/none.toml" --set ""
expect_fail 2 "text: empty value" "$A" tokenize ""

# A checkpoint of synthetic tokens (vocab_size 18) cannot read GPT-2 text: was LibTorch's "index
# out of range in self" with a C++ stack trace, exit 1.
copy_task_shard "$WORK/train.bin" 60 1
copy_task_shard "$WORK/val.bin" 20 2
write_config
"$A" train --config "$WORK/run.toml" --set train.steps=1 --set train.checkpoint_interval=1 \
  --out "$WORK/run" --quiet > /dev/null
expect_fail 2 "model.vocab_size = 18 is smaller than the GPT-2 tokenizer's 50257" \
  "$A" eval --checkpoint "$WORK/run" --tasks copa --limit 1
# A filesystem error is restated with the command, and an unusable --out is bad input (was exit 1).
expect_fail 2 "attnbench export: /dev/null/x: Not a directory" \
  "$A" export --checkpoint "$WORK/run" --out /dev/null/x
# More threads than cores: capped with a warning, the statistics still computed.
"$A" attn-stats --checkpoint "$WORK/run" --data "$WORK/val.bin" --threads 100000 > "$WORK/out" 2> "$WORK/err"
grep -q "threads 100000 is more than this machine's" "$WORK/err" || { echo "FAIL: no warning"; cat "$WORK/err"; exit 1; }
grep -q "sink" "$WORK/out" || { echo "FAIL: no statistics"; cat "$WORK/out"; exit 1; }
echo PASS
