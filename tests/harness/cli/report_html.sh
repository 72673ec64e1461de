#!/usr/bin/env bash
# `attnbench report` end to end and in a real browser: a tiny softmax vs lazy sweep (synthetic
# shards, seconds per cell), `attn-stats` of each run into the store, the report, then headless
# Chromium renders the page: every section present, every figure loaded, no console errors, and a
# screenshot kept at $ATTNBENCH_ARTIFACTS/report_html/screenshot.png (default: the test's working
# folder, i.e. <build>/tests/report_html/). Without chromium the browser part is skipped with a
# message (install: ATTNBENCH_SETUP_EXTRA=chromium scripts/setup).
set -euo pipefail
source "$(dirname "$0")/sweep_fixture.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
artifacts="${ATTNBENCH_ARTIFACTS:-$PWD}/report_html"
rm -rf "$artifacts"

make_sweep "$tmp"
tasks=""
[ -n "${ATTNBENCH_DATA:-}" ] && tasks='tasks = ["copa", "arc_easy"]'
cat > "$tmp/diag.toml" <<TOML
[sweep]
name = "tiny_diag"
base = "base.toml"
seeds = [0]
$tasks
limit = 4

[grid]
"attention.variant" = ["softmax", "lazy"]
TOML
"$ATTNBENCH" sweep "$tmp/diag.toml" --db "$tmp/r.db" --runs-dir "$tmp/runs" --quiet > "$tmp/sweep.log" 2>&1 ||
  { cat "$tmp/sweep.log"; fail "the sweep failed"; }
ids=$(sql "$tmp/r.db" "SELECT run FROM sweep_runs WHERE sweep = 'tiny_diag' ORDER BY run")
[ "$(echo "$ids" | wc -l)" = 2 ] || fail "expected 2 runs, got: $ids"
# attn-stats measuring as the sweep did (its 8192 tokens, here the shard's 4000) re-stores the
# same measurement; another token count would be refused (docs/results.md).
for id in $ids; do
  "$ATTNBENCH" attn-stats --checkpoint "$tmp/runs/$id" --db "$tmp/r.db" --tokens 8192 > /dev/null 2> "$tmp/err" ||
    { cat "$tmp/err"; fail "attn-stats $id"; }
done
n=$(sql "$tmp/r.db" "SELECT COUNT(*) FROM attn_stats WHERE layer = -1 AND head = -1 AND stat = 'sink_mass'")
[ "$n" = 2 ] || fail "expected a model-level sink_mass row per run, got $n"

# One run folder is moved away: the page must say its heatmap could not be computed.
first=$(echo "$ids" | head -1)
mv "$tmp/runs/$first" "$tmp/moved"
# A --baseline that names no row: exit 2 before any checkpoint is read or any page written.
rc=0
"$ATTNBENCH" report --sweep tiny_diag --out "$tmp/bad" --db "$tmp/r.db" --runs-dir "$tmp/runs" \
  --baseline attention.variant=alibi 2> "$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -q "matches no row" "$tmp/err" && [ ! -e "$tmp/bad/index.html" ] ||
  { cat "$tmp/err"; fail "bad --baseline: exit $rc"; }
"$ATTNBENCH" report --sweep tiny_diag --out "$artifacts" --db "$tmp/r.db" --runs-dir "$tmp/runs" \
  --baseline attention.variant=lazy > "$tmp/out" 2> "$tmp/err" || { cat "$tmp/err"; fail "report failed"; }
page="$artifacts/index.html"
[ "$(cat "$tmp/out")" = "$page" ] || fail "report should print the page's path, printed: $(cat "$tmp/out")"
grep -q "no checkpoint under $tmp/runs/$first" "$page" || fail "the missing checkpoint is not reported on the page"
second=$(echo "$ids" | tail -1)
[ -s "$artifacts/heatmap_$second.png" ] || fail "no heatmap for $second"
grep -q 'key j' "$artifacts/heatmap_$second.svg" || fail "the heatmap figure has no axes"
# A page of runs named one by one (no sweep): the same sections over those runs only.
"$ATTNBENCH" report --runs "${second:0:12}" --out "$tmp/one" --db "$tmp/r.db" --runs-dir "$tmp/runs" \
  > /dev/null 2> "$tmp/err" || { cat "$tmp/err"; fail "report --runs"; }
grep -q "<h1>attnbench report: run $second</h1>" "$tmp/one/index.html" || fail "report --runs: wrong title"
grep -q "1 named, 1 row in the table" "$tmp/one/index.html" || fail "report --runs: not the one run"
rc=0
"$ATTNBENCH" report --sweep tiny_diag --runs "$second" --out "$tmp/both" --db "$tmp/r.db" 2> "$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -q "one of the two" "$tmp/err" || { cat "$tmp/err"; fail "--sweep with --runs: exit $rc"; }
for f in sink_mass_per_layer.svg sparsity_per_layer.svg nonzero_ratio_per_layer.svg loss.svg tau_per_layer.svg \
  sink_k.svg alpha_k.svg massive_activations_per_layer.svg effective_rank_per_layer.svg; do
  [ -s "$artifacts/$f" ] || fail "missing figure $f"
