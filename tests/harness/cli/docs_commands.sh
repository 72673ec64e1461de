#!/usr/bin/env bash
# Every command written in docs/ names things that exist. The commands are read from the code blocks
# of docs/*.md (each line starting with `attnbench` or `scripts/`, after a pipe too), then:
#  - `attnbench SUB [SUB2]` must be a command, and every --option of the line one of its options
#    (its --help); [optional parts] and `a | b` alternatives are checked as written;
#  - a path of the repository (sweeps/*.toml, scripts/*) must exist, a script be executable;
#  - a sweep file of the repository is run with --dry-run (it parses and expands), so is every
#    sweep file shipped in sweeps/.
# readme_commands.sh runs these commands for real, after the README's, except those that need a
# GPU, a cluster, the network or hours: here every one is checked, in seconds.
set -euo pipefail
source "$(dirname "$0")/sweep_fixture.bash"
src=${ATTNBENCH_SOURCE_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 - "$src" "$ATTNBENCH" "$tmp" <<'EOF'
import glob, os, re, shlex, subprocess, sys

src, binary, tmp = sys.argv[1:4]
failures, checked, helps = [], 0, {}
GROUPS = {"results", "data"}  # commands whose second word is a subcommand

def commands(path):
    fence = None
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        if line.startswith("```"):
            fence = None if fence is not None else line[3:].strip()
            continue
        if fence not in ("", "sh"):
            continue
        text = re.sub(r"\s+#\s.*$", "", line.strip())
        for part in re.split(r"\s\|\s(?=attnbench\b|scripts/)", text):
            if part.startswith(("attnbench ", "scripts/")) and not re.match(r"attnbench \S+:", part):
                yield n, part

def help_of(words):
    key = " ".join(words)
    if key not in helps:
        r = subprocess.run([binary, *words, "--help"], capture_output=True, text=True)
        helps[key] = r.stdout if r.returncode == 0 else None
    return helps[key]

def subcommands(words):  # the names listed under "Subcommands:" in the help of `words`
    text = help_of(words) or ""
    listed = text.split("Subcommands:", 1)[1] if "Subcommands:" in text else ""
    return set(re.findall(r"^  (\S+)", listed, re.M))

def check_attnbench(words, where):
    sub = words[1:3] if len(words) > 2 and words[1] in GROUPS else words[1:2]
    for i in range(len(sub)):
        if sub[i] not in subcommands(sub[:i]):
            return failures.append(f"{where}: 'attnbench {' '.join(sub[:i + 1])}' is not a command")
    text = help_of(sub)
    for opt in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", " ".join(words)):
        if not re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", text):
            failures.append(f"{where}: attnbench {' '.join(sub)} has no option {opt}")

def check_paths(words, where):
    for w in words:
        if re.fullmatch(r"(sweeps|scripts)/[\w./-]+", w) and "*" not in w:
            p = os.path.join(src, w)
            if not os.path.exists(p):
                failures.append(f"{where}: {w} does not exist")
            elif w.startswith("scripts/") and not os.access(p, os.X_OK):
                failures.append(f"{where}: {w} is not executable")

def dry_run(sweep, where):
    r = subprocess.run([binary, "sweep", os.path.join(src, sweep), "--dry-run", "--db",
                        os.path.join(tmp, "dry.db"), "--runs-dir", os.path.join(tmp, "runs")],
                       capture_output=True, text=True, cwd=tmp)
    if r.returncode != 0:
        failures.append(f"{where}: attnbench sweep {sweep} --dry-run exits {r.returncode}: "
                        f"{r.stderr.strip()[:300]}")

sweeps = set()
for path in sorted(glob.glob(os.path.join(src, "docs", "*.md"))):
    for n, cmd in commands(path):
        where = f"docs/{os.path.basename(path)}:{n}"
        words = cmd.replace("[", " ").replace("]", " ").replace("|", " ").split()
        checked += 1
        check_paths(words, where)
        if words[0] == "attnbench":
            check_attnbench(words, where)
            if len(words) > 2 and words[1] == "sweep" and words[2].startswith("sweeps/"):
                sweeps.add(words[2])
for f in sorted(glob.glob(os.path.join(src, "sweeps", "*.toml"))):
    if "[sweep]" in open(f, encoding="utf-8").read():
        sweeps.add(os.path.relpath(f, src))
for s in sorted(sweeps):
    if os.path.exists(os.path.join(src, s)):
        dry_run(s, s)
print(f"{checked} commands of docs/ checked, {len(sweeps)} sweep files dry-run")
if failures:
    sys.exit("FAIL:\n  " + "\n  ".join(failures))
EOF
echo "ok"
