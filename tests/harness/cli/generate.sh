#!/usr/bin/env bash
# `attnbench generate` end to end: usage errors exit 2 before any work; with $ATTNBENCH_DATA (the
# GPT-2 tokenizer), a tiny checkpoint trained on a shard of one repeated token ("a") generates
# exactly --max-gen-toks tokens of it, stops on a stop string within lm-eval's lookback window,
# left-truncates a long prompt, and refuses --max-gen-toks >= its context length; without
# --max-gen-toks it generates what the prompt leaves of the context, saying so.
set -euo pipefail
source "$(dirname "$0")/sweep_fixture.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
A=$ATTNBENCH

expect_error "--prompt is required" "$A" generate --checkpoint "$tmp/run"
expect_error "--max-gen-toks: '0' is not an integer >= 1" "$A" generate --checkpoint "$tmp/run" --prompt a --max-gen-toks 0
expect_error "--max-gen-toks: '12abc'" "$A" generate --checkpoint "$tmp/run" --prompt a --max-gen-toks 12abc
expect_error "--until: empty value" "$A" generate --checkpoint "$tmp/run" --prompt a --until ""
expect_error "argument was not expected: b" "$A" generate --checkpoint "$tmp/run" --prompt a --until x b
expect_error "--prompt: empty value" "$A" generate --checkpoint "$tmp/run" --prompt ""
expect_error "--temperature" "$A" generate --checkpoint "$tmp/run" --prompt a --temperature 0.7
expect_error "no such folder" "$A" generate --checkpoint "$tmp/nothing" --prompt a

# One token id 64 ("a") repeated: 30 steps at a high learning rate make "a" the only prediction.
perl -e 'print pack("l<256", 20240520, 1, 4000, (0) x 253); print pack("S<*", (64) x 4000);' \
  > "$tmp/a.bin"
cat > "$tmp/run.toml" <<TOML
[model]
preset = "tiny"
n_layer = 1
d_model = 32
n_head = 2
context_length = 32

[attention]
variant = "softmax"

[data]
train = "$tmp/a.bin"
val = "$tmp/a.bin"

[train]
steps = 30
batch_size = 4
lr = 3e-2
warmup_steps = 2
eval_interval = 30
eval_tokens = 256
checkpoint_interval = 30
device = "cpu"
TOML
"$A" train --config "$tmp/run.toml" --out "$tmp/run" --quiet > "$tmp/train.log" 2>&1 ||
  { cat "$tmp/train.log"; fail "training"; }
expect_error "--max-gen-toks 32: must be less than the checkpoint's context_length 32" \
  "$A" generate --checkpoint "$tmp/run" --prompt a --max-gen-toks 32

if [ -z "${ATTNBENCH_DATA:-}" ]; then
  echo "skip: ATTNBENCH_DATA is not set; generating needs the GPT-2 tokenizer" >&2
  exit 77  # Skipped (tests/CMakeLists.txt)
fi

generate() {  # generate ARGS...: stdout to $tmp/out, stderr to $tmp/err
  "$A" generate --checkpoint "$tmp/run" --threads 1 "$@" > "$tmp/out" 2> "$tmp/err" ||
    { cat "$tmp/err"; fail "generate $*"; }
}
generate --prompt a --max-gen-toks 8
[ "$(cat "$tmp/out")" = aaaaaaaa ] || { cat "$tmp/out"; fail "expected 8 a's"; }
grep -qx "1 prompt tokens, 8 generated" "$tmp/err" || { cat "$tmp/err"; fail "token counts"; }

# "aaa" is one token, so lm-eval looks back 3 tokens: the third "a" stops, and the cut leaves "".
generate --prompt a --max-gen-toks 8 --until xyz --until aaa
[ "$(cat "$tmp/out")" = "" ] || { cat "$tmp/out"; fail "expected an empty generation"; }
grep -qx "1 prompt tokens, 3 generated" "$tmp/err" || { cat "$tmp/err"; fail "stop string"; }

# A prompt longer than context_length - max_gen_toks is left-truncated, not refused.
generate --prompt "$(printf 'word %.0s' {1..40})" --max-gen-toks 30
[ "$(cat "$tmp/out")" = "$(printf 'a%.0s' {1..30})" ] || { cat "$tmp/out"; fail "expected 30 a's"; }
grep -qx "41 prompt tokens (left-truncated to the last 2), 30 generated" "$tmp/err" || { cat "$tmp/err"; fail "truncated prompt"; }
# No --max-gen-toks on a model of context 32: lm-eval's 256 cannot fit, so the room the prompt
# leaves (31), or half the context when the prompt fills it (16), with a note.
generate --prompt a
[ "$(cat "$tmp/out")" = "$(printf 'a%.0s' {1..31})" ] || { cat "$tmp/out"; fail "expected 31 a's"; }
grep -qF "note: generating at most 31 tokens, the room the 1-token prompt leaves in the model's context of 32" "$tmp/err" ||
  { cat "$tmp/err"; fail "default note"; }
generate --prompt "$(printf 'word %.0s' {1..40})"
grep -qx "41 prompt tokens (left-truncated to the last 16), 16 generated" "$tmp/err" || { cat "$tmp/err"; fail "default on a full context"; }
grep -qF "half the model's context of 32, since the 41-token prompt fills it" "$tmp/err" || { cat "$tmp/err"; fail "full-context note"; }
echo PASS
