#!/usr/bin/env bash
# The README and docs/ show only commands that work: every one is run here (docs/ at the end, after
# the README's). The README's commands are read from README.md itself (each line of its ```sh
# blocks, and every `attnbench ...`, `scripts/...` and `sqlite3 ...` span of its text and tables), so
# a command added to the README is run here too, in the README's order, from a folder laid out like
# the repository root (sweeps/ copied, runs/ filled by the quickstart).
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
# runnable CMD: a documented command as this folder runs it (README's and docs/' alike): attnbench
# (or build/attnbench, also after a pipe or `||`) is the binary under test, scripts/ the
# repository's, NAME the quickstart's sweep, and a sweep that trains gets the tiny budget.
runnable() {
  local run
  run=$(sed -E 's#(^|\| *)(build/)?attnbench( |$)#\1"$ATTNBENCH"\3#g' <<< "$1")
  case "$run" in scripts/*) run="\"$src\"/$run" ;; esac
  run=${run//--sweep NAME/--sweep quickstart}
  case "$1" in
    *--dry-run*|*--slurm*) ;;
    *"attnbench sweep "*) run="$run --limit 2 $tiny_train" ;;
  esac
  printf '%s\n' "$run"
}
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
  case "$run" in "attnbench train "*) run="$run $tiny_train" ;; esac
  run=$(runnable "$run")
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

# The commands of docs/*.md, run in the same folder after the README's: in every ```sh (or plain)
# block, the lines that run attnbench or a script of the repository, a `\`-continued or open-quoted
# line joined with the next. Lines of other tools (pip, tensorboard, sbatch, torchrun, ctest) and
# the output the docs print are not ours to run. The placeholders stand for what is here:
# runs/<id> a finished quickstart run, NAME its sweep, F a text file, models/gpt2 a Hugging Face
# folder (tests/fixtures/hf/llama_gqa: the GPT-2 fixture reads 64 positions, too few for PIQA's
# longest answer), models/tinyllama one that can be continued (llama_sharded: no RoPE scaling),
# runs/attnbench.cell-*.db a cell database of a Slurm array. An `eval` scores 2 items a task
# (--limit 2 replaces its own), a `train` or `sweep` gets the budget above.
# Not run, each with its reason printed: synopses (docs_commands.sh checks their options), commands
# that need a GPU, the CUDA build or the network, CI's own commands, and the sweeps that take
# minutes (lazy_ablation: 57 cells, dry-run by docs_commands.sh; extrapolation, of which
# sweep_extrapolation.sh runs a smaller one) with the tables read from them.
python3 - "$src" "$tmp/doc_commands" <<'EOF'
import glob, os, re, shlex, sys

src, out = sys.argv[1:3]
NOT_RUN = [  # (pattern, why): the first that matches a command says why it is not run
    (r"\[--|\.\.\.(\s|$)", "a synopsis"),
    (r"^(build-cuda/|scripts/(build-cuda|fetch-torch|gpu-))|--gpus-per-cell|--nproc-per-node",
     "needs a GPU or the CUDA build"),
    (r"data fetch", "needs the network"),
    (r"^(\w+=\S+ )*(scripts/(test|sanitize|fuzz)\b|build-fuzz/)", "CI's own command (.ci/run)"),
    (r"sweeps/lazy_ablation\.toml(?!.*(--dry-run|--slurm))|--sweep lazy_ablation",
     "trains 57 cells (docs_commands.sh dry-runs it)"),
    (r"sweeps/extrapolation\.toml|--sweep extrapolation",
     "scores 3 cells at 3 lengths, a minute even on this budget: sweep_extrapolation.sh runs a "
     "smaller one"),
]
OURS = re.compile(r"(^|\|\|\s*)(\w+=\S+ )*((build/)?attnbench |scripts/)")  # also `test || attnbench`

def strip_comments(text):  # a `#` after a space, outside quotes, to the end of its line
    out, quote, i = [], None, 0
    while i < len(text):
        c = text[i]
        if quote is None and c == "#" and (i == 0 or text[i - 1].isspace()):
            i = text.find("\n", i) if "\n" in text[i:] else len(text)
            continue
        if quote is None and c in "'\"":
            quote = c
        elif c == quote:
            quote = None
        out.append(c)
        i += 1
    return "".join(out)

def logical_lines(block):  # (first line number, command)
    text, start = "", 0
    for n, line in block:
        if not text:
            start = n
        text += line
        cmd = strip_comments(text).rstrip()
        if cmd.endswith(("\\", "||", "&&", "|")):  # the command goes on
            continue
        try:
            shlex.split(cmd)
        except ValueError:  # an open quote: the command goes on
            continue
        cmd = re.sub(r"(\|\||&&|\|)[ \t]*\n\s*", r"\1 ", re.sub(r"\\\n\s*", " ", cmd))
        yield start, cmd.strip()
        text = ""

with open(out, "w") as f:
    for path in sorted(glob.glob(os.path.join(src, "docs", "*.md"))):
        fence, block = None, []
        for n, line in enumerate(open(path, encoding="utf-8"), 1):
            if not line.startswith("```"):
                block.append((n, line))
                continue
            if fence is None:
                fence, block = line[3:].strip(), []
                continue
            if fence in ("", "sh"):
                for at, cmd in logical_lines(block):
                    if OURS.search(cmd) and not re.match(r"attnbench \S+:", cmd):
                        why = next((w for p, w in NOT_RUN if re.search(p, cmd)), "-")
                        f.write(f"docs/{os.path.basename(path)}:{at}\t{why}\t{cmd.replace(chr(10), chr(1))}\n")
            fence = None
EOF
id=$(sqlite3 -readonly "$db" "SELECT id FROM runs r JOIN sweep_runs s ON s.run = r.id
      WHERE s.sweep = 'quickstart' AND r.status = 'finished' LIMIT 1")
mkdir -p "$root/models" && ln -s "$src/tests/fixtures/hf/llama_gqa" "$root/models/gpt2"
# a Llama without RoPE scaling, which can be continued (docs/pretrained.md)
ln -s "$src/tests/fixtures/hf/llama_sharded" "$root/models/tinyllama"
# `data prepare` with its default 1M validation tokens needs more of the Wikipedia sample: 700
# documents, about 1.9M tokens.
(ATTNBENCH_DATA=$full_data make_small_data "$tmp/docs_data" 700)
head -c 4000 "$src/docs/evaluation.md" > "$root/F"
cp "$root/F" "$root/held_out.txt"
cp "$db" "$root/runs/attnbench.cell-0.db"
mkdir -p "$tmp/docs_out"
ran=0 left=0
while IFS=$'\t' read -r where why cmd; do
  cmd=${cmd//$'\001'/$'\n'}
  if [ "$why" != - ]; then
    echo "$where: not run ($why): ${cmd%%$'\n'*}"
    left=$((left + 1))
    continue
  fi
  run=$(runnable "$cmd")
  run=${run//<id>/$id}
  case "$cmd" in
    "attnbench eval "*) run="$(sed -E 's/ --limit [0-9]+//' <<< "$run") --limit 2" ;;
    # the tiny budget, less the preset (a model continued from a folder keeps its shape), at the
    # 128 positions the folder reads and the first items of PIQA need
    "attnbench train "*)
      run="$run ${tiny_train#--set model.preset=tiny } --set model.context_length=128" ;;
  esac
  rc=0 log=$tmp/docs_out/${where//[\/:.]/_} start=$SECONDS  # docs/tokenizer.md:66 -> docs_tokenizer_md_66
  (cd "$root" && ATTNBENCH_DATA=$tmp/docs_data bash -c "$run") < /dev/null > "$log" 2>&1 || rc=$?
  echo "$where ($((SECONDS - start)) s): $cmd"
  [ "$rc" = 0 ] || { tail -30 "$log"; fail "$where: exited $rc: $cmd (ran: $run)"; }
  ran=$((ran + 1))
done < "$tmp/doc_commands"

# What some of them must have printed or written: the outputs the docs promise. doc_out CMD prints
# the output of the docs' command CMD (as written there).
doc_out() {
  local where
  where=$(awk -F'\t' -v c="$1" '$3 == c { print $1; exit }' "$tmp/doc_commands")
  [ -n "$where" ] || fail "docs/ no longer show the command '$1': update this test"
  cat "$tmp/docs_out/${where//[\/:.]/_}"
}
[ "$(doc_out 'attnbench tokenize "Hello world"')" = "15496 995" ] || fail "tokenize printed something else"
doc_out 'attnbench tokenize --file F | attnbench detokenize' | cmp -s "$root/F" - ||
  fail "tokenize | detokenize did not reproduce F"
[ -f "$root/runs/report/sink_cures_cpu/index.html" ] || fail "the sink-cures recipe wrote no report"
[ -f "$root/ablation.sbatch" ] || fail "sweep --slurm ablation.sbatch wrote no script"
echo "ok: $n README commands; docs/: $ran commands run, $left not run (reasons above)"
