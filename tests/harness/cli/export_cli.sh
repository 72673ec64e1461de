#!/usr/bin/env bash
# `attnbench export` on freshly trained tiny checkpoints: the native safetensors file and config for
# every variant, the Llama layout only for softmax + RoPE, and usage errors (exit 2).
set -euo pipefail
source "$(dirname "$0")/sweep_fixture.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

make_sweep "$tmp"
for v in softmax lazy; do
  "$ATTNBENCH" train --config "$tmp/base.toml" --set attention.variant=$v --set train.steps=5 \
    --out "$tmp/$v" --quiet > "$tmp/train.log" 2>&1 || { cat "$tmp/train.log"; fail "training $v"; }
done

rc=0; "$ATTNBENCH" export --checkpoint "$tmp/softmax" --out "$tmp/x" --format onnx 2> "$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -q "only safetensors" "$tmp/err" || { cat "$tmp/err"; fail "bad --format: exit $rc"; }
rc=0; "$ATTNBENCH" export --checkpoint "$tmp/none" --out "$tmp/x" 2> "$tmp/err" || rc=$?
[ "$rc" = 2 ] || fail "missing checkpoint: exit $rc"

# header_names FILE: the tensor names of a safetensors file (8-byte little-endian length, JSON).
header_names() {
  perl -MJSON::PP -e 'open(my $f, "<:raw", $ARGV[0]) or die; read($f, my $n, 8);
    my $len = unpack("Q<", $n); read($f, my $h, $len); my $j = decode_json($h);
    print join("\n", sort grep { $_ ne "__metadata__" } keys %$j), "\n";' "$1"
}

"$ATTNBENCH" export --checkpoint "$tmp/softmax" --out "$tmp/softmax_export" > "$tmp/out" || fail "export softmax"
for f in model.safetensors config.json llama/model.safetensors llama/config.json; do
  [ -s "$tmp/softmax_export/$f" ] || fail "missing $f"
done
header_names "$tmp/softmax_export/model.safetensors" | grep -qx "blocks.0.attn.q.weight" || fail "native names"
header_names "$tmp/softmax_export/llama/model.safetensors" | grep -qx "model.layers.0.self_attn.q_proj.weight" ||
  fail "llama names"
grep -q '"LlamaForCausalLM"' "$tmp/softmax_export/llama/config.json" || fail "llama config"

"$ATTNBENCH" export --checkpoint "$tmp/lazy" --out "$tmp/lazy_export" > "$tmp/out" || fail "export lazy"
[ ! -e "$tmp/lazy_export/llama" ] || fail "a Llama layout for Lazy Attention"
grep -q "no Llama layout" "$tmp/out" || fail "no note about the missing Llama layout"
header_names "$tmp/lazy_export/model.safetensors" | grep -q "attn.core" || fail "variant parameters not exported"
echo "ok"
