#!/usr/bin/env bash
# Bad configs fail before any work with exit 2 and a message naming file:line:col and the nearest
# valid key; a good one prints the resolved config with its run id (exit 0).
set -euo pipefail
: "${ATTNBENCH:?path of the attnbench binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

expect_error() {  # $1 = expected substring, rest = command
  local want=$1; shift
  set +e
  "$@" > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  set -e
  if [ "$rc" != 2 ]; then echo "FAIL: exit $rc (expected 2) for: $*"; cat "$tmp/err"; exit 1; fi
  if ! grep -qF -- "$want" "$tmp/err"; then echo "FAIL: '$want' not in:"; cat "$tmp/err"; exit 1; fi
}

printf '[model]\npreset = "tiny"\n[train]\nlearning_rate = 3e-4\n' > "$tmp/typo.toml"
expect_error "typo.toml:4:1: unknown key train.learning_rate" "$ATTNBENCH" config -c "$tmp/typo.toml"
printf '[model]\nd_model = 100\nn_head = 3\n' > "$tmp/heads.toml"
expect_error "heads.toml:3:10: model.n_head = 3 does not divide model.d_model = 100" \
  "$ATTNBENCH" config -c "$tmp/heads.toml"
expect_error "did you mean 'lazy'" "$ATTNBENCH" config --set attention.variant=lasy
expect_error "--set train.lr" "$ATTNBENCH" config --set train.lr=-1
expect_error "cannot open config" "$ATTNBENCH" config -c "$tmp/missing.toml"
expect_error "unknown key train.learning_rate" "$ATTNBENCH" train --config "$tmp/typo.toml" --out "$tmp/run"
[ ! -e "$tmp/run" ] || { echo "FAIL: a rejected config created its run folder"; exit 1; }

printf '[attention]\nvariant = "lazy"\n[train]\nlr = 1e-3\n' > "$tmp/ok.toml"
"$ATTNBENCH" config -c "$tmp/ok.toml" --set train.seed=3 > "$tmp/ok.json"
python3 - "$tmp/ok.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert len(j["run_id"]) == 12, j
c = j["config"]
assert c["attention"]["variant"] == "lazy" and c["attention"]["tau_init"] == -1.0, c["attention"]
assert c["train"]["lr"] == 1e-3 and c["train"]["seed"] == 3, c["train"]
PY
echo "config errors: all checks passed"
