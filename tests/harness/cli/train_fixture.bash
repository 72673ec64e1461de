# Shared by tests/harness/cli/train_*.sh (sourced; .bash files are not collected as tests).
# Shards are written with perl (perl-base is essential on Debian) in the llm.c layout: 256
# little-endian int32 (magic 20240520, version, token count), then uint16 (v1) or uint32 (v2) tokens.
set -euo pipefail
: "${ATTNBENCH:?set ATTNBENCH to the attnbench binary}"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# write_shard FILE MAGIC VERSION COUNT TOKENS...: raw header fields, so tests can lie in them.
write_shard() {
  perl -e 'my ($f, $m, $v, $n, @t) = @ARGV; open(my $o, ">:raw", $f) or die;
           print $o pack("l<*", $m, $v, $n, (0) x 253);
           print $o pack($v == 2 ? "L<*" : "S<*", @t);' "$@"
}

# copy_task_shard FILE DOCS SEED: the copy task of tests/train (EOT x1..x8 SEP x1..x8, 16 symbols).
copy_task_shard() {
  perl -e 'my ($f, $docs, $seed) = @ARGV; srand($seed); my @t;
           for (1..$docs) { my @x = map { 2 + int(rand(16)) } 1..8; push @t, 0, @x, 1, @x; }
           open(my $o, ">:raw", $f) or die;
           print $o pack("l<*", 20240520, 1, scalar(@t), (0) x 253); print $o pack("S<*", @t);' "$@"
}

# A tiny run config over $WORK/train.bin and $WORK/val.bin.
write_config() {
  cat > "$WORK/run.toml" <<TOML
[model]
preset = "tiny"
vocab_size = 18
context_length = 32

[attention]
variant = "softmax"
backend = "eager"

[data]
train = "$WORK/train.bin"
val = "$WORK/val.bin"
fixed_token_id = 0

[train]
steps = 40
batch_size = 4
lr = 3e-3
warmup_steps = 4
eval_interval = 20
eval_tokens = 512
checkpoint_interval = 10
log_interval = 10
threads = 1
TOML
}

# expect_fail CODE PATTERN CMD...: CMD exits with CODE and its stderr matches PATTERN.
expect_fail() {
  local code=$1 pattern=$2; shift 2
  local rc=0
  "$@" > "$WORK/out" 2> "$WORK/err" || rc=$?
  if [[ $rc -ne $code ]]; then
    echo "FAIL: expected exit $code, got $rc: $*"; cat "$WORK/err"; exit 1
  fi
  if ! grep -q -- "$pattern" "$WORK/err"; then
    echo "FAIL: stderr does not match '$pattern': $*"; cat "$WORK/err"; exit 1
  fi
}

# The train/loss lines of a metrics.jsonl without their wall-clock times.
losses() { grep '"key":"train/loss"' "$1" | sed 's/"time":[0-9.e+-]*,//'; }
