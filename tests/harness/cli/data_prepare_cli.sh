#!/usr/bin/env bash
# `attnbench data prepare`: shards + manifest from JSONL (.gz), plain progress lines with MB/s when
# not on a terminal, exit 2 with file:line for a malformed line (nothing written), --skip-bad.
set -uo pipefail
: "${ATTNBENCH:?}" "${ATTNBENCH_SOURCE_DIR:?}"
if [[ -z "${ATTNBENCH_DATA:-}" ]]; then echo "SKIPPED: set ATTNBENCH_DATA"; exit 77; fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

head -n 40 "$ATTNBENCH_DATA/pretrain_wikipedia_en/wiki_pages_000.jsonl" > "$tmp/a.jsonl"
head -n 80 "$ATTNBENCH_DATA/pretrain_wikipedia_en/wiki_pages_001.jsonl" | gzip > "$tmp/b.jsonl.gz"
"$ATTNBENCH" data prepare --input "$tmp/a.jsonl" "$tmp/b.jsonl.gz" --out "$tmp/shards" \
  --val-tokens 5000 --shard-tokens 100000 --jobs 2 > "$tmp/stdout" 2> "$tmp/stderr" ||
  fail "data prepare exit $?: $(cat "$tmp/stderr")"
grep -q "MB/s" "$tmp/stderr" || fail "no progress line with MB/s: $(cat "$tmp/stderr")"
grep -q "120 documents" "$tmp/stdout" || fail "summary: $(cat "$tmp/stdout")"
[[ -f "$tmp/shards/shards_val_000000.bin" && -f "$tmp/shards/shards_train_000001.bin" ]] ||
  fail "shards missing: $(ls "$tmp/shards")"
python3 - "$tmp/shards" <<'PY' || fail "manifest check"
import json, os, struct, sys
d = sys.argv[1]
m = json.load(open(os.path.join(d, "manifest.json")))
total = 0
for s in m["shards"]:
    raw = open(os.path.join(d, s["file"]), "rb").read()
    magic, version, n = struct.unpack("<3i", raw[:12])
    assert magic == 20240520 and version == 1 and n == s["tokens"], s
    assert len(raw) == 1024 + 2 * n
    tokens = struct.unpack("<%dH" % n, raw[1024:])
    if s["split"] == "val":
        assert tokens[0] == 50256
    total += n
assert total == m["tokens"], (total, m["tokens"])
assert m["documents"] == 120 and [x["documents"] for x in m["sources"]] == [40, 80]
assert m["sources"][1]["format"] == "jsonl.gz" and len(m["sources"][1]["sha256"]) == 64
assert m["splits"]["val"]["tokens"] + m["splits"]["train"]["tokens"] == total
PY

printf '{"text": "fine"}\n{"text": "broken\n{"text": "also fine"}\n' > "$tmp/bad.jsonl"
err=$("$ATTNBENCH" data prepare --input "$tmp/bad.jsonl" --out "$tmp/bad_out" --val-tokens 0 2>&1)
code=$?
[[ $code == 2 ]] || fail "malformed line: exit $code, expected 2 ($err)"
[[ "$err" == *"bad.jsonl:2:"* ]] || fail "malformed line not located as bad.jsonl:2: $err"
[[ ! -e "$tmp/bad_out" ]] || fail "a failed run left $tmp/bad_out behind"
[[ -z "$(ls -A "$tmp" | grep '\.tmp-')" ]] || fail "temporary folder left: $(ls -A "$tmp")"
"$ATTNBENCH" data prepare --input "$tmp/bad.jsonl" --out "$tmp/bad_out" --val-tokens 0 --skip-bad \
  > "$tmp/stdout" 2>&1 || fail "--skip-bad exit $?: $(cat "$tmp/stdout")"
grep -q "skipped 1 malformed" "$tmp/stdout" || fail "--skip-bad summary: $(cat "$tmp/stdout")"

err=$("$ATTNBENCH" data prepare --input "$tmp/a.jsonl" --out "$tmp/shards" 2>&1); code=$?
[[ $code == 2 && "$err" == *"--force"* ]] || fail "existing --out: exit $code: $err"
"$ATTNBENCH" data 2>/dev/null; [[ $? == 2 ]] || fail "'data' without a subcommand must exit 2"
echo "ok"
