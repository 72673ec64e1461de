#!/usr/bin/env bash
# Hugging Face folders as checkpoints, end to end (docs/pretrained.md), on the tiny fixtures of
# tests/fixtures/hf: generate, attn-stats (--text) and, with $ATTNBENCH_DATA, eval with its rows
# stored under the model's identity; bad folders exit 2 naming the file or key before any work.
set -euo pipefail
source "$(dirname "$0")/sweep_fixture.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
A=$ATTNBENCH
hf=$ATTNBENCH_SOURCE_DIR/tests/fixtures/hf

expect_error "attn_logit_softcapping" "$A" eval --checkpoint "$hf/bad/softcapping" --tasks copa
expect_error "frobnicator" "$A" generate --checkpoint "$hf/bad/unknown_model_type" --prompt a
expect_error "model-00002-of-00002.safetensors" "$A" attn-stats --checkpoint "$hf/bad/missing_shard" --text /dev/null
expect_error "yarn" "$A" eval --checkpoint "$hf/bad/rope_scaling_yarn" --tasks copa
expect_error "give --text" "$A" attn-stats --checkpoint "$hf/gpt2"

# Generation: deterministic greedy tokens, the same on a second run; a BOS-adding tokenizer
# (llama) and one without (gpt2) both generate.
for m in gpt2 llama_gqa gpt_neox; do
  "$A" generate --checkpoint "$hf/$m" --prompt "Thou art" --max-gen-toks 8 --threads 1 \
    > "$tmp/$m.gen" 2> "$tmp/$m.err" || { cat "$tmp/$m.err"; fail "generate $m"; }
  grep -q "generated" "$tmp/$m.err" || fail "no token counts for $m"
  "$A" generate --checkpoint "$hf/$m" --prompt "Thou art" --max-gen-toks 8 --threads 1 \
    > "$tmp/$m.gen2" 2>/dev/null
  cmp -s "$tmp/$m.gen" "$tmp/$m.gen2" || fail "generate $m is not deterministic"
done

# Attention statistics on held-out text, every query head of a GQA model measured.
printf 'ROMEO: But soft, what light through yonder window breaks?\n%.0s' $(seq 20) > "$tmp/text.txt"
"$A" attn-stats --checkpoint "$hf/llama_gqa" --text "$tmp/text.txt" --tokens 256 --format json \
  --db "$tmp/stats.db" > "$tmp/stats.json" 2> "$tmp/stats.err" || { cat "$tmp/stats.err"; fail "attn-stats"; }
python3 - "$tmp/stats.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
heads = d["layers"][0]["heads"]
assert len(d["layers"]) == 2 and len(heads) == 4, (len(d["layers"]), len(heads))
PY
[ "$(sql "$tmp/stats.db" "SELECT value FROM params WHERE key = 'pretrained.family'")" = llama ] ||
  fail "the imported run's family is not stored"

if [ -z "${ATTNBENCH_DATA:-}" ]; then
  echo "ATTNBENCH_DATA is unset: skipping the eval checks" >&2
  exit 77  # Skipped (tests/CMakeLists.txt)
fi
"$A" eval --checkpoint "$hf/gpt2" --tasks copa,lambada_openai --limit 5 --threads 1 --format json \
  --db "$tmp/eval.db" > "$tmp/eval.json" 2> "$tmp/eval.err" || { cat "$tmp/eval.err"; fail "eval gpt2"; }
run=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$tmp/eval.json")
[ "$(sql "$tmp/eval.db" "SELECT value FROM params WHERE run = '$run' AND key = 'pretrained.name'")" = gpt2 ] ||
  fail "the imported run's name is not stored"
[ "$(sql "$tmp/eval.db" "SELECT count(*) FROM evals WHERE run = '$run' AND task = 'copa'")" -ge 1 ] ||
  fail "no copa rows for the imported run"
# The same folder with its tokenizer.json replaced is not scored over the stored rows (they are of
# the old tokenizer's text): refused, naming both.
cp -r "$hf/gpt2" "$tmp/gpt2"
"$A" eval --checkpoint "$tmp/gpt2" --tasks copa --limit 5 --threads 1 --db "$tmp/tok.db" \
  > /dev/null 2>&1 || fail "eval of the copied folder"
