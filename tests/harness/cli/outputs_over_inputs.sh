#!/usr/bin/env bash
# No output overwrites an input (docs/reliability.md, "Outputs"): each command that writes a file or
# folder refuses, before any work and with exit 2, an output path that is one of its inputs (the
# database, a checkpoint, a config, a shard), lies inside one, or holds one; links are followed.
# Every input is checked to be unchanged afterwards.
set -euo pipefail
source "$(dirname "$0")/sweep_fixture.bash"
A=$ATTNBENCH
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# refused WHAT PATH-THAT-MUST-NOT-CHANGE COMMAND...: exit 2, a message naming an input, PATH unchanged.
refused() {
  local what=$1 keep=$2; shift 2
  local before rc=0
  before=$(find "$keep" -type f -exec sha256sum {} + | sort)
  "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
  [ "$rc" = 2 ] || { cat "$tmp/out" "$tmp/err"; fail "$what: exit $rc, expected 2"; }
  grep -q "an input of this command" "$tmp/err" || { cat "$tmp/err"; fail "$what: message"; }
  [ "$(find "$keep" -type f -exec sha256sum {} + | sort)" = "$before" ] || fail "$what: $keep changed"
}

make_sweep "$tmp"
"$A" train --config "$tmp/base.toml" --set train.steps=5 --out "$tmp/run" --quiet > "$tmp/train.log" 2>&1 ||
  { cat "$tmp/train.log"; fail "training"; }
ckpt="$tmp/run/checkpoint"
[ -d "$ckpt" ] || fail "no checkpoint folder"
model_file=$(find "$ckpt" -type f | sort | head -n 1)
"$A" results merge "$tmp/r.db" > /dev/null || fail "creating the database"
ln -s "$tmp/r.db" "$tmp/link.db"

# sweep --slurm: the database (directly and through a link), the sweep file, its base config.
refused "sweep --slurm DB" "$tmp/r.db" "$A" sweep "$tmp/sweep.toml" --db "$tmp/r.db" --slurm "$tmp/r.db"
refused "sweep --slurm LINK-TO-DB" "$tmp/r.db" \
  "$A" sweep "$tmp/sweep.toml" --db "$tmp/r.db" --slurm "$tmp/link.db"
refused "sweep --slurm SWEEP" "$tmp/sweep.toml" "$A" sweep "$tmp/sweep.toml" --db "$tmp/r.db" --slurm "$tmp/sweep.toml"
refused "sweep --slurm BASE" "$tmp/base.toml" "$A" sweep "$tmp/sweep.toml" --db "$tmp/r.db" --slurm "$tmp/base.toml"
# export --out: the checkpoint folder itself, or a folder holding it.
refused "export --out CHECKPOINT" "$ckpt" "$A" export --checkpoint "$tmp/run" --out "$ckpt"
refused "export --out RUN" "$ckpt" "$A" export --checkpoint "$tmp/run" --out "$tmp/run"
# attn-stats: the heatmap onto the model file, the plots into the checkpoint.
refused "attn-stats --heatmap-out MODEL" "$ckpt" \
  "$A" attn-stats --checkpoint "$tmp/run" --heatmap-out "$model_file" --tokens 64
refused "attn-stats --plots CHECKPOINT" "$ckpt" "$A" attn-stats --checkpoint "$tmp/run" --plots "$ckpt" --tokens 64
refused "attn-stats --heatmap-out DB" "$tmp/r.db" \
  "$A" attn-stats --checkpoint "$tmp/run" --db "$tmp/r.db" --heatmap-out "$tmp/link.db" --tokens 64
# report --out: a folder holding the database.
mkdir -p "$tmp/dbdir" && cp "$tmp/r.db" "$tmp/dbdir/r.db"
refused "report --out DB-FOLDER" "$tmp/dbdir" \
  "$A" report --sweep tiny_cells --db "$tmp/dbdir/r.db" --out "$tmp/dbdir" --no-heatmaps
# results merge: the output is one of the inputs.
rc=0; "$A" results merge "$tmp/r.db" "$tmp/link.db" > /dev/null 2> "$tmp/err" || rc=$?
[ "$rc" = 2 ] || { cat "$tmp/err"; fail "results merge OUT OUT: exit $rc"; }

# eval --dump-requests: the model file, the database; data prepare --out onto a folder holding its
# input text, even with --force. They need the task files and GPT-2's tokenizer.
if [ -n "${ATTNBENCH_DATA:-}" ]; then
  mkdir -p "$tmp/corpus" && printf 'hello world. %.0s' $(seq 1 200) > "$tmp/corpus/a.txt"
  refused "data prepare --out INPUT-FOLDER" "$tmp/corpus" \
    "$A" data prepare --input "$tmp/corpus/a.txt" --out "$tmp/corpus" --force --val-tokens 10
  refused "eval --dump-requests MODEL" "$ckpt" \
    "$A" eval --checkpoint "$tmp/run" --tasks copa --limit 2 --dump-requests "$model_file"
  refused "eval --dump-requests DB" "$tmp/r.db" \
    "$A" eval --checkpoint "$tmp/run" --tasks copa --limit 2 --db "$tmp/r.db" --dump-requests "$tmp/r.db"
  # A path beside them is written.
  "$A" eval --checkpoint "$tmp/run" --tasks copa --limit 2 --dump-requests "$tmp/requests.jsonl" > /dev/null ||
    fail "eval --dump-requests to a new file"
  [ -s "$tmp/requests.jsonl" ] || fail "no requests written"
fi
# The checkpoint still loads after every refusal.
"$A" export --checkpoint "$tmp/run" --out "$tmp/export" > /dev/null || fail "the checkpoint no longer loads"
echo "outputs_over_inputs: ok"
