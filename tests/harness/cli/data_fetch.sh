#!/usr/bin/env bash
# `attnbench data fetch` against a loopback server that mimics the datasets-server rows API
# (tests/harness/cli/fake_rows_server.py, serving pages built from the real files in $ATTNBENCH_DATA):
# retries through a dropped connection and a server error, resumes an interrupted download from
# where it stopped, records checksums, skips what is complete, and without a network says which
# files are expected and how to get them (exit 2, no final file written).
set -euo pipefail
: "${ATTNBENCH:?path of the attnbench binary}"
if [ -z "${ATTNBENCH_DATA:-}" ]; then
  echo "SKIP: ATTNBENCH_DATA is not set (the fake server builds its pages from the real data)"
  exit 77  # Skipped (tests/CMakeLists.txt)
fi
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

start_server() {  # $1 = faults
  rm -f "$tmp/port"
  python3 "$here/fake_rows_server.py" --data "$ATTNBENCH_DATA" --port-file "$tmp/port" \
    --log "$tmp/requests.log" --faults "$1" --truncate-row 7 &
  server_pid=$!
  for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
  endpoint="http://127.0.0.1:$(cat "$tmp/port")"
}
stop_server() { kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; server_pid=""; }

fetch() {  # $1 = out dir, rest = extra args
  local out=$1; shift
  "$ATTNBENCH" data fetch --out "$out" --only arc_easy,copa,fineweb_edu --pretrain-rows 13 \
    --endpoint "$endpoint" --files-endpoint "$endpoint/files" --backoff 0.05 "$@"
}

# Compares fetched rows with the source rows, row by row (row 7 of each is served truncated and
# must be skipped).
check_rows() {  # $1 = fetched jsonl, $2 = source jsonl, $3 = "text-only" for the pretraining rows
  python3 - "$1" "$2" "${3:-}" <<'EOF'
import json, sys
got = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
src = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8") if l.strip()]
if sys.argv[3] == "text-only":
    src = [{"text": r["text"], "id": r["source_path"]} for r in src]
want = [r for i, r in enumerate(src) if i != 7]
assert got == want, f"{sys.argv[1]}: {len(got)} rows, expected {len(want)} (first difference at " \
    f"{next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))})"
print(f"ok {sys.argv[1]}: {len(got)} rows")
EOF
}

# 1. A dropped connection (request 2: the second tokenizer file, cut in half) and a server error
#    (request 5: a rows page) are retried transparently; the tokenizer files are checksum-verified.
start_server "drop@2,500@5"
fetch "$tmp/a" > "$tmp/a.out"
stop_server
check_rows "$tmp/a/arc_easy/hf_format/test.jsonl" "$ATTNBENCH_DATA/arc_easy/hf_format/ARC-Easy-test.jsonl"
check_rows "$tmp/a/copa/hf_format/validation.jsonl" "$ATTNBENCH_DATA/copa/val.jsonl"
check_rows "$tmp/a/fineweb_edu/hf_format/train.jsonl" \
  "$ATTNBENCH_DATA/pretrain_wikipedia_en/wiki_pages_004.jsonl" text-only
python3 - "$tmp/a" <<'EOF'
import hashlib, json, os, sys
root = sys.argv[1]
manifest = json.load(open(os.path.join(root, "fetch_manifest.json")))
assert len(manifest["files"]) == 3, manifest
for f in manifest["files"]:
    data = open(os.path.join(root, f["path"]), "rb").read()
    assert hashlib.sha256(data).hexdigest() == f["sha256"], f
    assert f["rows"] == data.count(b"\n"), f
    assert f["skipped_truncated"] == 1, f
print("ok manifest checksums")
EOF
grep -q "500" "$tmp/requests.log" || true
[ "$(ls "$tmp/a"/*/hf_format | grep -c partial)" = 0 ] || { echo "FAIL: partial files left"; exit 1; }
cmp "$tmp/a/gpt2_tokenizer/encoder.json" "$ATTNBENCH_DATA/gpt2_tokenizer/encoder.json"
cmp "$tmp/a/gpt2_tokenizer/vocab.bpe" "$ATTNBENCH_DATA/gpt2_tokenizer/vocab.bpe"

# 2. Rerunning a complete fetch downloads nothing.
start_server ""
: > "$tmp/requests.log"
fetch "$tmp/a" > "$tmp/a2.out"
stop_server
[ ! -s "$tmp/requests.log" ] || { echo "FAIL: a complete fetch made requests"; cat "$tmp/requests.log"; exit 1; }
grep -q "up to date" "$tmp/a2.out" || { echo "FAIL: no 'up to date' message"; cat "$tmp/a2.out"; exit 1; }

# 3. Interrupted download: the server dies after the tokenizer files and 10 pages of ARC-Easy
#    (rows 0..999); the rerun resumes at offset 1000 instead of starting again, and the result
#    equals the source (the verified tokenizer files are not downloaded again).
start_server "die@13"
if fetch "$tmp/b" --retries 0 > "$tmp/b.out" 2>&1; then echo "FAIL: fetch survived a dead server"; exit 1; fi
stop_server
[ -f "$tmp/b/arc_easy/hf_format/test.jsonl.partial" ] || { echo "FAIL: no partial file kept"; exit 1; }
[ ! -f "$tmp/b/arc_easy/hf_format/test.jsonl" ] || { echo "FAIL: final file written early"; exit 1; }
: > "$tmp/requests.log"
start_server ""
fetch "$tmp/b" > "$tmp/b2.out"
stop_server
first=$(head -1 "$tmp/requests.log")
[ "$first" = "allenai/ai2_arc ARC-Easy test 1000 100" ] || { echo "FAIL: did not resume: $first"; exit 1; }
check_rows "$tmp/b/arc_easy/hf_format/test.jsonl" "$ATTNBENCH_DATA/arc_easy/hf_format/ARC-Easy-test.jsonl"

# 4. No network: one clear message naming the expected files and how to get them, exit 2.
set +e
"$ATTNBENCH" data fetch --out "$tmp/c" --only arc_easy --endpoint http://127.0.0.1:9 \
  --files-endpoint http://127.0.0.1:9 --retries 1 --backoff 0.01 > "$tmp/c.out" 2> "$tmp/c.err"
rc=$?
set -e
[ "$rc" = 2 ] || { echo "FAIL: exit $rc without network, expected 2"; cat "$tmp/c.err"; exit 1; }
grep -q "gpt2_tokenizer/encoder.json" "$tmp/c.err" || { echo "FAIL: message lacks the expected file"; cat "$tmp/c.err"; exit 1; }
grep -q "ATTNBENCH_DATA" "$tmp/c.err" || { echo "FAIL: message lacks how to get the data"; cat "$tmp/c.err"; exit 1; }
[ -z "$(find "$tmp/c" -name '*.jsonl' 2>/dev/null)" ] || { echo "FAIL: half-written files"; exit 1; }
echo "data fetch: all checks passed"