python3 - "$tmp/gpt2/tokenizer.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
json.dump(t, open(sys.argv[1], "w"), indent=4)  # other bytes: the tokenizer is known by its file
PY
expect_error "is not the tokenizer run" \
  "$A" eval --checkpoint "$tmp/gpt2" --tasks copa --limit 5 --threads 1 --db "$tmp/tok.db"
# The llama tokenizer adds BOS: its rows say so.
"$A" eval --checkpoint "$hf/llama_gqa" --tasks copa --limit 5 --threads 1 --db "$tmp/eval.db" \
  > "$tmp/llama.out" 2> "$tmp/llama.err" || { cat "$tmp/llama.err"; fail "eval llama"; }
grep -q "bos prepend" "$tmp/llama.out" || { cat "$tmp/llama.out"; fail "llama is not scored with BOS"; }

# A sweep's [[pretrained]] entry: scored after the trained cell on the same tasks, stored in the
# sweep, a row of its table; a second run scores nothing again.
make_sweep "$tmp/sw"
cat > "$tmp/sw/mixed.toml" <<TOML
[sweep]
name = "mixed"
base = "base.toml"
tasks = ["copa"]
limit = 4

[[pretrained]]
path = "$hf/gpt2"
TOML
# A length past what the imported model reads ([eval] contexts): refused before any cell trains.
sed 's/^\[eval\]$/[eval]\ncontexts = [128]/' "$tmp/sw/base.toml" > "$tmp/sw/long.toml"
sed 's/^base = "base.toml"$/base = "long.toml"/' "$tmp/sw/mixed.toml" > "$tmp/sw/long_sweep.toml"
expect_error '[[pretrained]] path = "'"$hf"'/gpt2": [eval] contexts 128: this model reads at most 64 tokens' \
  "$A" sweep "$tmp/sw/long_sweep.toml" --db "$tmp/long.db" --runs-dir "$tmp/sw/runs"
[ ! -e "$tmp/long.db" ] || fail "a sweep refused by its preflight wrote the database"
"$A" sweep "$tmp/sw/mixed.toml" --dry-run --db "$tmp/sw.db" > "$tmp/dry.out" ||
  fail "sweep --dry-run with [[pretrained]]"
grep -q "pretrained $hf/gpt2" "$tmp/dry.out" || { cat "$tmp/dry.out"; fail "the dry run does not list it"; }
(cd "$tmp/sw" && OMP_NUM_THREADS=1 "$A" sweep mixed.toml --db "$tmp/sw.db" --runs-dir "$tmp/sw/runs" \
  --quiet > "$tmp/sweep.out" 2>&1) || { cat "$tmp/sweep.out"; fail "sweep with [[pretrained]]"; }
grep -q "pretrained=gpt2: finished" "$tmp/sweep.out" || { cat "$tmp/sweep.out"; fail "not scored"; }
[ "$(sql "$tmp/sw.db" "SELECT count(*) FROM sweep_runs sr JOIN params p ON p.run = sr.run
     WHERE sr.sweep = 'mixed' AND p.key = 'pretrained.name' AND p.value = 'gpt2'")" = 1 ] ||
  fail "the imported run is not a member of the sweep"
"$A" results table --sweep mixed --db "$tmp/sw.db" > "$tmp/table.md"
grep -q "| gpt2 |" "$tmp/table.md" || { cat "$tmp/table.md"; fail "no gpt2 row in the table"; }
# Measured on the cells' held-out text (the base config's val shard, read as text).
[ "$(sql "$tmp/sw.db" "SELECT count(*) FROM attn_stats a JOIN params p ON p.run = a.run
     WHERE p.key = 'pretrained.name' AND a.stat = 'sink_mass'")" -gt 0 ] ||
  fail "no attention statistics for the imported model"
