#!/usr/bin/env bash
# `attnbench tokenize` / `detokenize`: ids, JSON, exact round trips (stress file, invalid UTF-8),
# end-of-text, and exit code 2 with a clear message for bad input.
set -uo pipefail
: "${ATTNBENCH:?}" "${ATTNBENCH_SOURCE_DIR:?}"
if [[ -z "${ATTNBENCH_DATA:-}" ]]; then echo "SKIPPED: set ATTNBENCH_DATA"; exit 77; fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

out=$("$ATTNBENCH" tokenize "Hello world") || fail "tokenize exit $?"
[[ "$out" == "15496 995" ]] || fail "tokenize 'Hello world' gave '$out', GPT-2 gives '15496 995'"
out=$("$ATTNBENCH" tokenize --eot "Hello world")
[[ "$out" == "50256 15496 995" ]] || fail "--eot gave '$out'"
out=$("$ATTNBENCH" tokenize "<|endoftext|>")
[[ "$out" != *50256* ]] || fail "the special string must be encoded as ordinary text, got '$out'"
json=$("$ATTNBENCH" tokenize --format json "Hello world")
[[ "$json" == *'"count":2'* && *'"ids":[15496,995]'* && "$json" == *'" world"'* ]] ||
  fail "json output: $json"

text=$("$ATTNBENCH" detokenize 15496 995) || fail "detokenize exit $?"
[[ "$text" == "Hello world" ]] || fail "detokenize gave '$text'"
text=$(echo "[15496, 995]" | "$ATTNBENCH" detokenize)
[[ "$text" == "Hello world" ]] || fail "detokenize from stdin gave '$text'"
text=$("$ATTNBENCH" tokenize --format json "Hello world" | "$ATTNBENCH" detokenize)
[[ "$text" == "Hello world" ]] || fail "detokenize of the json output gave '$text'"

stress="$ATTNBENCH_SOURCE_DIR/tests/core/data/stress.txt"
"$ATTNBENCH" tokenize --file "$stress" | "$ATTNBENCH" detokenize > "$tmp/stress.out"
cmp "$stress" "$tmp/stress.out" || fail "stress.txt does not round-trip"
printf 'caf\xc3\xa9 \xff\xfe\x80 broken \xe2\x82 end\n' > "$tmp/bad.txt"
"$ATTNBENCH" tokenize --file "$tmp/bad.txt" | "$ATTNBENCH" detokenize > "$tmp/bad.out"
cmp "$tmp/bad.txt" "$tmp/bad.out" || fail "invalid UTF-8 does not round-trip"
"$ATTNBENCH" tokenize --file - < "$tmp/bad.txt" | "$ATTNBENCH" detokenize | cmp - "$tmp/bad.txt" ||
  fail "--file - (stdin) does not round-trip"

expect_usage() {  # expect exit 2 and a message containing $1; the rest is the command
  local want=$1; shift
  local err code
  err=$("$@" 2>&1 >/dev/null); code=$?
  [[ $code == 2 ]] || fail "'$*' exited $code, expected 2 ($err)"
  [[ "$err" == *"$want"* ]] || fail "'$*' said '$err', expected it to mention '$want'"
}
expect_usage "outside the GPT-2 vocabulary" "$ATTNBENCH" detokenize 15496 50257
expect_usage "'abc' is not a token id" "$ATTNBENCH" detokenize 1 abc
expect_usage "not both" "$ATTNBENCH" tokenize --file "$stress" "some text"
expect_usage "gpt2_tokenizer" "$ATTNBENCH" tokenize --data-dir "$tmp/nowhere" "x"
expect_usage "cannot open tokenize --file" "$ATTNBENCH" tokenize --file "$tmp/missing.txt"
echo "ok"
