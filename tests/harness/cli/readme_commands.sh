#!/usr/bin/env bash
# The README shows only commands that work: every one is run here. The commands are read from
# README.md itself (each line of its ```sh blocks, and every `attnbench ...`, `scripts/...` and
# `sqlite3 ...` span of its text and tables), so a command added to the README is run here too, in
# the README's order, from a folder laid out like the repository root (sweeps/ copied, runs/ filled
# by the quickstart).
# Only the budget shrinks: the quickstart through its ATTNBENCH_QUICKSTART_* variables, and every
# `train`/`sweep` by appended --set options (4 steps of 2 x 64 tokens, 2 items per task).
# Not run here: `scripts/test` (CI's own command, which runs this test), `attnbench data fetch`
# (it needs the network; tests/harness/cli/data_fetch.sh runs it against a loopback server) and the
# CUDA build, `scripts/build-cuda` / `scripts/fetch-torch` (a 760 MB download and a 20-minute build;
# CI's second part, `scripts/test --cuda`, runs both), and the GPU machine's pair
# `scripts/gpu-pack` (needs the CUDA build) / `scripts/gpu-check` (needs a CUDA device).
set -euo pipefail
source "$(dirname "$0")/quickstart_fixture.bash"
quickstart_workspace
full_data=$ATTNBENCH_DATA
export ATTNBENCH_DATA=$tmp/data ATTNBENCH_WORK=$tmp/root/runs
root=$tmp/root
mkdir -p "$root" && cp -r "$src/sweeps" "$root/"

# The README's commands, one per line, and the sweep file of "Writing a sweep".
python3 - "$src/README.md" "$tmp/commands" "$tmp/sweep_example.toml" <<'EOF'
import re, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
commands, fence, block, toml = [], None, [], None
starts = ("attnbench ", "attnbench\t", "scripts/", "sqlite3 ")
for line in lines:
    if line.startswith("```"):
        if fence is None:
            fence, block = line[3:].strip(), []
            continue
        if fence == "sh":
            joined = re.sub(r"\\\n\s*", " ", "\n".join(block))
            for cmd in joined.splitlines():
                cmd = re.sub(r"\s+#\s.*$", "", cmd).strip()
                if cmd:
                    commands.append(cmd)
        elif fence == "toml" and toml is None:
            toml = "\n".join(block) + "\n"
        fence = None
        continue
    if fence is not None:
        block.append(line)
        continue
    for span in re.findall(r"`([^`]+)`", line):
        if span.startswith(starts) or span == "attnbench":
            commands.append(span)
if toml is None:
    sys.exit("README.md: no ```toml block (the sweep of 'Writing a sweep')")
open(sys.argv[2], "w").write("\n".join(commands) + "\n")
open(sys.argv[3], "w").write(toml)
EOF
[ "$(head -1 "$tmp/commands")" = scripts/quickstart ] && [ "$(sed -n 2p "$tmp/commands")" = scripts/test ] ||
  fail "the README must open with scripts/quickstart and scripts/test; it opens with: $(head -2 "$tmp/commands")"

# What the README's placeholders stand for: a corpus, llm.c shards under fineweb10B/, the sweep of
# "Writing a sweep" saved where its text says. Run configs are the repository's own (the tiny
# preset reads the shards the quickstart prepared).
mkdir -p "$root/corpus"  # one file of the Wikipedia sample: above data prepare's 1M validation tokens
ln -s "$full_data/pretrain_wikipedia_en/wiki_pages_000.jsonl" "$root/corpus/"
ln -s runs/shards/wikipedia "$root/fineweb10B"
cp "$tmp/sweep_example.toml" "$root/sweeps/tau_forms.toml"

