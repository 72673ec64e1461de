#!/usr/bin/env bash
# Hostile input to `attnbench sweep`, refused before any work with exit 2 (docs/sweeps.md, "Errors,
# before any work"): a --set of a key the grid varies or of a non-finite value, empty or
# non-positive option values, a sweep name or a path that would break out of the Slurm script;
# paths with quotes, '$' and '#' are quoted in the script, never run.
set -euo pipefail
source "$(dirname "$0")/sweep_fixture.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

make_sweep "$tmp" 2>/dev/null
printf '[sweep]\nname = "hostile"\nbase = "base.toml"\n[grid]\n"attention.variant" = ["softmax", "alibi"]\n' \
  > "$tmp/two.toml"
db=$tmp/results.db
args=("$tmp/two.toml" --db "$db" --runs-dir "$tmp/runs" --quiet)

run_sweep() {  # run_sweep EXPECTED_RC ARGS...: stdout in $tmp/out, stderr in $tmp/err
  local want=$1; shift
  local rc=0
  "$ATTNBENCH" sweep "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
  [ "$rc" = "$want" ] || { cat "$tmp/out" "$tmp/err"; fail "exit $rc (expected $want) for: sweep $*"; }
}

expect_error() {  # expect_error SUBSTRING SWEEP_ARGS...: exit 2 and SUBSTRING on stderr
  local want=$1; shift
  run_sweep 2 "$@"
  grep -qF -- "$want" "$tmp/err" || { cat "$tmp/err"; fail "'$want' not in the error of: sweep $*"; }
}
expect_error "--set attention.variant=lazy: 'attention.variant' is varied by the sweep's [grid] or [[zip]] entry at $tmp/two.toml:5:1" \
  "${args[@]}" --set attention.variant=lazy
expect_error "--set train.lr=nan: the value is nan" "${args[@]}" --set train.lr=nan
expect_error "--jobs" "${args[@]}" --jobs 0
expect_error "--jobs" "${args[@]}" --jobs -1
expect_error "--gpus-per-cell" "${args[@]}" --gpus-per-cell ""
expect_error "--limit" "${args[@]}" --limit 0
# "" would mean every cell, or a real run instead of a script.
expect_error "--only" "${args[@]}" --only ""
expect_error "--slurm" "${args[@]}" --slurm ""
[ ! -e "$db" ] && [ ! -e "$tmp/runs" ] || fail "a refused sweep left files behind"

# A line break in the name would have run the next line in every array task of the Slurm script.
printf '[sweep]\nname = "x\\ntouch %s/PWNED"\nbase = "base.toml"\n' "$tmp" > "$tmp/inject.toml"
expect_error "inject.toml:2:8: sweep.name \"x\\ntouch $tmp/PWNED\" may only contain letters" \
  "$tmp/inject.toml" --slurm "$tmp/inject.sbatch"
expect_error "the runs folder" "$tmp/two.toml" --db "$db" --runs-dir "$tmp/r
touch $tmp/PWNED" --slurm "$tmp/inject.sbatch"
[ ! -e "$tmp/inject.sbatch" ] || fail "a refused script was written"
# Quotes, '$' and '#' in paths are quoted, never run.
odd="$tmp/o'd \"d\" \$(touch $tmp/PWNED) #x"
mkdir -p "$odd"
run_sweep 0 "$tmp/two.toml" --db "$odd/r.db" --runs-dir "$odd/runs" --slurm "$odd/s.sbatch"
bash -n "$odd/s.sbatch" || fail "the script is not valid bash"
grep -qF "#SBATCH --output=\"$tmp/o'd \\\"d\\\" \$(touch $tmp/PWNED) #x/runs/slurm/%A_%a.out\"" "$odd/s.sbatch" ||
  { cat "$odd/s.sbatch"; fail "the --output directive should be double-quoted for sbatch"; }
[ ! -e "$tmp/PWNED" ] || fail "a value in the sweep ran as a command"

# 60,000 nested dotted keys in the sweep file, in its base config: refused before parsing (they
# crashed the TOML reader with SIGSEGV).
deep=$(perl -e 'print join(".", ("k") x 60000)')
printf '[sweep]\nname = "deep"\nbase = "base.toml"\n%s = 1\n' "$deep" > "$tmp/deep.toml"
expect_error "$tmp/deep.toml:4:128: a key with more than 64 dotted parts" "$tmp/deep.toml" --dry-run --db "$db"
mkdir -p "$tmp/deepbase"
printf '[model]\n%s = 1\n' "$deep" > "$tmp/deepbase/base.toml"
printf '[sweep]\nname = "deep"\nbase = "base.toml"\n' > "$tmp/deepbase/s.toml"
expect_error "$tmp/deepbase/base.toml:2:128: a key with more than 64 dotted parts" "$tmp/deepbase/s.toml" --dry-run --db "$db"
# An answer longer than the cells' context (PIQA at a 16-token context): refused before any
# training, naming the cell and the task, and nothing written (it used to fail after training).
if [ -n "${ATTNBENCH_DATA:-}" ]; then
  printf '[sweep]\nname = "short"\nbase = "base.toml"\ntasks = ["copa", "piqa"]\nlimit = 20\n' > "$tmp/short.toml"
  expect_error "task piqa: document" "$tmp/short.toml" --db "$tmp/short.db" \
    --runs-dir "$tmp/short_runs" --set model.context_length=16
  grep -qE "has an answer of [0-9]+ tokens, longer than the model's context of 16 tokens \(documents with such an answer: [0-9]+ of 20\)" "$tmp/err" || { cat "$tmp/err"; fail "lengths"; }
  [ ! -e "$tmp/short.db" ] && [ ! -e "$tmp/short_runs" ] || fail "a sweep refused by its preflight wrote files"
fi
echo ok