"$A" attn-stats --checkpoint "$hf/llama_gqa" --data "$tmp/sw/shards/val.bin" --tokens 128 \
  --format json > "$tmp/shard_stats.json" 2> "$tmp/shard_stats.err" ||
  { cat "$tmp/shard_stats.err"; fail "attn-stats --data on an imported model"; }
grep -q "val.bin" "$tmp/shard_stats.err" "$tmp/shard_stats.json" ||
  { cat "$tmp/shard_stats.err"; fail "the shard is not named as the source"; }
# A shard of the model's own tokens (`data prepare --tokenizer`, named by its manifest) is read as
# it is, not decoded as GPT-2 tokens; a model with another tokenizer refuses it.
for i in $(seq 40); do echo '{"text": "ROMEO: But soft, what light through yonder window breaks?"}'; done \
  > "$tmp/own.jsonl"
"$A" data prepare --input "$tmp/own.jsonl" --out "$tmp/own" --tokenizer "$hf/llama_gqa" \
  --val-tokens 0 > /dev/null 2>&1 || fail "data prepare --tokenizer"
"$A" attn-stats --checkpoint "$hf/llama_gqa" --data "$tmp/own" --tokens 128 --format json \
  > "$tmp/own_stats.json" 2> "$tmp/own_stats.err" || { cat "$tmp/own_stats.err"; fail "own shard"; }
grep -q "as text" "$tmp/own_stats.err" "$tmp/own_stats.json" &&
  { cat "$tmp/own_stats.err"; fail "the model's own tokens were decoded as GPT-2's"; }
expect_error 'records tokens of the tokenizer "llama_gqa"' \
  "$A" attn-stats --checkpoint "$hf/gpt2" --data "$tmp/own" --tokens 128
[ "$(grep -c '^| ' "$tmp/table.md")" = 4 ] || { cat "$tmp/table.md"; fail "not header, rule and 2 rows"; }
# The report draws the imported model's heatmap too, from the folder its sweep file names, on the
# trained cell's validation text in its own tokens.
gpt2_run=$(sql "$tmp/sw.db" "SELECT run FROM params WHERE key = 'pretrained.name' AND value = 'gpt2'")
"$A" report --sweep mixed --db "$tmp/sw.db" --runs-dir "$tmp/sw/runs" --out "$tmp/page" --threads 1 \
  > /dev/null 2> "$tmp/report.err" || { cat "$tmp/report.err"; fail "report of a sweep with [[pretrained]]"; }
[ -s "$tmp/page/heatmap_$gpt2_run.svg" ] || { cat "$tmp/report.err"; fail "no heatmap of the imported model"; }
grep -q "imported $hf/gpt2" "$tmp/page/index.html" || fail "the imported model's heatmap does not say what it shows"
(cd "$tmp/sw" && OMP_NUM_THREADS=1 "$A" sweep mixed.toml --db "$tmp/sw.db" --runs-dir "$tmp/sw/runs" \
  --quiet > "$tmp/again.out" 2>&1) || { cat "$tmp/again.out"; fail "second sweep run"; }
grep -q "evaluating" "$tmp/again.out" && { cat "$tmp/again.out"; fail "scored again"; }
# A model scored before by `eval --db` (no attention measured) gets its statistics when a sweep
# lists it, though no task is missing.
sed 's/^limit = 4$/limit = 5/' "$tmp/sw/mixed.toml" > "$tmp/sw/later.toml"
(cd "$tmp/sw" && OMP_NUM_THREADS=1 "$A" sweep later.toml --db "$tmp/eval.db" --runs-dir "$tmp/sw/runs" \
  --quiet > "$tmp/later.out" 2>&1) || { cat "$tmp/later.out"; fail "sweep over an eval --db store"; }
grep -q "pretrained=gpt2: evaluating" "$tmp/later.out" && { cat "$tmp/later.out"; fail "rescored"; }
[ "$(sql "$tmp/eval.db" "SELECT count(*) FROM attn_stats WHERE run = '$run' AND stat = 'sink_mass'")" -gt 0 ] ||
  { cat "$tmp/later.out"; fail "a model scored by eval --db gets no attention statistics in a sweep"; }
echo "pretrained_cli: ok"
