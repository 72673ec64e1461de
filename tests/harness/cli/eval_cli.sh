#!/usr/bin/env bash
# `attnbench eval` end to end on a freshly trained tiny checkpoint: usage errors (exit 2) before any
# work; with $ATTNBENCH_DATA, a limited run of three task types (multiple choice, LAMBADA, WikiText)
# with JSON output, --dump-requests, and the store's evals and samples rows under the run id.
set -euo pipefail
source "$(dirname "$0")/sweep_fixture.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

make_sweep "$tmp"
"$ATTNBENCH" train --config "$tmp/base.toml" --set train.steps=5 --out "$tmp/run" --quiet \
  > "$tmp/train.log" 2>&1 || { cat "$tmp/train.log"; fail "training"; }

expect_error "no such folder" "$ATTNBENCH" eval --checkpoint "$tmp/nothing" --tasks copa
expect_error "no complete checkpoint" "$ATTNBENCH" eval --checkpoint "$tmp" --tasks copa
expect_error "expected none or prepend" "$ATTNBENCH" eval --checkpoint "$tmp/run" --tasks copa --bos first
expect_error "expected table or json" "$ATTNBENCH" eval --checkpoint "$tmp/run" --tasks copa --format xml
expect_error "piqa" "$ATTNBENCH" eval --checkpoint "$tmp/run" --tasks pica

if [ -z "${ATTNBENCH_DATA:-}" ]; then
  echo "skip: ATTNBENCH_DATA is not set; the scoring part of this test needs the task files" >&2
  exit 77  # Skipped (tests/CMakeLists.txt)
fi

"$ATTNBENCH" eval --checkpoint "$tmp/run" --tasks copa,lambada_openai,wikitext --limit 3 \
  --batch-size 4 --bootstrap-iters 100 --format json --db "$tmp/db.sqlite" --log-samples \
  --dump-requests "$tmp/requests.jsonl" > "$tmp/out.json" 2> "$tmp/err" ||
  { cat "$tmp/err"; fail "eval"; }

# JSON: lm-eval's result keys, accuracies in [0, 1], a finite perplexity.
perl -MJSON::PP -e '
  local $/; my $j = decode_json(<STDIN>);
  my $r = $j->{results};
  my $acc = $r->{copa}{"acc,none"};
  die "copa acc $acc\n" unless defined $acc && $acc >= 0 && $acc <= 1;
  die "no copa stderr\n" unless defined $r->{copa}{"acc_stderr,none"};
  my $ppl = $r->{lambada_openai}{"perplexity,none"};
  die "lambada perplexity $ppl\n" unless $ppl > 1;
  die "no wikitext bits_per_byte\n" unless $r->{wikitext}{"bits_per_byte,none"} > 0;
  die "wrong protocol $j->{protocol}\n" unless $j->{protocol} =~ /^lm-eval-0\.4\.13-zeroshot\/attnbench-\d+$/;
  die "wrong bos\n" unless $j->{bos} eq "none" && $j->{limit} == 3;
' < "$tmp/out.json" || { cat "$tmp/out.json"; fail "json output"; }

# --dump-requests: COPA has two requests per document, LAMBADA and WikiText one.
[ "$(wc -l < "$tmp/requests.jsonl")" = $((3 * 2 + 3 + 3)) ] || { cat "$tmp/requests.jsonl"; fail "request count"; }
grep -q '"task":"copa"' "$tmp/requests.jsonl" || fail "no copa requests"
# COPA's continuation starts with two spaces (target delimiter + the choice's own space).
grep '"task":"copa"' "$tmp/requests.jsonl" | head -1 | grep -q '"continuation":"  ' ||
  { head -2 "$tmp/requests.jsonl"; fail "COPA continuation without the double space"; }