tiny_train="--set model.preset=tiny --set model.context_length=64 --set train.steps=4 \
--set train.batch_size=2 --set train.batch_tokens=0 --set train.warmup_steps=1 \
--set train.eval_interval=2 --set train.eval_tokens=256 --set train.checkpoint_interval=2"
n=0
while IFS= read -r cmd; do
  n=$((n + 1))
  case "$cmd" in
    "scripts/test"*|"attnbench data fetch"*|"scripts/build-cuda"*|"scripts/fetch-torch"*|\
    "scripts/gpu-pack"*|"scripts/gpu-check"*)
      echo "[$n] not run here: $cmd"; continue ;;
  esac
  run=$cmd
  run=${run//\[/}; run=${run//\]/}                  # [optional parts] are run with the option
  case "$run" in
    "attnbench train "*) run="$run $tiny_train" ;;
    "attnbench sweep "*)
      case "$run" in *--dry-run*|*--slurm*) ;; *) run="$run --limit 2 $tiny_train" ;; esac ;;
  esac
  case "$run" in
    attnbench|"attnbench "*) run="\"\$ATTNBENCH\"${run#attnbench}" ;;
    scripts/*) run="\"$src\"/$run" ;;
  esac
  run=${run//--sweep NAME/--sweep quickstart}
  if [[ $run == *RUN* ]]; then
    id=$(sqlite3 -readonly "$root/runs/attnbench.db" "SELECT id FROM runs WHERE status = 'finished' LIMIT 1")
    run=${run//RUN/$id}
  fi
  echo "[$n] $cmd"
  rc=0
  (cd "$root" && bash -c "$run") < /dev/null > "$tmp/out.$n" 2>&1 || rc=$?
  [ "$rc" = 0 ] || { tail -30 "$tmp/out.$n"; fail "README command [$n] exited $rc: $cmd (ran: $run)"; }
done < "$tmp/commands"

# What those commands must have produced.
out() { cat "$tmp/out.$1"; }
grep -q '^database:' "$tmp/out.1" || { out 1; fail "the quickstart did not say where the database is"; }
for v in softmax alibi lazy; do
  grep -q "$v" "$tmp/out.1" || { out 1; fail "the quickstart table lacks $v"; }
done
db=$root/runs/attnbench.db
[ "$(sqlite3 -readonly "$db" "SELECT count(*) FROM runs r JOIN sweep_runs s ON s.run = r.id
      WHERE s.sweep = 'quickstart' AND r.status = 'finished'")" = 6 ] || fail "the quickstart did not finish its 6 cells"
[ "$(sqlite3 -readonly "$db" "SELECT count(*) FROM runs r JOIN sweep_runs s ON s.run = r.id
      WHERE s.sweep = 'tau_forms' AND r.status = 'finished'")" = 15 ] || fail "the README's sweep did not finish its 15 cells"
[ -f "$root/report/index.html" ] || fail "attnbench report wrote no report/index.html"
[ -f "$root/shards/mine/manifest.json" ] || fail "data prepare wrote no shards/mine/manifest.json"
[ -f "$root/runs/x/checkpoint/MANIFEST.json" ] || fail "train --out runs/x wrote no checkpoint"
[ -f "$root/runs/fw125m/checkpoint/MANIFEST.json" ] || fail "the FineWeb train command wrote no checkpoint"

# Rerunning the quickstart is a no-op: nothing trained or scored again, the same table.
before=$(sqlite3 -readonly "$db" "SELECT count(*) FROM metrics")
quickstart_table "$db" > "$tmp/table1"
start=$(date +%s)
(cd "$root" && "$src/scripts/quickstart") > "$tmp/rerun" 2>&1 || { cat "$tmp/rerun"; fail "the rerun failed"; }
echo "quickstart rerun: $(( $(date +%s) - start )) s"
[ "$(sqlite3 -readonly "$db" "SELECT count(*) FROM metrics")" = "$before" ] || fail "the rerun wrote new metrics"
quickstart_table "$db" | diff "$tmp/table1" - || fail "the rerun changed the table"
echo "ok: $n README commands"
