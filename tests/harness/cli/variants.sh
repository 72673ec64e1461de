#!/usr/bin/env bash
# `attnbench variants`: every registered variant (as many as RegisterVariant objects in variants/,
# the paper's among them) in the listing and in JSON, with the backends that serve it and each
# parameter's type, default, allowed values, bounds, doc and applies_if; a bad --format is a usage
# error (exit 2).
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The listing: one entry per variant (name and description), every line within 100 columns; the
# details (backends, parameters) with --details or for the variants named.
"$ATTNBENCH" variants > "$tmp/short"
"$ATTNBENCH" variants --details > "$tmp/table"
for name in alibi elastic lazy rope_bias sigmoid softmax; do
  grep -qE "^$name +[A-Za-z]" "$tmp/short" || fail "variant $name missing from the short listing"
  grep -q "^$name\$" "$tmp/table" || fail "variant $name missing from the detailed listing"
done
grep -q "tau_form" "$tmp/short" && fail "the short listing shows parameters"
tr '\n' ' ' < "$tmp/table" | tr -s ' ' | grep -qF 'tau_form string = "per_head_over_len"; one of per_head_over_len | per_token | per_head_const; when normalizer is elastic' ||
  fail "tau_form's allowed values and condition missing from the listing"
python3 -c 'import sys; sys.exit(any(len(l.rstrip("\n")) > 100 for f in sys.argv[1:] for l in open(f, encoding="utf-8")))' \
  "$tmp/short" "$tmp/table" || fail "a line over 100 columns"
"$ATTNBENCH" variants lazy > "$tmp/lazy"
grep -q "^lazy\$" "$tmp/lazy" && grep -q "    tau_form " "$tmp/lazy" || fail "variants lazy lacks its details"
grep -q "^softmax" "$tmp/lazy" && fail "variants lazy lists softmax"
rc=0
"$ATTNBENCH" variants lazzy > /dev/null 2> "$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -qF "did you mean 'lazy'" "$tmp/err" || fail "an unknown name: exit $rc, $(cat "$tmp/err")"

"$ATTNBENCH" variants --format json > "$tmp/json"
python3 - "$tmp/json" "$ATTNBENCH_SOURCE_DIR/variants" "$tmp/table" <<'PY'
import json, pathlib, re, sys
variants = {v["name"]: v for v in json.load(open(sys.argv[1]))}
registrations = sum(len(re.findall(r"\bconst\s+RegisterVariant\s+\w+\s*[({]", f.read_text()))
                    for f in pathlib.Path(sys.argv[2]).glob("*.cpp"))
assert len(variants) == registrations, (sorted(variants), registrations)
assert {"alibi", "elastic", "lazy", "rope_bias", "sigmoid", "softmax"} <= set(variants), sorted(variants)
for v in variants.values():
    assert v["description"], v["name"]
    assert isinstance(v["kernels"], str), v["name"]
    assert v["continues_pretrained"], v["name"]
    for p in v["parameters"]:
        assert set(p) == {"name", "type", "default", "allowed", "min", "max", "doc", "applies_if"}, p
# The listing's backends line of each variant (the line after its description) says what the
# JSON's kernels says: "eager only" when no fused kernel serves it, else "eager + <kernels>".
# The backends text runs from "  backends:", after the description, to the first parameter line
# (both wrapped at 100 columns).
listing = open(sys.argv[3]).read().split("\n")
for name, v in variants.items():
    at = listing.index(name) + 1
    while not listing[at].startswith("  backends: "):  # after the (wrapped) description
        at += 1
    text = [listing[at][len("  backends: "):]]
    first_param = "    " + v["parameters"][0]["name"] + " " if v["parameters"] else None
    while at + 1 < len(listing) and listing[at + 1].startswith("    ") and not (
            first_param and listing[at + 1].startswith(first_param)) and not listing[
            at + 1].startswith("  continues a pretrained model:"):
        at += 1
        text.append(listing[at].strip())
    want = "eager + " + v["kernels"] if v["kernels"] else "eager only"
    assert " ".join(text) == want, (name, text, want)
lazy = {p["name"]: p for p in variants["lazy"]["parameters"]}
assert lazy["position"]["default"] == "rope+distance_bias"
assert lazy["position"]["allowed"] == ["none", "rope", "alibi", "distance_bias", "rope+distance_bias"]
assert lazy["normalizer"]["default"] == "elastic"
assert lazy["tau_form"]["default"] == "per_head_over_len"
assert lazy["tau_form"]["applies_if"] == {"normalizer": ["elastic"]}
assert lazy["tau_init"]["type"] == "float" and lazy["tau_init"]["default"] == -1.0
assert lazy["renormalize"]["type"] == "bool" and lazy["renormalize"]["default"] is False
assert lazy["bias_window"]["type"] == "int" and lazy["bias_window"]["default"] == 1024
assert lazy["bias_window"]["min"] == 1 and lazy["bias_window"]["max"] is None
assert lazy["tau_scale"]["applies_if"] == {"normalizer": ["elastic"], "tau_form": ["per_token"]}
assert lazy["rope_theta"]["default"] == 10000.0
# Whether each can continue a pretrained model (docs/pretrained.md): what its registration says.
assert variants["softmax"]["continues_pretrained"] == "yes, at its defaults"
assert variants["lazy"]["continues_pretrained"].startswith(
    "not at its defaults: attention.tau_init = -1"), variants["lazy"]["continues_pretrained"]
assert variants["softpick"]["continues_pretrained"].startswith("no:")
assert any(line.startswith("  continues a pretrained model: not at its defaults: attention.tau_init")
           for line in listing[listing.index("lazy"):]), "lazy's listing lacks its pretrained start"
softmax = {p["name"]: p for p in variants["softmax"]["parameters"]}
assert softmax["position"]["default"] == "rope" and softmax["normalizer"]["default"] == "softmax"
alibi = {p["name"]: p for p in variants["alibi"]["parameters"]}
assert alibi["position"]["default"] == "alibi"
PY

rc=0
"$ATTNBENCH" variants --format xml > /dev/null 2> "$tmp/err" || rc=$?
[ "$rc" = 2 ] || fail "exit $rc for --format xml (expected 2)"
grep -q "xml" "$tmp/err" || fail "the error does not name the bad format"
echo ok
