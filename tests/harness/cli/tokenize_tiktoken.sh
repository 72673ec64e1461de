#!/usr/bin/env bash
# Bit-identity of our GPT-2 tokenizer with tiktoken's "gpt2" encoding (docs/tokenizer.md).
# tiktoken is a test tool, not a dependency: it is pip-installed into a throwaway venv in the build
# folder (reused on later runs), tests/core/data/tiktoken_oracle.py writes golden ids for every corpus
# into the build folder, and test_core_data's hidden case "[.tiktoken]" compares ours with them.
set -euo pipefail
: "${ATTNBENCH:?path of the attnbench binary}" "${ATTNBENCH_SOURCE_DIR:?repo root}"
if [[ -z "${ATTNBENCH_DATA:-}" ]]; then
  echo "SKIPPED: set ATTNBENCH_DATA to the shared data folder to compare with tiktoken"
  exit 77  # Skipped (tests/CMakeLists.txt)
fi
build=$(cd "$(dirname "$ATTNBENCH")" && pwd)
test_data="$build/tests/test_core_data"
[[ -x "$test_data" ]] || { echo "FAIL: $test_data not built (ninja test_core_data)"; exit 1; }
venv="$build/tiktoken-venv"
golden="$build/tiktoken_golden"
oracle="$ATTNBENCH_SOURCE_DIR/tests/core/data/tiktoken_oracle.py"
stress="$ATTNBENCH_SOURCE_DIR/tests/core/data/stress.txt"

if ! "$venv/bin/python" -c 'import tiktoken' 2>/dev/null; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  if ! "$venv/bin/pip" install --disable-pip-version-check -q --timeout 60 tiktoken; then
    echo "FAIL: could not pip-install tiktoken (the reference tokenizer) into $venv:" \
         "is PyPI reachable? (pip config / proxy / PIP_INDEX_URL)"
    exit 1
  fi
fi
"$venv/bin/python" -c 'import tiktoken; print("tiktoken", tiktoken.__version__)'

# Goldens are regenerated when the oracle, the stress file or the data root changed.
if [[ ! -f "$golden/corpora.txt" || "$oracle" -nt "$golden/corpora.txt" ||
      "$stress" -nt "$golden/corpora.txt" ||
      "$(cat "$golden/data_root" 2>/dev/null)" != "$ATTNBENCH_DATA" ]]; then
  rm -rf "$golden" "$golden.tmp"
  "$venv/bin/python" "$oracle" "$ATTNBENCH_DATA" "$golden.tmp" --stress "$stress"
  echo "$ATTNBENCH_DATA" > "$golden.tmp/data_root"
  mv "$golden.tmp" "$golden"
fi

ATTNBENCH_TIKTOKEN_GOLDEN="$golden" "$test_data" "[.tiktoken]"