# The store: one row per (task, metric) under the checkpoint's run id, with limit, protocol and BOS:
# copa acc, lambada_openai perplexity and acc, wikitext's three, and the gold continuation's logprob
# and bits_per_byte for copa and lambada_openai.
run_id=$(perl -MJSON::PP -e 'local $/; print decode_json(<STDIN>)->{run_id}' < "$tmp/out.json")
db="$tmp/db.sqlite"
[ "$(sql "$db" "SELECT count(*) FROM evals WHERE run = '$run_id'")" = 10 ] ||
  fail "evals rows: $(sql "$db" 'SELECT * FROM evals')"
[ "$(sql "$db" "SELECT count(DISTINCT item_limit || bos || protocol_version) FROM evals")" = 1 ] ||
  fail "limit/bos/protocol not recorded uniformly"
[ "$(sql "$db" "SELECT bos FROM evals LIMIT 1")" = none ] || fail "bos not recorded"
[ "$(sql "$db" "SELECT count(*) FROM samples WHERE run = '$run_id' AND task = 'copa'")" = 6 ] ||
  fail "copa samples: $(sql "$db" 'SELECT count(*) FROM samples')"

# Running again replaces the rows instead of duplicating them.
"$ATTNBENCH" eval --checkpoint "$tmp/run" --tasks copa --limit 3 --db "$tmp/db.sqlite" > /dev/null 2>&1 ||
  fail "second eval"
[ "$(sql "$db" "SELECT count(*) FROM evals WHERE task = 'copa'")" = 3 ] || fail "duplicated eval rows"
[ "$(sql "$db" "SELECT count(*) FROM evals WHERE task = 'copa' AND metric IN ('logprob', 'bits_per_byte') AND value IS NOT NULL")" = 2 ] ||
  fail "copa's gold logprob and bits_per_byte missing"

# A model whose context is shorter than a task's longest answer: refused before anything is
# scored or stored, naming the task, the longest answer's document and the lengths (copa, listed
# first, fits and is not scored either).
"$ATTNBENCH" train --config "$tmp/base.toml" --set train.steps=2 --set model.context_length=16 \
  --out "$tmp/short" --quiet > "$tmp/train.log" 2>&1 || { cat "$tmp/train.log"; fail "training short"; }
expect_error "task piqa: document" "$ATTNBENCH" eval --checkpoint "$tmp/short" --tasks copa,piqa \
  --limit 20 --db "$tmp/short.db"
grep -qE "has an answer of [0-9]+ tokens, longer than the model's context of 16 tokens \(documents with such an answer: [0-9]+ of 20\)" "$tmp/err" ||
  { cat "$tmp/err"; fail "lengths"; }
[ ! -e "$tmp/short.db" ] || fail "an eval refused by its preflight wrote the database"

# Length extrapolation: the same model scored at 256 tokens (--context), past its training context,
# where every answer fits; stored and printed as piqa@256.
expect_error "--context" "$ATTNBENCH" eval --checkpoint "$tmp/short" --tasks piqa --context 0
# Refused before the tasks load: a data folder with the tokenizer but no task files is not read.
mkdir -p "$tmp/tokenizer-only" && ln -s "$ATTNBENCH_DATA/gpt2_tokenizer" "$tmp/tokenizer-only/"
expect_error "--context" "$ATTNBENCH" eval --checkpoint "$tmp/short" --tasks piqa --context 0 \
  --data-dir "$tmp/tokenizer-only"
"$ATTNBENCH" eval --checkpoint "$tmp/short" --tasks piqa --limit 20 --context 256 --db "$tmp/long.db" \
  > "$tmp/long.out" 2> "$tmp/err" || { cat "$tmp/err"; fail "eval --context 256"; }
grep -qE "^piqa@256 +acc " "$tmp/long.out" || { cat "$tmp/long.out"; fail "piqa@256 not printed"; }
[ "$(sql "$tmp/long.db" "SELECT DISTINCT task FROM evals")" = "piqa@256" ] ||
  fail "stored tasks: $(sql "$tmp/long.db" "SELECT DISTINCT task FROM evals")"
echo "ok"
