#!/usr/bin/env python3
"""A LLaMA written independently of export_llama.py, for the importer tests.

Run with Debian's Python (torch, onnx and numpy): ``/usr/bin/python3``.

    alt_llama.py --out-dir DIR [--seed 0] [--prefill-len 8] [--past-len 8] [--verify]

The same decoder as python/wafer/export_llama.py (RMSNorm, rotate-half RoPE,
GQA, SwiGLU, causal attention, KV cache), written in other standard ways, so
that the importer's raising is checked on a second graph form:

- RMSNorm: ``x * rsqrt((x * x).mean(-1, keepdim=True) + eps) * w``.
- RoPE on the [B, L, H, D] layout before the head transpose, rotate-half
  written with ``torch.split`` (exports as Split), as ``cos * x + sin * r``
  with cos/sin of shape [L, 1, D] from ``freqs.repeat(1, 2)`` (Tile) and the
  angles as a broadcast product of positions and inverse frequencies.
- Causal mask ``torch.ones(L, T, dtype=bool).triu(T - L + 1)`` applied with
  ``masked_fill(mask, -inf)``, in prefill and decode alike.
- GQA as ``k[:, :, None].repeat(1, 1, n_rep, 1, 1).flatten(1, 2)`` (Tile; the
  same as ``torch.repeat_interleave(k, n_rep, dim=1)``, which torch 1.13
  exports wrongly for a dynamic sequence dim).
- The scale applied to q before the product (``q * head_dim ** -0.5``).
- SwiGLU as ``w2(F.silu(w1(x)) * w3(x))``; untied output projection.

Config: dim 48, 2 layers, 6 heads, 2 KV heads (head_dim 8), ffn 120,
vocab 300, eps 1e-5, theta 10000 (small so that the checked-in copy in
test/models/alt stays well under 1 MB).

Writes DIR/prefill.onnx, DIR/decode.onnx (inputs, outputs and dynamic dims
named as export_llama.py names them), DIR/inputs_prefill.npz and
DIR/inputs_decode.npz; with --verify also DIR/torch_<graph>.npz and
DIR/ort_<graph>.npz and checks ONNX Runtime (test/reference/run_ort.mjs)
against torch (max abs difference < 1e-4).
"""

import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from torch import nn

DIM, LAYERS, HEADS, KV_HEADS, FFN, VOCAB = 48, 2, 6, 2, 120, 300
EPS, THETA = 1e-5, 10000.0
HEAD_DIM = DIM // HEADS
RUN_ORT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       "reference", "run_ort.mjs")


class RMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.w = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt((x * x).mean(dim=-1, keepdim=True) + EPS) * self.w


def rope(x, cos, sin):
    """x: [B, L, H, D]; cos, sin: [L, 1, D].  Rotate-half via split (ONNX Split;
    torch 1.13 exports torch.chunk as two Slices with Shape-computed bounds)."""
    lo, hi = torch.split(x, HEAD_DIM // 2, dim=-1)
    return cos * x + sin * torch.cat((-hi, lo), dim=-1)


def repeat_heads(t):
    """[B, kvh, T, D] -> [B, kvh * n_rep, T, D], each KV head n_rep times in a row.

    torch.repeat_interleave(t, n_rep, dim=1) means this, but torch 1.13
    exports it wrongly when a later dim is dynamic (a Loop over
    SplitToSequence, or a Reshape whose 0 copies the wrong dim: ONNX Runtime
    then fails in the attention MatMul), so it is written with repeat (Tile).
    """
    n_rep = HEADS // KV_HEADS
    return t[:, :, None].repeat(1, 1, n_rep, 1, 1).flatten(1, 2)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.wq = nn.Linear(DIM, HEADS * HEAD_DIM, bias=False)
        self.wk = nn.Linear(DIM, KV_HEADS * HEAD_DIM, bias=False)
        self.wv = nn.Linear(DIM, KV_HEADS * HEAD_DIM, bias=False)
        self.wo = nn.Linear(HEADS * HEAD_DIM, DIM, bias=False)

    def forward(self, x, cos, sin, mask, cache):
        b, n, _ = x.shape
        q = rope(self.wq(x).view(b, n, HEADS, HEAD_DIM), cos, sin)
        k = rope(self.wk(x).view(b, n, KV_HEADS, HEAD_DIM), cos, sin)
        v = self.wv(x).view(b, n, KV_HEADS, HEAD_DIM)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))      # [B, heads, L, D]
        if cache is not None:
            k = torch.cat((cache[0], k), dim=2)
            v = torch.cat((cache[1], v), dim=2)
        present = (k, v)
        k, v = repeat_heads(k), repeat_heads(v)
        scores = (q * HEAD_DIM ** -0.5) @ k.transpose(-2, -1)
        probs = scores.masked_fill(mask, float("-inf")).softmax(dim=-1)
        out = (probs @ v).transpose(1, 2).reshape(b, n, HEADS * HEAD_DIM)
        return self.wo(out), present


