#!/usr/bin/python3
"""Training throughput: attnbench's C++ trainer vs the same model in Python PyTorch, one run.

Target (docs/ARCHITECTURE.md, "Performance targets"): CPU training throughput at least that of the
same model in Python PyTorch. This script runs bench/train_step.cpp (bench_train_step: one
optimizer step of the trainer's model and AdamW at the tiny and small presets' own micro-batches,
8 x 256 and 16 x 1,024 tokens, and 125m at 8 x 256; GPT-2 vocabulary padded to 50304) and a
nanoGPT-style Python loop of the same shapes and operations:
  token embedding -> N x [RMSNorm -> q, k, v (no bias) -> RoPE -> causal softmax attention
  (materialised scores, as the eager backend) -> o -> residual; RMSNorm -> SwiGLU -> residual]
  -> RMSNorm -> untied LM head -> cross-entropy; backward; clip 1.0; AdamW (0.9, 0.95), decay on
  2-D weights only.
The Python loop runs twice: with glibc malloc, and with LD_PRELOAD of libtcmalloc_minimal.so.4
(the C++ binaries link tcmalloc, docs/toolchain.md). The report gives the ratio of both C++
backends to the Python loop with tcmalloc: eager (materialised attention, like the Python loop)
and auto (the fused CPU kernel, what `attnbench train` runs). Presets tiny, small, 125m.

Needs Debian's python3-torch (the same LibTorch 1.13; measurement only, not a project
dependency): apt-get install -y python3-torch, and run with /usr/bin/python3.

  /usr/bin/python3 scripts/bench-train-python.py --bench build/bench/bench_train_step
Timings on shared machines vary +-15-20% run to run: compare the ratios of one run.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

PRESETS = {  # n_layer, d_model, n_head (d_ffn = round_up(8 d / 3, 256), as core/config), batch, T
    "tiny": (2, 128, 4, 8, 256),     # the presets' own micro-batches (sweeps/presets) ...
    "small": (6, 384, 6, 16, 1024),
    "125m": (12, 768, 12, 8, 256),   # ... but 125m's 8 x 4,096 (minutes a step on a CPU)
}
TCMALLOC = "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4"


def python_tokens_per_s(preset, steps, vocab=50304):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    threads = int(os.environ.get("OMP_NUM_THREADS", "0")) or os.cpu_count()
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    n_layer, d, H, batch, T = PRESETS[preset]
    ffn = (8 * d // 3 + 255) // 256 * 256
    D = d // H

    class RMSNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(d))

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight

    inv = 10000.0 ** (-torch.arange(0, D // 2, dtype=torch.float64) * 2 / D)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]
    cos, sin = ang.cos().float(), ang.sin().float()

    def rope(x):  # half-split pairing, as variants/position.h
        a, b = x[..., : D // 2], x[..., D // 2:]
        return torch.cat([a * cos - b * sin, a * sin + b * cos], -1)

    mask = torch.ones(T, T, dtype=torch.bool).tril()

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.n1, self.n2 = RMSNorm(), RMSNorm()
            self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
            self.gate, self.up = nn.Linear(d, ffn, bias=False), nn.Linear(d, ffn, bias=False)
            self.down = nn.Linear(ffn, d, bias=False)

        def forward(self, x):
            B = x.size(0)
            h = self.n1(x)
            q, k, v = (p(h).view(B, T, H, D).transpose(1, 2) for p in (self.q, self.k, self.v))
            q, k = rope(q), rope(k)
            s = (q @ k.transpose(-1, -2)) / math.sqrt(D)
            a = s.masked_fill(~mask, float("-inf")).softmax(-1)
            x = x + self.o((a @ v).transpose(1, 2).reshape(B, T, d))
            h = self.n2(x)
            return x + self.down(F.silu(self.gate(h)) * self.up(h))

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(vocab, d)
            self.blocks = nn.ModuleList(Block() for _ in range(n_layer))
            self.norm = RMSNorm()
            self.head = nn.Linear(d, vocab, bias=False)

        def forward(self, idx):
            x = self.emb(idx)
            for b in self.blocks:
                x = b(x)
            return self.head(self.norm(x))

    model = LM()
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=3e-4, betas=(0.9, 0.95), eps=1e-8)
    tokens = torch.randint(0, 50257, (batch, T + 1))
    x, y = tokens[:, :T], tokens[:, 1:].reshape(-1)

    def step():
        opt.zero_grad(set_to_none=False)
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, vocab), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.item()

    step()  # warm-up, as the C++ benchmark
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return batch * T * steps / (time.perf_counter() - start)


def python_run(preset, steps, preload):
    env = dict(os.environ)
    if preload:
        env["LD_PRELOAD"] = TCMALLOC
    out = subprocess.run([sys.executable, __file__, "--python-only", preset, "--steps", str(steps)],
                         env=env, check=True, capture_output=True, text=True).stdout
    return float(out.strip().splitlines()[-1])


def cpp_run(bench, preset):
    out = subprocess.run([bench, f"--benchmark_filter=train_step/{preset}_", "--benchmark_format=json"],
                         check=True, capture_output=True, text=True).stdout
    return {b["name"].split("/")[1]: b["tokens_per_s"] for b in json.loads(out)["benchmarks"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default="build/bench/bench_train_step")
    ap.add_argument("--presets", default="tiny,small,125m")
    ap.add_argument("--steps", type=int, default=0,
                    help="Python steps timed (default: 20 tiny, 3 small and 125m)")
    ap.add_argument("--python-only", metavar="PRESET", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.python_only:
        print(python_tokens_per_s(a.python_only, a.steps or 3))
        return
    threads = os.environ.get("OMP_NUM_THREADS") or str(os.cpu_count())
    print(f"threads {threads}; vocab 50304; tokens/s (higher is better)")
    print(f"{'preset':14} {'C++ eager':>10} {'C++ auto':>10} {'Py malloc':>10} {'Py tcmalloc':>12} "
          f"{'eager/Py+tc':>12} {'auto/Py+tc':>11}")
    for preset in a.presets.split(","):
        steps = a.steps or {"tiny": 20}.get(preset, 3)
        cpp = cpp_run(a.bench, preset)
        py = python_run(preset, steps, preload=False)
        py_tc = python_run(preset, steps, preload=True)
        eager = cpp.get(f"{preset}_eager", float("nan"))
        auto = cpp.get(f"{preset}_auto", float("nan"))
        shape = f"{preset} {PRESETS[preset][3]}x{PRESETS[preset][4]}"
        print(f"{shape:14} {eager:10.0f} {auto:10.0f} {py:10.0f} {py_tc:12.0f} {eager / py_tc:12.2f} "
              f"{auto / py_tc:11.2f}")


if __name__ == "__main__":
    main()
