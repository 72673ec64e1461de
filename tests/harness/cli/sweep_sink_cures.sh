#!/usr/bin/env bash
# The shipped sink-cure sweeps expand as designed (`sweep --dry-run`, no training): sink_cures.toml
# is its variants x 3 seeds at the small preset, sink_cures_cpu.toml the same variants once each;
# every variant of either is a registered one and is named in both, at least the 13 of the first
# study (a cure added later is one more name in both files, and this test needs no edit), and the
# CPU sweep scores its four tasks at 100 items.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=${ATTNBENCH_SOURCE_DIR:?repository root}
first="softmax alibi lazy softpick softmax1 sink_logit sigmoid gated stick_breaking ssmax forgetting kv_bias differential"
# grid_variants FILE: the attention.variant values of the sweep file's [grid], one per line.
grid_variants() {
  python3 -c 'import sys, tomllib; print("\n".join(tomllib.load(open(sys.argv[1], "rb"))["grid"]["attention.variant"]))' "$1"
}
variants=$(grid_variants "$src/sweeps/sink_cures.toml")
[ "$variants" = "$(grid_variants "$src/sweeps/sink_cures_cpu.toml")" ] ||
  fail "sink_cures.toml and sink_cures_cpu.toml name different variants"
registered=$("$ATTNBENCH" variants --format json | python3 -c 'import json, sys; print("\n".join(v["name"] for v in json.load(sys.stdin)))')
for v in $variants; do
  echo "$registered" | grep -qx "$v" || fail "sink_cures: $v is not a registered variant"
done
for v in $first; do
  echo "$variants" | grep -qx "$v" || fail "sink_cures: the first study's $v is missing"
done
n=$(echo "$variants" | wc -l)

# dry_run FILE CELLS: the dry run plans CELLS runs with distinct ids; its listing is in $tmp/dry.
dry_run() {
  "$ATTNBENCH" sweep "$src/sweeps/$1" --dry-run --db "$tmp/none.db" > "$tmp/dry" 2> "$tmp/err" ||
    { cat "$tmp/err"; fail "$1: the dry run failed"; }
  local ids
  ids=$(grep -oE '^[0-9a-f]{12}  ' "$tmp/dry" | tr -d ' ')
  [ "$(echo "$ids" | wc -l)" = "$2" ] || { cat "$tmp/dry"; fail "$1: expected $2 cells"; }
  [ "$(echo "$ids" | sort -u | wc -l)" = "$2" ] || fail "$1: run ids are not distinct"
  grep -q "would: run $2\$" "$tmp/dry" || { cat "$tmp/dry"; fail "$1: should plan $2 runs"; }
  [ ! -e "$tmp/none.db" ] || fail "$1: a dry run created the database"
}

dry_run sink_cures.toml $((3 * n))
for v in $variants; do
  for seed in 0 1 2; do
    grep -qE "  variant=$v seed=$seed\$" "$tmp/dry" || fail "sink_cures: no cell variant=$v seed=$seed"
  done
done
grep -q "base .*presets/small.toml" "$tmp/dry" || fail "sink_cures: not on the small preset"
grep -q "tasks: piqa, hellaswag, winogrande, arc_easy, arc_challenge, boolq, sciq, copa, openbookqa, lambada_openai, wikitext$" \
  "$tmp/dry" || { cat "$tmp/dry"; fail "sink_cures: not scored on the standard tasks"; }

dry_run sink_cures_cpu.toml "$n"
for v in $variants; do
  grep -qE "  variant=$v\$" "$tmp/dry" || fail "sink_cures_cpu: no cell variant=$v"
done
grep -q "tasks: piqa, hellaswag, arc_easy, copa (limit 100)" "$tmp/dry" ||
  { cat "$tmp/dry"; fail "sink_cures_cpu: tasks or limit changed"; }
echo ok
