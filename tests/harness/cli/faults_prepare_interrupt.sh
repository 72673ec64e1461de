# `data prepare` stopped by Ctrl-C (SIGINT) or SIGTERM mid-way: the process ends by that signal
# (exit 130 / 143) and leaves neither its temporary folder nor the output folder (before, the
# temporary .<out>.tmp-<pid> folder stayed behind).
set -uo pipefail
: "${ATTNBENCH:?}"
if [[ -z "${ATTNBENCH_DATA:-}" ]]; then echo "SKIPPED: set ATTNBENCH_DATA"; exit 77; fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# 48 MB of JSONL: tens of seconds of tokenizing, far longer than the test waits before stopping it.
inputs=("$ATTNBENCH_DATA"/pretrain_wikipedia_en/wiki_pages_00[01].jsonl)

for signal in INT TERM; do
  out="$tmp/shards_$signal"
  "$ATTNBENCH" data prepare --input "${inputs[@]}" --out "$out" --jobs 2 \
    > /dev/null 2> "$tmp/err" & pid=$!
  for _ in $(seq 600); do compgen -G "$tmp/.shards_$signal.tmp-*" > /dev/null && break; sleep 0.05; done
  compgen -G "$tmp/.shards_$signal.tmp-*" > /dev/null || { kill -9 "$pid"; fail "no temporary folder appeared"; }
  sleep 0.5  # under way: reading and tokenizing
  kill "-$signal" "$pid"
  rc=0; wait "$pid" || rc=$?
  expected=$([[ $signal == INT ]] && echo 130 || echo 143)
  [[ $rc -eq $expected ]] || fail "SIG$signal: exit $rc, expected $expected: $(cat "$tmp/err")"
  leftovers=$(ls -A "$tmp" | grep -v '^err$' || true)
  [[ -z "$leftovers" ]] || fail "SIG$signal left: $leftovers"
done
echo PASS
