# attnbench train --dry-run: the resolved config and both parameter counts, equal; nothing trained.
source "$(dirname "$0")/train_fixture.bash"
copy_task_shard "$WORK/train.bin" 200 1
copy_task_shard "$WORK/val.bin" 50 2
write_config
"$ATTNBENCH" train --config "$WORK/run.toml" --set attention.variant=lazy --out "$WORK/run" \
  --dry-run > "$WORK/out"
grep -q '"variant": "lazy"' "$WORK/out" || { echo "FAIL: resolved config not printed"; cat "$WORK/out"; exit 1; }
built=$(sed -n 's/^parameters: \([0-9]*\) (constructed model)$/\1/p' "$WORK/out")
closed=$(sed -n 's/^parameters: \([0-9]*\) (closed form)$/\1/p' "$WORK/out")
[[ -n "$built" && "$built" == "$closed" ]] || { echo "FAIL: counts '$built' vs '$closed'"; cat "$WORK/out"; exit 1; }
[[ ! -e "$WORK/run" ]] || { echo "FAIL: dry run created the run folder"; exit 1; }
# Accumulation that does not divide is a configuration error (exit 2) before any work.
expect_fail 2 "batch_tokens" "$ATTNBENCH" train --config "$WORK/run.toml" --set train.batch_tokens=100 \
  --out "$WORK/run"
echo PASS