class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Linear(DIM, FFN, bias=False)
        self.w2 = nn.Linear(FFN, DIM, bias=False)
        self.w3 = nn.Linear(DIM, FFN, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention_norm = RMSNorm(DIM)
        self.attention = Attention()
        self.ffn_norm = RMSNorm(DIM)
        self.feed_forward = FeedForward()

    def forward(self, x, cos, sin, mask, cache):
        h, present = self.attention(self.attention_norm(x), cos, sin, mask, cache)
        x = x + h
        return x + self.feed_forward(self.ffn_norm(x)), present


class Transformer(nn.Module):
    """forward(tokens, *cache) -> (logits, present.0.key, present.0.value, ...)."""

    def __init__(self):
        super().__init__()
        self.tok_embeddings = nn.Embedding(VOCAB, DIM)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.norm = RMSNorm(DIM)
        self.output = nn.Linear(DIM, VOCAB, bias=False)
        self.register_buffer(
            "inv_freq", THETA ** (-torch.arange(0, HEAD_DIM, 2).float() / HEAD_DIM),
            persistent=False)

    def forward(self, tokens, *cache):
        n = tokens.shape[1]
        start = cache[0].shape[2] if cache else 0
        total = start + n
        angles = torch.arange(start, total).float()[:, None] * self.inv_freq[None, :]
        angles = angles.repeat(1, 2)[:, None, :]                 # [L, 1, D]
        cos, sin = angles.cos(), angles.sin()
        mask = torch.ones(n, total, dtype=torch.bool).triu(total - n + 1)

        x = self.tok_embeddings(tokens)
        presents = []
        for i, block in enumerate(self.blocks):
            x, present = block(x, cos, sin, mask,
                               (cache[2 * i], cache[2 * i + 1]) if cache else None)
            presents.extend(present)
        return (self.output(self.norm(x)),) + tuple(presents)


def build(seed):
    torch.manual_seed(seed)
    model = Transformer()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.w"):
                p.copy_(1 + 0.1 * torch.randn_like(p))
            else:
                p.normal_(0.0, 0.02)
    return model.eval()


def io_names(graph):
    cache = [f"past.{i}.{kv}" for i in range(LAYERS) for kv in ("key", "value")]
    inputs = ["input_ids"] + (cache if graph == "decode" else [])
    outputs = ["logits"] + [f"present.{i}.{kv}" for i in range(LAYERS)
                            for kv in ("key", "value")]
    return inputs, outputs


def example(graph, seed, prefill_len, past_len):
    rng = np.random.default_rng(seed + (1000 if graph == "decode" else 0))
    n = prefill_len if graph == "prefill" else 1
    arrays = {"input_ids": rng.integers(0, VOCAB, size=(1, n)).astype(np.int64)}
    if graph == "decode":
        for name in io_names(graph)[0][1:]:
            arrays[name] = rng.normal(size=(1, KV_HEADS, past_len, HEAD_DIM)).astype(np.float32)
    return arrays


def export(model, graph, out_dir, arrays):
    inputs, outputs = io_names(graph)
    if graph == "prefill":
        axes = {"input_ids": {1: "seq"}, "logits": {1: "seq"}}
        axes.update({o: {2: "seq"} for o in outputs[1:]})
    else:
        axes = {i: {2: "past"} for i in inputs[1:]}
        axes.update({o: {2: "past_plus_1"} for o in outputs[1:]})
    path = os.path.join(out_dir, f"{graph}.onnx")
    with torch.no_grad():
        torch.onnx.export(model, tuple(torch.from_numpy(arrays[i]) for i in inputs), path,
                          input_names=inputs, output_names=outputs, dynamic_axes=axes,
                          opset_version=17, do_constant_folding=True)
    onnx.checker.check_model(path)
    return path


def verify(model, graph, out_dir, arrays):
    inputs, outputs = io_names(graph)
    with torch.no_grad():
        ref = dict(zip(outputs, (t.numpy() for t in model(
            *(torch.from_numpy(arrays[i]) for i in inputs)))))
    np.savez(os.path.join(out_dir, f"torch_{graph}.npz"), **ref)
    ort_path = os.path.join(out_dir, f"ort_{graph}.npz")
    r = subprocess.run(["node", RUN_ORT, os.path.join(out_dir, f"{graph}.onnx"),
                        os.path.join(out_dir, f"inputs_{graph}.npz"), ort_path],
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"error: run_ort.mjs: {r.stderr.strip()}")
    got = np.load(ort_path)
    diffs = {k: float(np.abs(got[k] - v).max()) for k, v in ref.items()}
    worst = max(diffs.values())
    print(f"  verify {graph}: ORT vs torch max |diff| logits {diffs['logits']:.3g}, "
          f"all outputs {worst:.3g}: {'ok' if worst < 1e-4 else 'FAIL'}")
    return worst < 1e-4


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--prefill-len", type=int, default=8)
    ap.add_argument("--past-len", type=int, default=8)
    ap.add_argument("--verify", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    model = build(args.seed)
    ok = True
    for graph in ("prefill", "decode"):
        arrays = example(graph, args.seed, args.prefill_len, args.past_len)
        np.savez(os.path.join(args.out_dir, f"inputs_{graph}.npz"), **arrays)
        path = export(model, graph, args.out_dir, arrays)
        print(f"  {graph}: wrote {path}")
        if args.verify:
            ok &= verify(model, graph, args.out_dir, arrays)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
