#!/usr/bin/env bash
# `attnbench attn-stats` on freshly trained tiny checkpoints (synthetic shards): table and JSON
# output, the store rows under the checkpoint's run id, the heatmap PNG and SVG plots, Mask@k, and
# usage errors (exit 2) before any work.
set -euo pipefail
source "$(dirname "$0")/sweep_fixture.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

make_sweep "$tmp"
train() {  # train OUT SET...: the fixture's base config with overrides
  local out=$1; shift
  local sets=()
  for s in "$@"; do sets+=(--set "$s"); done
  "$ATTNBENCH" train --config "$tmp/base.toml" "${sets[@]}" --set train.steps=10 --out "$out" --quiet \
    > "$tmp/train.log" 2>&1 || { cat "$tmp/train.log"; fail "training $out"; }
}
train "$tmp/lazy" attention.variant=lazy
train "$tmp/mask" attention.variant=softmax data.fixed_token_position=3 data.fixed_token_id=7

expect_error "no such folder" "$ATTNBENCH" attn-stats --checkpoint "$tmp/nothing"
expect_error "expected table or json" "$ATTNBENCH" attn-stats --checkpoint "$tmp/lazy" --format xml
expect_error "excludes" "$ATTNBENCH" attn-stats --checkpoint "$tmp/lazy" --text a.txt --data b.bin
expect_error "--heatmap-layer 4" "$ATTNBENCH" attn-stats --checkpoint "$tmp/lazy" --heatmap-layer 4 --heatmap-out "$tmp/x.png"
expect_error "--sink-threshold" "$ATTNBENCH" attn-stats --checkpoint "$tmp/lazy" --sink-threshold 2

# Length extrapolation: windows of 64 tokens on a model trained at 32 are measured, never stored.
"$ATTNBENCH" attn-stats --checkpoint "$tmp/lazy" --tokens 128 --window 64 > "$tmp/long" 2> "$tmp/err" ||
  { cat "$tmp/err"; fail "--window beyond the context"; }
grep -q "2 windows of 64 tokens" "$tmp/long" || { cat "$tmp/long"; fail "long windows"; }
expect_error "beyond the training context (32)" "$ATTNBENCH" attn-stats --checkpoint "$tmp/lazy" \
  --tokens 128 --window 64 --db "$tmp/long.db"
[ ! -e "$tmp/long.db" ] || fail "statistics beyond the training context were stored"

# Table: one line per head, per layer and for the model, then the sink rate.
"$ATTNBENCH" attn-stats --checkpoint "$tmp/lazy" --tokens 128 > "$tmp/table" 2> "$tmp/err" || { cat "$tmp/err"; fail "table"; }
grep -q "4 windows of 32 tokens from val.bin" "$tmp/table" || { cat "$tmp/table"; fail "table header"; }
grep -q "sink rate (heads with sink mass > 0.3)" "$tmp/table" || { cat "$tmp/table"; fail "no sink rate"; }
[ "$(grep -cE '^ +0 +[01] ' "$tmp/table")" = 2 ] || { cat "$tmp/table"; fail "expected two head lines for layer 0"; }

# JSON, the store, the heatmap and the plots in one call on an explicit shard.
"$ATTNBENCH" attn-stats --checkpoint "$tmp/lazy" --data "$tmp/shards/val.bin" --tokens 64 --window 16 \
  --format json --db "$tmp/s.db" --heatmap-layer 0 --heatmap-head 1 --heatmap-tokens 24 \
  --heatmap-out "$tmp/heat.png" --plots "$tmp/plots" > "$tmp/json" 2> "$tmp/err" || { cat "$tmp/err"; fail "json"; }
python3 - "$tmp/json" "$tmp/heat.png" "$tmp/plots" <<'PY' || fail "json/png/svg checks"
import json, struct, sys, xml.dom.minidom, os
d = json.load(open(sys.argv[1]))
assert d["window"] == 16 and d["windows"] == 4, (d["window"], d["windows"])
assert len(d["layers"]) == 1 and len(d["layers"][0]["heads"]) == 2
assert [v["name"] for v in d["learned"]] == ["tau", "distance_bias"], d["learned"]
m = d["model"]
for k in ("sink_mass", "sparsity", "row_mass_mean", "zero_rows"):
    assert 0 <= m[k] <= 1, (k, m[k])
