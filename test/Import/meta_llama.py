#!/usr/bin/env python3
"""Two more independently written LLaMAs, for the raising and mesh tests.

Run with Debian's Python (torch, onnx and numpy): ``/usr/bin/python3``.

    meta_llama.py {meta,split,broken} --out-dir DIR [--seed 0] [--prefill-len 8]
                  [--past-len 8] [--verify]

``meta`` follows Meta's reference llama code (model.py), complex-free:

- RoPE on adjacent pairs, on the [B, L, H, D] layout: ``x.reshape(..., D/2, 2)``,
  ``unbind(-1)``, ``a*cos - b*sin`` and ``a*sin + b*cos``, ``stack(-1)`` and
  ``flatten(3)``; cos/sin [L, D/2] gathered by position from tables
  precomputed for ``MAX_LEN`` positions (``freqs_cos[positions]``).
- GQA as Meta's ``repeat_kv``: ``x[:, :, :, None, :].expand(...).reshape(...)``
  on [B, T, KVH, D] (Expand + Reshape).
- RMSNorm as ``x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w``;
  the causal mask an additive ``-inf`` upper triangle; ``softmax(q k^T /
  sqrt(D) + mask) v``.

``split`` is rotate-half written with ``torch.split`` and
``cat([a*c - b*s, b*c + a*s])`` (cos/sin [L, D/2] computed from the
positions), on [B, H, L, D], and GQA as ``repeat_interleave`` written as
its index: ``index_select(1, arange(KVH).repeat_interleave(n_rep))``
(Gather).

``broken`` is ``meta`` with a sign error in the pair rotation (``a*cos +
b*sin``): no longer a rotation, so not a LLaMA; it must still evaluate
correctly on the host and fail on the mesh with one line naming the node.

All: dim 32, 2 layers, 4 heads, 2 KV heads (head_dim 8), ffn 88, vocab 128,
eps 1e-5, theta 10000, untied output; caches [1, KVH, T, D]. The files are
written at test time (fixed seed), nothing is checked in.

Writes DIR/prefill.onnx, DIR/decode.onnx (inputs, outputs and dynamic dims
named as export_llama.py names them), DIR/inputs_prefill.npz and
DIR/inputs_decode.npz; with --verify also checks ONNX Runtime
(test/reference/run_ort.mjs) against torch (max abs difference < 1e-4).
"""

import argparse
import math
import os
import subprocess
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from torch import nn

DIM, LAYERS, HEADS, KV_HEADS, FFN, VOCAB = 32, 2, 4, 2, 88, 128
EPS, THETA, MAX_LEN = 1e-5, 10000.0, 64
HEAD_DIM = DIM // HEADS
N_REP = HEADS // KV_HEADS
RUN_ORT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       "reference", "run_ort.mjs")


class RMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * self.weight


def rope_pairs(x, cos, sin, sign=-1.0):
    """Meta: x [B, L, H, D], pairs (x[2i], x[2i+1]); cos, sin [L, D/2].
    sign=+1 is the ``broken`` style: not a rotation any more."""
    a, b = x.reshape(*x.shape[:-1], -1, 2).unbind(-1)
    cos, sin = cos[:, None, :], sin[:, None, :]
    return torch.stack((a * cos + sign * b * sin, a * sin + b * cos), dim=-1).flatten(3)


