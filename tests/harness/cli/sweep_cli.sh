#!/usr/bin/env bash
# `attnbench sweep` without training: --dry-run of the shipped ablation, errors before any work
# (exit 2, file:line:col, nearest key), --only, and the Slurm array script.
set -euo pipefail
source "$(dirname "$0")/sweep_fixture.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=${ATTNBENCH_SOURCE_DIR:?repository root}

# The shipped ablation: 57 cells, each with a distinct 12-digit run id, all to run.
"$ATTNBENCH" sweep "$src/sweeps/lazy_ablation.toml" --dry-run --db "$tmp/none.db" > "$tmp/dry"
ids=$(grep -oE '^[0-9a-f]{12}  ' "$tmp/dry" | tr -d ' ')
[ "$(echo "$ids" | wc -l)" = 57 ] || { cat "$tmp/dry"; fail "expected 57 cells"; }
[ "$(echo "$ids" | sort -u | wc -l)" = 57 ] || fail "run ids are not distinct"
grep -q "would: run 57" "$tmp/dry" || { cat "$tmp/dry"; fail "dry run should plan 57 runs"; }
grep -q "variant=lazy tau_form=per_token renormalize=true tau_init=0 seed=2" "$tmp/dry" ||
  fail "labels should name the varying keys"
[ ! -e "$tmp/none.db" ] || fail "a dry run created the database"

make_sweep "$tmp"
printf '[sweep]\nname = "t"\nbase = "base.toml"\n[grid]\n"attention.varient" = ["lazy"]\n' > "$tmp/typo.toml"
expect_error "typo.toml:5:1: unknown key attention.varient" "$ATTNBENCH" sweep "$tmp/typo.toml" --dry-run
printf '[sweep]\nname = "t"\nbase = "base.toml"\n[grid]\n"attention.variant" = ["softmax", "lazy"]\n"attention.renormalize" = [false, true]\n' > "$tmp/collide.toml"
expect_error "'variant=softmax renormalize=false' and 'variant=softmax renormalize=true'" \
  "$ATTNBENCH" sweep "$tmp/collide.toml" --db "$tmp/x.db" --runs-dir "$tmp/x"
[ ! -e "$tmp/x.db" ] && [ ! -e "$tmp/x" ] || fail "a rejected sweep left files behind"
expect_error "no cell has that run id or label" "$ATTNBENCH" sweep "$tmp/sweep.toml" --only nonsense --dry-run
expect_error "cannot open base config" bash -c "printf '[sweep]\nname = \"t\"\nbase = \"nope.toml\"\n' > '$tmp/nobase.toml'; '$ATTNBENCH' sweep '$tmp/nobase.toml' --dry-run"

# --only selects one cell by label; the dry run lists just that one.
"$ATTNBENCH" sweep "$tmp/sweep.toml" --only "variant=lazy seed=1" --dry-run > "$tmp/one"
[ "$(grep -cE '^[0-9a-f]{12}  ' "$tmp/one")" = 1 ] || { cat "$tmp/one"; fail "--only should keep one cell"; }

# Slurm: one array task per cell, a database per cell, the merge command in the comments.
"$ATTNBENCH" sweep "$tmp/sweep.toml" --slurm "$tmp/sweep.sbatch" --db "$tmp/all.db" --runs-dir "$tmp/runs" > "$tmp/slurm.out"
grep -q '^#SBATCH --array=0-5$' "$tmp/sweep.sbatch" || { cat "$tmp/sweep.sbatch"; fail "array size"; }
[ "$(grep -cE '^  [0-9a-f]{12}  # ' "$tmp/sweep.sbatch")" = 6 ] || fail "six cells in the array"
grep -q "results merge '$tmp/all.db' '$tmp/all'.cell-\*.db" "$tmp/sweep.sbatch" || { cat "$tmp/sweep.sbatch"; fail "merge command"; }
grep -q "results merge" "$tmp/slurm.out" || fail "the merge command should be printed"
bash -n "$tmp/sweep.sbatch" || fail "the script is not valid bash"
# The array task's command, run by hand for task 0, writes its own database.
first=$(grep -oE '^  [0-9a-f]{12}' "$tmp/sweep.sbatch" | head -1 | tr -d ' ')
SLURM_ARRAY_TASK_ID=0 bash "$tmp/sweep.sbatch" > "$tmp/task0.log" 2>&1 || { cat "$tmp/task0.log"; fail "array task 0"; }
[ "$(sql "$tmp/all.cell-$first.db" "SELECT status FROM runs WHERE id = '$first'")" = finished ] ||
  fail "array task 0 did not finish its cell into its own database"
# `results curves` defaults to a metric the trainer writes (train/loss): one row per logged step.
"$ATTNBENCH" results curves "$first" --db "$tmp/all.cell-$first.db" > "$tmp/curve.csv" ||
  fail "results curves without --metric"
steps=$(sql "$tmp/all.cell-$first.db" "SELECT count(*) FROM metrics WHERE run = '$first' AND key = 'train/loss'")
[ "$steps" -gt 0 ] && [ "$(($(wc -l < "$tmp/curve.csv") - 1))" = "$steps" ] ||
  { cat "$tmp/curve.csv"; fail "the default curve should list the $steps train/loss points"; }
echo ok
