# Shared by tests/harness/cli/sweep_*.sh (sourced, not a test itself): a sweep of six tiny cells on
# synthetic shards, small enough that a whole run takes seconds on one thread. With $ATTNBENCH_DATA
# set, every cell is also scored on two tasks (--limit 4); without it the cells only train.
: "${ATTNBENCH:?path of the attnbench binary}"

# write_shard FILE TOKENS SEED: an llm.c shard (header of 256 int32: magic 20240520, version 1,
# token count; then uint16 tokens) of pseudo-random tokens below 256.
write_shard() {
  perl -e 'srand($ARGV[1]); my $n = $ARGV[0];
           print pack("l<256", 20240520, 1, $n, (0) x 253);
           print pack("S<*", map { int(rand(256)) } 1 .. $n);' "$2" "$3" > "$1"
}

# make_sweep DIR: DIR/sweep.toml (3 variants x 2 seeds = 6 cells) over DIR/base.toml and shards.
make_sweep() {
  local dir=$1
  mkdir -p "$dir/shards"
  write_shard "$dir/shards/train.bin" 20000 1
  write_shard "$dir/shards/val.bin" 4000 2
  cat > "$dir/base.toml" <<TOML
[model]
preset = "tiny"
n_layer = 1
d_model = 32
n_head = 2
context_length = 32

[attention]
variant = "softmax"

[data]
train = "$dir/shards/train.bin"
val = "$dir/shards/val.bin"

[train]
steps = 20
batch_size = 4
lr = 1e-3
warmup_steps = 2
log_interval = 1
eval_interval = 10
eval_tokens = 512
checkpoint_interval = 5
device = "cpu"

[eval]
batch_size = 8
TOML
  local tasks=""
  if [ -n "${ATTNBENCH_DATA:-}" ]; then
    tasks='tasks = ["copa", "arc_easy"]'
  else
    echo "note: ATTNBENCH_DATA is not set: cells train but are not evaluated" >&2
  fi
  cat > "$dir/sweep.toml" <<TOML
[sweep]
name = "tiny_cells"
base = "base.toml"
seeds = [0, 1]
$tasks
limit = 4

[grid]
"attention.variant" = ["softmax", "alibi", "lazy"]
TOML
}

sql() {  # sql DB QUERY: one value per line
  sqlite3 -readonly "$1" "$2"
}

expect_error() {  # expect_error SUBSTRING COMMAND...: exit 2 and SUBSTRING on stderr (uses $tmp)
  local want=$1; shift
  local rc=0
  "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
  [ "$rc" = 2 ] || { cat "$tmp/err"; fail "exit $rc (expected 2) for: $*"; }
  grep -qF -- "$want" "$tmp/err" || { cat "$tmp/err"; fail "'$want' not in the error"; }
}

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# check_complete SWEEP DB RUNS_DIR: the store holds exactly one finished run per cell of the sweep, with
# one training-loss row per step, no duplicated metric or eval rows, every task scored, and an
# intact database.
check_complete() {
  local sweep=$1 db=$2 runs=$3
  [ "$(sql "$db" 'PRAGMA integrity_check')" = ok ] || fail "integrity_check: $(sql "$db" 'PRAGMA integrity_check')"
  [ "$(sql "$db" "SELECT count(*) FROM runs")" = 6 ] || fail "expected 6 runs: $(sql "$db" 'SELECT id, status FROM runs')"
  [ "$(sql "$db" "SELECT count(*) FROM runs WHERE status = 'finished'")" = 6 ] ||
    fail "not all finished: $(sql "$db" 'SELECT id, status, error FROM runs')"
  [ "$(sql "$db" "SELECT count(*) FROM sweep_runs WHERE sweep = 'tiny_cells'")" = 6 ] ||
    fail "sweep membership: $(sql "$db" 'SELECT * FROM sweep_runs')"
  # Every cell of the expanded sweep is one of those runs.
  local id
  for id in $("$ATTNBENCH" sweep "$sweep" --dry-run --db "$db" --runs-dir "$runs" |
              grep -oE '^[0-9a-f]{12}  ' | tr -d ' '); do
    [ "$(sql "$db" "SELECT status FROM runs WHERE id = '$id'")" = finished ] || fail "cell $id not finished"
  done
  local dups
  dups=$(sql "$db" "SELECT count(*) FROM (SELECT run, key, step FROM metrics GROUP BY run, key, step HAVING count(*) > 1)")
  [ "$dups" = 0 ] || fail "$dups duplicated metric rows"
  dups=$(sql "$db" "SELECT count(*) FROM (SELECT run, task, metric FROM evals GROUP BY run, task, metric HAVING count(*) > 1)")
  [ "$dups" = 0 ] || fail "$dups duplicated eval rows"
  # Steps 1..20 of the training loss, each exactly once, in every run: nothing lost.
  local bad
  bad=$(sql "$db" "SELECT r.id FROM runs r LEFT JOIN metrics m ON m.run = r.id AND m.key = 'train/loss'
                   GROUP BY r.id HAVING count(m.step) != 20 OR min(m.step) != 1 OR max(m.step) != 20")
  [ -z "$bad" ] || fail "runs with missing training-loss steps: $bad"
  if [ -n "${ATTNBENCH_DATA:-}" ]; then
    bad=$(sql "$db" "SELECT r.id FROM runs r LEFT JOIN evals e ON e.run = r.id
                     GROUP BY r.id HAVING count(DISTINCT e.task) != 2")
    [ -z "$bad" ] || fail "runs without both tasks scored: $bad"
  fi
}
