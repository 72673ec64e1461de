# Shared by tests/harness/cli/readme_commands.sh and tests/harness/cli/quickstart_resume.sh (sourced, not a test):
# the real scripts/quickstart on a shrunken budget. It needs the data folder: without
# $ATTNBENCH_DATA the tests skip; with it, a missing file fails them.
: "${ATTNBENCH:?path of the attnbench binary}"
: "${ATTNBENCH_SOURCE_DIR:?repository root}"
# scripts/quickstart builds into $ATTNBENCH_BUILD_DIR: the build folder of the binary under test,
# already up to date, so its build step is a no-op.
export ATTNBENCH_BUILD_DIR=${ATTNBENCH_BUILD_DIR:-$(dirname "$ATTNBENCH")}

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Every quickstart cell on a tiny budget: 4 steps of 2 x 64 tokens, checkpoints every 2 steps (so
# that an interruption has a checkpoint to resume from), 2 items per task (WikiText keeps the
# sweep's 2 articles), attention statistics as the real quickstart.
export ATTNBENCH_QUICKSTART_SET="train.steps=4 train.batch_size=2 model.context_length=64 \
train.warmup_steps=1 train.eval_interval=2 train.eval_tokens=256 train.checkpoint_interval=2"
export ATTNBENCH_QUICKSTART_LIMIT=2

# quickstart_workspace: the common start of the quickstart tests. Without $ATTNBENCH_DATA the test
# skips (exit 0); otherwise $tmp is a fresh folder, removed on exit, with $tmp/data from
# make_small_data, and $src the repository root.
quickstart_workspace() {
  if [ -z "${ATTNBENCH_DATA:-}" ]; then
    echo "skip: ATTNBENCH_DATA is not set; the quickstart needs the data folder" >&2
    exit 0
  fi
  src=$ATTNBENCH_SOURCE_DIR
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  make_small_data "$tmp/data"
}

# make_small_data DIR [DOCS]: a data folder that links every evaluation split of $ATTNBENCH_DATA and
# holds a slice of the Wikipedia sample (its first DOCS documents, default 300, and the small last
# file: about 0.8M tokens with 300) so that the quickstart's `data prepare` takes a second instead of
# the whole 30M tokens.
make_small_data() {
  local dir=$1 docs=${2:-300} src=${ATTNBENCH_DATA:?}
  local wiki=$src/pretrain_wikipedia_en
  [ -f "$wiki/wiki_pages_000.jsonl" ] && [ -f "$wiki/wiki_pages_004.jsonl" ] ||
    fail "ATTNBENCH_DATA=$src lacks pretrain_wikipedia_en/wiki_pages_000.jsonl or wiki_pages_004.jsonl"
  mkdir -p "$dir/pretrain_wikipedia_en"
  local d
  for d in "$src"/*/; do
    d=${d%/}
    [ "$(basename "$d")" = pretrain_wikipedia_en ] || ln -s "$d" "$dir/$(basename "$d")"
  done
  head -n "$docs" "$wiki/wiki_pages_000.jsonl" > "$dir/pretrain_wikipedia_en/wiki_pages_000.jsonl"
  cp "$wiki/wiki_pages_004.jsonl" "$dir/pretrain_wikipedia_en/"
}

# quickstart_table DB: the quickstart's results table as CSV without its `runs` column (run ids
# include the shards' path, so two work folders give the same cells different ids).
quickstart_table() {
  "$ATTNBENCH" results table --sweep quickstart --db "$1" --format csv |
    python3 -c 'import csv, sys
rows = list(csv.reader(sys.stdin))
keep = [i for i, name in enumerate(rows[0]) if name != "runs"]
csv.writer(sys.stdout, lineterminator="\n").writerows([[r[i] for i in keep] for r in rows])'
}
