#!/usr/bin/env bash
# Errors the user can act on are restated with the path and the cause, never as a library's text:
# a symbolic link loop or an over-long name where a checkpoint or database belongs (exit 2, not
# "filesystem error: status: ... [path]" and exit 1), and control characters in a config key
# escaped instead of reaching the terminal (an escape sequence would recolour or clear it).
set -euo pipefail
: "${ATTNBENCH:?set ATTNBENCH to the attnbench binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() {  # expect CODE SUBSTRING COMMAND...
  local code=$1 want=$2; shift 2
  local rc=0
  "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
  [ "$rc" = "$code" ] || { cat "$tmp/err"; fail "exit $rc (expected $code): $*"; }
  grep -qF -- "$want" "$tmp/err" || { cat "$tmp/err"; fail "'$want' not in the error of: $*"; }
  if grep -q "filesystem error" "$tmp/err"; then cat "$tmp/err"; fail "raw library text: $*"; fi
  if LC_ALL=C grep -q $'\x1b' "$tmp/err"; then fail "an escape character reached the terminal: $*"; fi
}

ln -s "$tmp/b" "$tmp/a" && ln -s "$tmp/a" "$tmp/b"
loop="Too many levels of symbolic links (a symbolic link loop"
expect 2 "$tmp/a: $loop" "$ATTNBENCH" eval --checkpoint "$tmp/a" --tasks copa
expect 2 "$tmp/a: $loop" "$ATTNBENCH" attn-stats --checkpoint "$tmp/a"
expect 2 "$tmp/a: $loop" "$ATTNBENCH" results runs --db "$tmp/a"
long="$tmp/$(printf 'x%.0s' $(seq 1 300))"
expect 2 "File name too long (a name over 255 bytes" "$ATTNBENCH" eval --checkpoint "$long"

# A key spelled with TOML escapes: ESC and the C1 control CSI (U+009B).
printf '[model]\n"\\u001b[31mred\\u009b" = 1\n' > "$tmp/esc.toml"
expect 2 'unknown key model.\x1b[31mred\u009b' "$ATTNBENCH" train --config "$tmp/esc.toml" --dry-run
: > "$tmp/empty.toml"
expect 2 'x\x1b[2J' "$ATTNBENCH" train --config "$tmp/empty.toml" --set $'model.x\x1b[2J=1' --dry-run
echo "messages_restated: ok"
