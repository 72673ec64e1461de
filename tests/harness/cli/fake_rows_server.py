#!/usr/bin/env python3
"""A loopback stand-in for the Hugging Face datasets-server rows API, for testing `data fetch`.

Serves GET /rows?dataset=D&config=C&split=S&offset=O&length=L with pages built from the real files
in the data folder (--data: the tests' $ATTNBENCH_DATA), in the API's shape:
  {"features": [...], "rows": [{"row_idx": i, "row": {...}, "truncated_cells": []}],
   "num_rows_total": N, "num_rows_per_page": 100, "partial": false}

Faults, by request number (1-based, counted over the whole server life), from --faults:
  drop@K   send headers and half of the body of request K, then close the connection
  500@K    answer request K with HTTP 500
  die@K    exit the server after answering K-1 requests (request K gets no answer)
Every request is appended to --log as "dataset config split offset length".
"""
import argparse
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse


def load_rows(data):
    def jsonl(path):
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]

    return {
        ("allenai/ai2_arc", "ARC-Easy", "test"):
            jsonl(os.path.join(data, "arc_easy", "hf_format", "ARC-Easy-test.jsonl")),
        ("aps/super_glue", "copa", "validation"):
            jsonl(os.path.join(data, "copa", "val.jsonl")),
        ("HuggingFaceFW/fineweb-edu", "sample-10BT", "train"):
            [{"text": r["text"], "id": r["source_path"]}
             for r in jsonl(os.path.join(data, "pretrain_wikipedia_en", "wiki_pages_004.jsonl"))],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--faults", default="")
    ap.add_argument("--truncate-row", type=int, default=-1,
                    help="mark this row_idx of every dataset as having a truncated cell")
    args = ap.parse_args()
    datasets = load_rows(args.data)
    faults = {}
    for f in filter(None, args.faults.split(",")):
        kind, n = f.split("@")
        faults[int(n)] = kind
    state = {"n": 0}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def answer(self, status, obj):
            body = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            return body

        def send(self, body, fault):
            # fault "drop": half of the body, then the connection is cut
            if fault == "drop":
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(2)
                return
            self.wfile.write(body)

        def do_GET(self):
            state["n"] += 1
            n = state["n"]
            fault = faults.get(n)
            if fault == "die":
                os._exit(0)
            url = urlparse(self.path)
            if url.path.startswith("/files/"):  # the GPT-2 tokenizer files, as a plain file host
                name = os.path.basename(url.path)
                with open(args.log, "a") as log:
                    log.write(f"file {name}\n")
                body = open(os.path.join(args.data, "gpt2_tokenizer", name), "rb").read()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.send(body, fault)
                return
            q = {k: v[0] for k, v in parse_qs(url.query).items()}
            key = (q.get("dataset"), q.get("config"), q.get("split"))
            offset, length = int(q.get("offset", 0)), int(q.get("length", 100))
            with open(args.log, "a") as log:
                log.write(f"{key[0]} {key[1]} {key[2]} {offset} {length}\n")
            if fault == "500":
                self.wfile.write(self.answer(500, {"error": "injected server error"}))
                return
            if url.path != "/rows" or key not in datasets:
                self.wfile.write(self.answer(404, {"error": "dataset not found"}))
                return
            rows = datasets[key]
            page = [{"row_idx": i, "row": rows[i],
                     "truncated_cells": ["text"] if i == args.truncate_row else []}
                    for i in range(offset, min(offset + min(length, 100), len(rows)))]
            body = self.answer(200, {"features": [], "rows": page, "num_rows_total": len(rows),
                                     "num_rows_per_page": 100, "partial": False})
            self.send(body, fault)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