def rope_halves(x, cos, sin):
    """Rotate-half by split and cat: x [B, H, L, D]; cos, sin [L, D/2]."""
    a, b = torch.split(x, HEAD_DIM // 2, dim=-1)
    return torch.cat((a * cos - b * sin, b * cos + a * sin), dim=-1)


def repeat_kv(x):
    """Meta's repeat_kv: [B, T, KVH, D] -> [B, T, KVH * N_REP, D]."""
    b, t, kvh, d = x.shape
    return x[:, :, :, None, :].expand(b, t, kvh, N_REP, d).reshape(b, t, kvh * N_REP, d)


class Attention(nn.Module):
    def __init__(self, style):
        super().__init__()
        self.style = style
        self.wq = nn.Linear(DIM, HEADS * HEAD_DIM, bias=False)
        self.wk = nn.Linear(DIM, KV_HEADS * HEAD_DIM, bias=False)
        self.wv = nn.Linear(DIM, KV_HEADS * HEAD_DIM, bias=False)
        self.wo = nn.Linear(HEADS * HEAD_DIM, DIM, bias=False)

    def forward(self, x, cos, sin, mask, cache):
        bsz, n, _ = x.shape
        q = self.wq(x).view(bsz, n, HEADS, HEAD_DIM)
        k = self.wk(x).view(bsz, n, KV_HEADS, HEAD_DIM)
        v = self.wv(x).view(bsz, n, KV_HEADS, HEAD_DIM)
        if self.style != "split":
            sign = 1.0 if self.style == "broken" else -1.0
            q, k = rope_pairs(q, cos, sin, sign), rope_pairs(k, cos, sin, sign)
            q, k, v = (t.transpose(1, 2) for t in (q, k, v))   # [B, heads, L, D]
        else:
            q, k, v = (t.transpose(1, 2) for t in (q, k, v))
            q, k = rope_halves(q, cos, sin), rope_halves(k, cos, sin)
        if cache is not None:
            k = torch.cat((cache[0], k), dim=2)
            v = torch.cat((cache[1], v), dim=2)
        present = (k, v)
        if self.style != "split":
            # repeat_kv works on [B, T, KVH, D], as in Meta's code.
            k = repeat_kv(k.transpose(1, 2)).transpose(1, 2)
            v = repeat_kv(v.transpose(1, 2)).transpose(1, 2)
        else:
            # repeat_interleave(N_REP, dim=1) by its index (a Gather):
            # torch 1.13 exports repeat_interleave itself wrongly when a
            # later dim is dynamic (see alt_llama.py).
            heads = torch.arange(KV_HEADS).repeat_interleave(N_REP)
            k, v = k.index_select(1, heads), v.index_select(1, heads)
        scores = q @ k.transpose(2, 3) / math.sqrt(HEAD_DIM)
        probs = F.softmax(scores + mask, dim=-1)
        out = (probs @ v).transpose(1, 2).contiguous().view(bsz, n, -1)
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
    def __init__(self, style):
        super().__init__()
        self.attention_norm = RMSNorm(DIM)
        self.attention = Attention(style)
        self.ffn_norm = RMSNorm(DIM)
        self.feed_forward = FeedForward()

    def forward(self, x, cos, sin, mask, cache):
        h = self.attention(self.attention_norm(x), cos, sin, mask, cache)
        x = x + h[0]
        return x + self.feed_forward(self.ffn_norm(x)), h[1]


class Transformer(nn.Module):
    """forward(tokens, *cache) -> (logits, present.0.key, present.0.value, ...)."""

    def __init__(self, style):
        super().__init__()
        self.style = style
        self.tok_embeddings = nn.Embedding(VOCAB, DIM)
        self.layers = nn.ModuleList(Block(style) for _ in range(LAYERS))
        self.norm = RMSNorm(DIM)
        self.output = nn.Linear(DIM, VOCAB, bias=False)
        freqs = 1.0 / THETA ** (torch.arange(0, HEAD_DIM, 2).float() / HEAD_DIM)
        self.register_buffer("inv_freq", freqs, persistent=False)
        angles = torch.outer(torch.arange(MAX_LEN).float(), freqs)
        self.register_buffer("freqs_cos", angles.cos(), persistent=False)
        self.register_buffer("freqs_sin", angles.sin(), persistent=False)

    def forward(self, tokens, *cache):
        n = tokens.shape[1]
        start = cache[0].shape[2] if cache else 0
        positions = torch.arange(start, start + n)
        if self.style != "split":
            cos, sin = self.freqs_cos[positions], self.freqs_sin[positions]
        else:
            angles = positions.float()[:, None] * self.inv_freq[None, :]
            cos, sin = angles.cos(), angles.sin()
        mask = torch.full((n, start + n), float("-inf")).triu(start + 1)
        x = self.tok_embeddings(tokens)
        presents = []
        for i, layer in enumerate(self.layers):
            x, present = layer(x, cos, sin, mask,
                               (cache[2 * i], cache[2 * i + 1]) if cache else None)
            presents.extend(present)
        return (self.output(self.norm(x)),) + tuple(presents)


def build(style, seed):
    torch.manual_seed(seed)
    model = Transformer(style)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1 + 0.1 * torch.randn_like(p))
            else:
                p.normal_(0.0, 0.05)
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
    ort_path = os.path.join(out_dir, f"ort_{graph}.npz")
    r = subprocess.run(["node", RUN_ORT, os.path.join(out_dir, f"{graph}.onnx"),
                        os.path.join(out_dir, f"inputs_{graph}.npz"), ort_path],
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"error: run_ort.mjs: {r.stderr.strip()}")
    got = np.load(ort_path)
    worst = max(float(np.abs(got[k] - v).max()) for k, v in ref.items())
    print(f"  verify {graph}: ORT vs torch max |diff| {worst:.3g}: "
          f"{'ok' if worst < 1e-4 else 'FAIL'}")
    return worst < 1e-4


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("style", choices=("meta", "split", "broken"))
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--prefill-len", type=int, default=8)
    ap.add_argument("--past-len", type=int, default=8)
    ap.add_argument("--verify", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    model = build(args.style, args.seed)
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