for h in d["layers"][0]["heads"]:
    assert len(h["distance_bias"]) == 16, len(h["distance_bias"])
    # Lazy Attention keeps at most the above-uniform part of each row: mass <= 1 - 1/n_i < 1
    assert h["row_mass_max"] < 1, h
png = open(sys.argv[2], "rb").read()
assert png[:8] == b"\x89PNG\r\n\x1a\n"
w, hgt = struct.unpack(">II", png[16:24])
assert w == hgt and w % 24 == 0, (w, hgt)
for f in ("tau_per_layer.svg", "distance_bias_layer0.svg"):
    xml.dom.minidom.parse(os.path.join(sys.argv[3], f))
PY
run=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$tmp/json")
[ "$(sql "$tmp/s.db" "SELECT status FROM runs WHERE id = '$run'")" = finished ] || fail "run $run not registered"
[ "$(sql "$tmp/s.db" "SELECT COUNT(*) FROM attn_stats WHERE run = '$run' AND stat = 'distance_bias' AND layer = 0 AND head = 1")" = 16 ] ||
  fail "distance_bias profile not stored"
for stat in sink_mass sink_rate sparsity entropy row_mass_mean row_mass_min row_mass_max zero_rows tokens \
            sink_mass_uniform nonzero_ratio massive_activations kurtosis mean_cosine effective_rank; do
  [ "$(sql "$tmp/s.db" "SELECT COUNT(*) FROM attn_stats WHERE run = '$run' AND layer = -1 AND head = -1 AND stat = '$stat'")" = 1 ] ||
    fail "no model-level $stat"
done
# The sink rate of Gu et al. for keys k = 1..10 (idx = k), model level.
[ "$(sql "$tmp/s.db" "SELECT COUNT(*) FROM attn_stats WHERE run = '$run' AND layer = -1 AND head = -1 AND stat = 'sink_k' AND idx BETWEEN 1 AND 10")" = 10 ] ||
  fail "no model-level sink_k for k = 1..10"
# Storing again replaces the rows (upsert), never duplicates them.
before=$(sql "$tmp/s.db" "SELECT COUNT(*) FROM attn_stats WHERE run = '$run'")
"$ATTNBENCH" attn-stats --checkpoint "$tmp/lazy" --data "$tmp/shards/val.bin" --tokens 64 --window 16 --db "$tmp/s.db" > /dev/null 2>&1
[ "$(sql "$tmp/s.db" "SELECT COUNT(*) FROM attn_stats WHERE run = '$run'")" = "$before" ] || fail "rows duplicated"

# Mask@k: the fixed token sits at k = 3 of every window and its mass is reported beside the sink.
"$ATTNBENCH" attn-stats --checkpoint "$tmp/mask" --tokens 128 --format json > "$tmp/mask.json" 2> "$tmp/err" ||
  { cat "$tmp/err"; fail "mask"; }
python3 - "$tmp/mask.json" <<'PY' || fail "Mask@k json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["fixed_token_position"] == 3, d["fixed_token_position"]
assert 0 < d["model"]["fixed_token_mass"] <= 1
assert d["learned"] == [], d["learned"]  # softmax learns nothing in its attention
PY

# --text needs the GPT-2 tokenizer from the data folder.
if [ -n "${ATTNBENCH_DATA:-}" ]; then
  printf 'The quick brown fox jumps over the lazy dog. %.0s' $(seq 1 20) > "$tmp/text.txt"
  "$ATTNBENCH" attn-stats --checkpoint "$tmp/lazy" --text "$tmp/text.txt" --window 32 > "$tmp/t" 2> "$tmp/err" ||
    { cat "$tmp/err"; fail "--text"; }
  grep -q "from text.txt" "$tmp/t" || { cat "$tmp/t"; fail "--text source not named"; }
else
  echo "note: ATTNBENCH_DATA is not set: --text (needs the GPT-2 tokenizer) not tested" >&2
fi
echo ok
