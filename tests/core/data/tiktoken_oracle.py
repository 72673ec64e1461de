#!/usr/bin/env python3
"""Golden GPT-2 token ids from tiktoken, the reference our tokenizer must match bit for bit.

usage: tiktoken_oracle.py DATA_ROOT OUT_DIR [--stress FILE] [--wiki-docs N]

Builds tiktoken's own "gpt2" Encoding (tiktoken_ext.openai_public.gpt2: its pattern, special
tokens and vocabulary size) from the local DATA_ROOT/gpt2_tokenizer files instead of the URLs it
would download; the published sha256 of both files is still checked. For each corpus it writes
OUT_DIR/<corpus>.golden, a sequence of records (little-endian):
    uint32 text_bytes, text (UTF-8), uint32 n_ids, n_ids x uint32
with ids = Encoding.encode_ordinary(text), and OUT_DIR/corpora.txt listing "<corpus> <records>".
The texts are the strings a model of ours ever tokenizes: pretraining documents, and every prompt
and choice field of the evaluation tasks (choices also with the leading space lm-eval puts before a
continuation).
"""
import argparse
import json
import os
import struct
import sys
from pathlib import Path

os.environ["TIKTOKEN_CACHE_DIR"] = ""  # read the local files, write no cache

import tiktoken
import tiktoken_ext.openai_public as openai_public


def gpt2_encoding(tokenizer_dir: Path) -> tiktoken.Encoding:
    remote = openai_public.data_gym_to_mergeable_bpe_ranks

    def local(vocab_bpe_file, encoder_json_file, **kwargs):
        return remote(vocab_bpe_file=str(tokenizer_dir / "vocab.bpe"),
                      encoder_json_file=str(tokenizer_dir / "encoder.json"), **kwargs)

    openai_public.data_gym_to_mergeable_bpe_ranks = local
    try:
        return tiktoken.Encoding(**openai_public.gpt2())
    finally:
        openai_public.data_gym_to_mergeable_bpe_ranks = remote


# Files are read as bytes and decoded: text mode would turn "\r\n" and "\r" into "\n".
def jsonl(path: Path):
    for line in path.read_bytes().split(b"\n"):
        if line.strip():
            yield json.loads(line)


def with_continuations(choices):
    """A choice as a string of its own and as lm-eval's continuation (" " + choice)."""
    for c in choices:
        yield c
        yield " " + c


def corpora(root: Path, stress: Path, wiki_docs: int):
    yield "tinyshakespeare", [(root / "tinyshakespeare/input.txt").read_bytes().decode("utf-8")]

    wiki = []
    for name in sorted((root / "pretrain_wikipedia_en").glob("wiki_pages_*.jsonl")):
        for doc in jsonl(name):
            if len(wiki) < wiki_docs:
                wiki.append(doc["text"])
    yield "wikipedia", wiki

    for task in ("arc_easy", "arc_challenge"):
        f = "ARC-Easy-Test.jsonl" if task == "arc_easy" else "ARC-Challenge-Test.jsonl"
        texts = []
        for item in jsonl(root / task / f):
            texts.append(item["question"]["stem"])
            texts.extend(with_continuations(c["text"] for c in item["question"]["choices"]))
        yield task, texts

    lines = (root / "hellaswag/hellaswag_val_full.txt").read_bytes().decode("utf-8").split("\n")
    lines = [l for l in lines if l]
    hellaswag = []
    for i in range(0, len(lines), 6):
        hellaswag.append(lines[i])
        hellaswag.extend(with_continuations(lines[i + 2:i + 6]))
    yield "hellaswag", hellaswag

    yield "piqa", [t for it in jsonl(root / "piqa/valid.jsonl")
                   for t in [it["goal"], *with_continuations([it["sol1"], it["sol2"]])]]
    yield "winogrande", [t for it in jsonl(root / "winogrande/dev.jsonl")
                         for t in [it["sentence"], *with_continuations([it["option1"], it["option2"]])]]
    yield "boolq", [t for it in jsonl(root / "boolq/val.jsonl") for t in (it["passage"], it["question"])]
    yield "openbookqa", [t for it in jsonl(root / "openbookqa/test.jsonl")
                         for t in [it["question"]["stem"],
                                   *with_continuations(c["text"] for c in it["question"]["choices"])]]
    yield "siqa", [t for it in jsonl(root / "siqa/dev.jsonl")
                   for t in [it["context"], it["question"],
                             *with_continuations([it["answerA"], it["answerB"], it["answerC"]])]]
    sciq = json.loads((root / "sciq/test.json").read_bytes().decode("utf-8"))
    yield "sciq", [t for it in sciq
                   for t in [it["support"], it["question"],
                             *with_continuations([it["distractor1"], it["distractor2"],
                                                  it["distractor3"], it["correct_answer"]])]]
    yield "lambada_openai", [it["text"] for it in jsonl(root / "lambada_openai/lambada_test.jsonl")]
    yield "copa", [t for it in jsonl(root / "copa/val.jsonl")
                   for t in [it["premise"], *with_continuations([it["choice1"], it["choice2"]])]]
    raw = (root / "wikitext2/wiki.test.raw").read_bytes().decode("utf-8")
    yield "wikitext2", [raw] + raw.split("\n")

    text = stress.read_bytes().decode("utf-8")
    yield "stress", [text] + text.split("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data_root", type=Path)
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--stress", type=Path, default=Path(__file__).with_name("stress.txt"))
    ap.add_argument("--wiki-docs", type=int, default=2000)
    args = ap.parse_args()

    enc = gpt2_encoding(args.data_root / "gpt2_tokenizer")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    listing = []
    for name, texts in corpora(args.data_root, args.stress, args.wiki_docs):
        encoded = [t.encode("utf-8") for t in texts]  # raises on lone surrogates: none expected
        ids = enc.encode_ordinary_batch(texts, num_threads=2)
        tmp = args.out_dir / (name + ".golden.tmp")
        with open(tmp, "wb") as f:
            for b, t in zip(encoded, ids):
                f.write(struct.pack("<I", len(b)))
                f.write(b)
                f.write(struct.pack("<I", len(t)))
                f.write(struct.pack("<%dI" % len(t), *t))
        tmp.replace(args.out_dir / (name + ".golden"))
        listing.append(f"{name} {len(texts)}")
        print(f"{name}: {len(texts)} texts, {sum(map(len, ids))} tokens", file=sys.stderr)
    (args.out_dir / "corpora.txt").write_text("\n".join(listing) + "\n")


if __name__ == "__main__":
    main()