done
# Side by side: both variants with their sink mass; with tasks scored, the sink-vs-accuracy scatter.
sed -n '/<section id="side-by-side">/,/<\/section>/p' "$page" > "$tmp/side"
for v in softmax lazy; do
  grep -q "<tr><td>$v</td><td>1</td><td class=\"num\">[0-9.]*</td>" "$tmp/side" ||
    { cat "$tmp/side"; fail "no side-by-side row with a sink mass for $v"; }
done
if [ -n "$tasks" ]; then
  grep -q '<text x="[0-9.]*" y="[0-9.]*" text-anchor="[a-z]*">lazy</text>' "$artifacts/sink_vs_accuracy.svg" ||
    fail "the sink-vs-accuracy scatter has no labelled lazy point"
fi
# Sink_k by key position: one table row per variant with T = 64 (the model's context allows it) or
# the shorter window the run had, and Sink_1 a fraction.
sed -n '/<section id="sink-rate">/,/<\/section>/p' "$page" > "$tmp/sinkk"
for v in softmax lazy; do
  grep -q "<tr><td>$v</td><td>1</td><td>[0-9]*</td><td>0.3</td><td class=\"num\">[01]\.[0-9]*</td>" "$tmp/sinkk" ||
    { cat "$tmp/sinkk"; fail "no Sink_k row for $v"; }
done
grep -q "baseline: attention.variant=lazy" "$page" || fail "the paired section does not name the --baseline row"
# Unknown sweep: a usage error naming the sweeps.
rc=0
"$ATTNBENCH" report --sweep tiny_diags --out "$tmp/x" --db "$tmp/r.db" 2> "$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -q "did you mean 'tiny_diag'" "$tmp/err" || { cat "$tmp/err"; fail "unknown sweep: exit $rc"; }

if ! command -v chromium > /dev/null; then
  echo "SKIP (browser part): chromium is not installed; install it with ATTNBENCH_SETUP_EXTRA=chromium scripts/setup" >&2
  exit 77  # Skipped (tests/CMakeLists.txt)
fi
browser=(chromium --headless --no-sandbox --disable-gpu --virtual-time-budget=10000)
# The page has no script; a copy with a probe beside it records which images failed to load.
probe="$artifacts/.probe.html"
sed 's#</body>#<script>window.addEventListener("load", function () { var bad = []; for (var i = 0; i < document.images.length; ++i) { var im = document.images[i]; if (!(im.complete \&\& im.naturalWidth > 0)) bad.push(im.getAttribute("src")); } document.body.setAttribute("data-broken", bad.join(" ")); document.body.setAttribute("data-images", document.images.length); document.body.setAttribute("data-loaded", "yes"); document.body.setAttribute("data-width", document.documentElement.scrollWidth); document.body.setAttribute("data-viewport", document.documentElement.clientWidth); var r = document.getElementById("results"), t = r ? r.querySelector("table") : null; document.body.setAttribute("data-table", t ? t.scrollWidth - t.clientWidth : -1); });</script></body>#' \
  "$page" > "$probe"
timeout 120 "${browser[@]}" --window-size=1400,1000 --dump-dom "file://$probe" > "$tmp/dom.html" 2> "$tmp/probe.log" ||
  { tail -20 "$tmp/probe.log"; fail "chromium could not load the page"; }
rm -f "$probe"
body=$(grep -o '<body[^>]*>' "$tmp/dom.html" || true)
echo "$body" | grep -q 'data-loaded="yes"' || { head -c 2000 "$tmp/dom.html"; fail "the page did not finish loading"; }
echo "$body" | grep -q 'data-broken=""' || fail "images failed to load: $body"
images=$(echo "$body" | sed -n 's/.*data-images="\([0-9]*\)".*/\1/p')
[ "${images:-0}" -ge 5 ] || fail "expected at least 5 figures, the browser saw ${images:-0}"
# At 1400 px nothing overflows sideways: wide tables scroll inside themselves, not the page.
width=$(echo "$body" | sed -n 's/.*data-width="\([0-9]*\)".*/\1/p')
viewport=$(echo "$body" | sed -n 's/.*data-viewport="\([0-9]*\)".*/\1/p')
[ -n "$width" ] && [ "$width" -le "${viewport:-0}" ] || fail "the page is $width px wide in a $viewport px window"
echo "$body" | grep -q 'data-table="0"' || fail "the results table does not fit the page: $body"
for id in overview results side-by-side paired diagnostics sink-rate loss-curves task-bars attention hidden-states learned \
  heatmaps; do
  grep -q "<section id=\"$id\">" "$tmp/dom.html" || fail "section #$id missing from the rendered DOM"
done
# The page itself, as a user's browser shows it: console messages are logged; none may be errors.
timeout 120 "${browser[@]}" --enable-logging=stderr --v=0 --window-size=1280,4000 \
  --screenshot="$artifacts/screenshot.png" "file://$page" > /dev/null 2> "$tmp/shot.log" ||
  { tail -20 "$tmp/shot.log"; fail "chromium screenshot failed"; }
if grep -E 'CONSOLE.*(Error|Uncaught)|ERR_FILE_NOT_FOUND' "$tmp/shot.log"; then fail "console errors while loading the page"; fi
[ -s "$artifacts/screenshot.png" ] || fail "no screenshot"
echo "report: $page; screenshot: $artifacts/screenshot.png"
