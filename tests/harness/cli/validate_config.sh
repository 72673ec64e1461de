#!/usr/bin/env bash
# Hostile config values through `train --dry-run` and `config` (docs/training.md, "Validation"):
# each is refused with exit 2 and a message naming the key, in well under a second: no crash
# (SIGFPE), no hang, no silent acceptance, no LibTorch stack trace.
source "$(dirname "$0")/train_fixture.bash"
printf '[model]\npreset = "tiny"\n' > "$WORK/empty.toml"

# expect_refused PATTERN SET...: train --dry-run exits 2 naming PATTERN, with no stack trace.
expect_refused() {
  local pattern=$1; shift
  local sets=()
  for s in "$@"; do sets+=(--set "$s"); done
  expect_fail 2 "$pattern" timeout 20 "$ATTNBENCH" train --config "$WORK/empty.toml" --dry-run "${sets[@]}"
  if grep -q "Exception raised from\|frame #" "$WORK/err"; then
    echo "FAIL: stack trace in the message: $*"; cat "$WORK/err"; exit 1
  fi
}

# A product that wrapped round to 0 was a division by zero (SIGFPE, exit 136).
expect_refused "train.batch_size = 4611686018427387904: training needs at least" \
  train.batch_size=4611686018427387904 model.context_length=4
# Sizes that cannot fit: a hang, a LibTorch error with a stack trace, or silently accepted.
expect_refused "lower model.n_layer" model.n_layer=1000000000
expect_refused "lower model.vocab_size" model.vocab_size=9223372036854775807
expect_refused "lower model.d_model" model.d_model=1048576 model.n_head=1
expect_refused "lower model.context_length" model.context_length=9223372036854775807
# Non-finite floats: inf was accepted and written to the resolved config as null.
expect_refused "train.grad_clip = inf must be a finite number" train.grad_clip=inf
expect_refused "train.lr = nan must be a finite number" train.lr=nan
expect_refused "attention.tau_init = nan must be a finite number" attention.variant=lazy attention.tau_init=nan
expect_refused "within ±1.8e308" train.lr=1e309
expect_refused "2^63" train.steps=9223372036854775808
# Empty values are refused, never replaced by the default.
expect_refused "empty value for train.seed" train.seed=
expect_refused "empty value for data.train" data.train=
expect_refused "train.device must be one of" "train.device=ｃｐｕ"

# `config` validates as train does.
expect_fail 2 "train.batch_size = 4611686018427387904" "$ATTNBENCH" config \
  --set train.batch_size=4611686018427387904 --set model.context_length=4
expect_fail 2 "train.grad_clip = inf must be a finite number" "$ATTNBENCH" config --set train.grad_clip=inf

# A resolved JSON config with a number past a double's range: was a raw nlohmann error, exit 1.
printf '{"train": {"lr": 1e309}}\n' > "$WORK/big.json"
expect_fail 2 "big.json: invalid JSON: number overflow" "$ATTNBENCH" config -c "$WORK/big.json"

# Threads beyond the cores are capped with a warning (100000 threads took minutes to start).
timeout 20 "$ATTNBENCH" config --set train.threads=100000 > "$WORK/out" 2> "$WORK/err"
grep -q "train.threads = 100000 is more than this machine's" "$WORK/err" ||
  { echo "FAIL: no warning"; cat "$WORK/err"; exit 1; }
! grep -q '"threads": 100000' "$WORK/out" || { echo "FAIL: threads not capped"; exit 1; }
echo PASS
