#!/usr/bin/env python3
"""Exports a LLaMA decoder, written the way Hugging Face writes it, to ONNX.

Run with Debian's Python (torch, onnx and numpy): ``/usr/bin/python3``.

    export_llama.py CONFIG_NAME_OR_JSON --out-dir DIR [--seed 0]
        [--prefill-len 8] [--past-len 8] [--external-data auto|always|never]
        [--weights random|zeros] [--graphs prefill,decode[,merged]] [--hf-inputs]
        [--verify]

CONFIG is one of ``tiny``, ``stories15m``, ``llama3.2-1b``, ``llama3-8b``,
``llama2-13b``, ``codellama-34b``, ``qwen2-72b`` (the shapes of the paper's
larger models; QWen2 has biases on q, k and v) or a JSON file with the keys
of ``LlamaConfig`` (dim, n_layers, n_heads, n_kv_heads, ffn_dim,
vocab_size, rms_eps, rope_theta, rope_style, tie_word_embeddings,
qkv_bias, fused_projections, logits_to_keep; the last seven are optional;
fused_projections writes Phi-3's one ``qkv_proj`` split into q, k and v
and one ``gate_up_proj`` chunked into gate and up; logits_to_keep 1
returns only the last position's logits, as Hugging Face's
``logits_to_keep=1`` does, by slicing the hidden states before lm_head).
Every named config uses rms_eps 1e-5 (the value of llama2.c and of the
Llama 3 checkpoints); stories15m ties its output projection to the
embedding like llama2.c (the exported graph then holds the embedding and a
transposed copy, as torch folds it).

Writes into DIR:

- ``prefill.onnx``: input ``input_ids`` int64 [1, seq]; outputs ``logits``
  [1, seq, vocab] ([1, 1, vocab] with logits_to_keep 1) then
  ``present.{i}.key``, ``present.{i}.value`` [1, n_kv_heads, seq,
  head_dim] for every layer i.
- ``decode.onnx``: inputs ``input_ids`` int64 [1, 1] then ``past.{i}.key``,
  ``past.{i}.value`` [1, n_kv_heads, past, head_dim]; outputs ``logits``
  [1, 1, vocab] and ``present.{i}.key/value`` of length past + 1.  The
  position of the new token is the past length, read from the past tensor's
  shape inside the graph.
- With ``--hf-inputs``, both graphs also take ``attention_mask`` int64
  [1, seq] (decode: [1, past_plus_1]) and ``position_ids`` int64 [1, seq]
  (decode: [1, 1]) after ``input_ids``, as Hugging Face's exports do; the
  mask is built from ``attention_mask`` the way Hugging Face builds it (0:
  padding, not attended to), and the rotary factors from ``position_ids``.
- ``merged.onnx`` (``--graphs merged``, with ``--hf-inputs``): one graph for
  prefill and decode, as Optimum exports a model with a cache: inputs as
  decode's but ``input_ids``, ``position_ids`` [1, seq] and
  ``attention_mask`` [1, total]; outputs ``logits`` [1, seq, vocab] and the
  presents of length ``total`` (past + seq).  Its inputs file holds a
  prompt of ``--prefill-len`` tokens on an empty past (length 0).
- ``inputs_prefill.npz`` / ``inputs_decode.npz``: arrays for those inputs
  (keys are the graph input names), drawn from ``--seed``.
- With ``--verify``: ``torch_<graph>.npz`` (the torch module's outputs) and
  ``ort_<graph>.npz`` (ONNX Runtime's, through test/reference/run_ort.mjs),
  compared output by output (max abs difference must be < 1e-4).

Weights are deterministic from ``--seed``: normal with std 0.02 for the
linear and embedding weights, 1 + 0.1 * normal for the RMSNorm weights.
External data (``auto``: when the initializers exceed 16 MB) goes to one
file ``<graph>.onnx.data`` next to the graph, referenced by relative path.

``--weights random`` on a model over 2 GB exports the graph as with zeros
and then writes random values (the same distributions, one generator per
tensor) into the external data file tensor by tensor, so the 1B model
exports with random weights in a few hundred MB of memory (``--verify``,
which runs the torch module, is for models under 2 GB).

``--weights zeros`` (the default for models over 2 GB) builds every parameter
as a stride-0 view of one zero element, so that the 8B model exports in about
a minute and 2.4 GB of memory.  torch exports it with constant folding as it
would real weights, with the weights left out as graph inputs (see
_weights_kept_out); they then become initializers whose data is external, in
one sparse file of zeros (``<graph>.onnx.data``, created with truncate,
offsets aligned to 4096), and any Transpose of a weight is replaced by a
weight of the transposed dims.  The graph has the structure torch produces
for real weights (MatMul with an [in, out] initializer): the tiny config
gives the same graph proto both ways, and the summary printed after each
export compares the op types per layer with a small real-weight export of
the same kind.  Prefill is traced on one token in that mode (the graph does
not depend on the traced length).

torch 1.13 notes: repeat_interleave exports wrongly with a dynamic sequence
dim, so the interleaved RoPE's cos/sin duplication is written stack +
flatten; the scoped node names (``/model/layers.3/self_attn/...``) give the
layer of each node.
"""

import argparse
import collections
import contextlib
import json
import math
import os
import re
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, fields, replace

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper
from torch import nn

OPSET = 17
EXTERNAL_AUTO_BYTES = 16 << 20   # --external-data auto: above 16 MB of weights
ZEROS_AUTO_BYTES = 2 << 30       # --weights default: zeros above 2 GB
ALIGN = 4096                     # offsets in the sparse zero file
TOLERANCE = 1e-4

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN_ORT = os.path.join(REPO, "test", "reference", "run_ort.mjs")


# ----------------------------------------------------------------- config ---

@dataclass
class LlamaConfig:
    dim: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    ffn_dim: int
    vocab_size: int
    rms_eps: float = 1e-5
    rope_theta: float = 10000.0
    rope_style: str = "half"            # "half" (Llama) or "interleaved" (GPT-J)
    tie_word_embeddings: bool = False
    qkv_bias: bool = False              # QWen2: biases on q, k and v
    # Phi-3's and gpt-fast's fused projections: one qkv_proj whose output
    # is split into q, k and v, and one gate_up_proj chunked in two.
    fused_projections: bool = False
    # Hugging Face's logits_to_keep: 0 returns every position's logits, 1
    # only the last one's (the hidden states sliced before lm_head).
    logits_to_keep: int = 0
    # The export's interface: the graphs also take attention_mask and
    # position_ids, as Hugging Face's and Optimum's exports do.
    hf_inputs: bool = False

    def __post_init__(self):
        if self.dim % self.n_heads:
            raise ValueError(f"dim {self.dim} is not a multiple of n_heads {self.n_heads}")
        if self.n_heads % self.n_kv_heads:
            raise ValueError(f"n_heads {self.n_heads} is not a multiple of "
                             f"n_kv_heads {self.n_kv_heads}")
        if self.head_dim % 2:
            raise ValueError(f"head_dim {self.head_dim} must be even for RoPE")
        if self.logits_to_keep not in (0, 1):
            raise ValueError(f"logits_to_keep must be 0 (all) or 1 (the last), "
                             f"not {self.logits_to_keep!r}")
        if self.rope_style not in ("half", "interleaved"):
            raise ValueError(f"rope_style must be 'half' or 'interleaved', "
                             f"not {self.rope_style!r}")

    @property
    def head_dim(self):
        return self.dim // self.n_heads

    def n_params(self):
        d, kv = self.dim, self.n_kv_heads * self.head_dim
        per_layer = 2 * d * d + 2 * d * kv + 3 * d * self.ffn_dim + 2 * d
        if self.qkv_bias:
            per_layer += d + 2 * kv
        lm_head = 0 if self.tie_word_embeddings else self.vocab_size * d
        return self.vocab_size * d + self.n_layers * per_layer + d + lm_head


CONFIGS = {
    "tiny": LlamaConfig(dim=64, n_layers=2, n_heads=4, n_kv_heads=2, ffn_dim=172,
                        vocab_size=256),
    # llama2.c's stories15M (shared classifier weights).
    "stories15m": LlamaConfig(dim=288, n_layers=6, n_heads=6, n_kv_heads=6,
                              ffn_dim=768, vocab_size=32000,
                              tie_word_embeddings=True),
    "llama3.2-1b": LlamaConfig(dim=2048, n_layers=16, n_heads=32, n_kv_heads=8,
                               ffn_dim=8192, vocab_size=128256,
                               rope_theta=500000.0, tie_word_embeddings=True),
    "llama3-8b": LlamaConfig(dim=4096, n_layers=32, n_heads=32, n_kv_heads=8,
                             ffn_dim=14336, vocab_size=128256,
                             rope_theta=500000.0, tie_word_embeddings=False),
    # The paper's larger models (Tables 3 and 4), shapes from their
    # published configurations.
    "llama2-13b": LlamaConfig(dim=5120, n_layers=40, n_heads=40, n_kv_heads=40,
                              ffn_dim=13824, vocab_size=32000),
    "codellama-34b": LlamaConfig(dim=8192, n_layers=48, n_heads=64, n_kv_heads=8,
                                 ffn_dim=22016, vocab_size=32000,
                                 rope_theta=1000000.0),
    "qwen2-72b": LlamaConfig(dim=8192, n_layers=80, n_heads=64, n_kv_heads=8,
                             ffn_dim=29568, vocab_size=152064, rms_eps=1e-6,
                             rope_theta=1000000.0, qkv_bias=True),
}


def load_config(name_or_path):
    if name_or_path in CONFIGS:
        return CONFIGS[name_or_path]
    if not os.path.isfile(name_or_path):
        raise SystemExit(f"error: {name_or_path}: neither a config name "
                         f"({', '.join(CONFIGS)}) nor a JSON file")
    with open(name_or_path) as f:
        raw = json.load(f)
    known = {f.name for f in fields(LlamaConfig)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise SystemExit(f"error: {name_or_path}: unknown keys {unknown}")
    try:
        return LlamaConfig(**raw)
    except (TypeError, ValueError) as e:
        raise SystemExit(f"error: {name_or_path}: {e}")


# ------------------------------------------------------------------ model ---

class LlamaRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6, device=None):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size, device=device))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class LlamaRotaryEmbedding(nn.Module):
    def __init__(self, dim, base=10000.0, style="half"):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.style = style

    @torch.no_grad()
    def forward(self, x, position_ids):
        # [B, d/2, 1] @ [B, 1, L] -> [B, d/2, L] -> [B, L, d/2]
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(
            position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        freqs = (inv_freq_expanded @ position_ids_expanded).transpose(1, 2)
        if self.style == "half":
            emb = torch.cat((freqs, freqs), dim=-1)
        else:
            # GPT-J's repeat_interleave(freqs, 2, dim=-1): (f0, f0, f1, f1, ...).
            # torch 1.13 exports repeat_interleave as a Loop over a
            # SplitToSequence (and breaks the expand above), so the same
            # duplication is written as stack + flatten.
            emb = torch.stack((freqs, freqs), dim=-1).flatten(-2)
        cos = emb.cos()
        sin = emb.sin()
        return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)


def rotate_half(x):
    """Rotates half the hidden dims of the input."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rotate_every_two(x):
    """GPT-J's rotation of interleaved pairs (x0, x1) -> (-x1, x0)."""
    x1 = x[..., ::2]
    x2 = x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def apply_rotary_pos_emb(q, k, cos, sin, style="half", unsqueeze_dim=1):
    rotate = rotate_half if style == "half" else rotate_every_two
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate(q) * sin)
    k_embed = (k * cos) + (rotate(k) * sin)
    return q_embed, k_embed


def repeat_kv(hidden_states, n_rep):
    """[b, kvh, s, d] -> [b, kvh * n_rep, s, d], each KV head n_rep times."""
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(
        batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


class LlamaMLP(nn.Module):
    def __init__(self, config, device=None):
        super().__init__()
        self.fused = config.fused_projections
        if self.fused:
            self.gate_up_proj = nn.Linear(config.dim, 2 * config.ffn_dim, bias=False,
                                          device=device)
        else:
            self.gate_proj = nn.Linear(config.dim, config.ffn_dim, bias=False, device=device)
            self.up_proj = nn.Linear(config.dim, config.ffn_dim, bias=False, device=device)
        self.down_proj = nn.Linear(config.ffn_dim, config.dim, bias=False, device=device)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        if self.fused:
            gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        else:
            gate, up = self.gate_proj(x), self.up_proj(x)
        return self.down_proj(self.act_fn(gate) * up)


class LlamaAttention(nn.Module):
    def __init__(self, config, device=None):
        super().__init__()
        self.config = config
        self.num_heads = config.n_heads
        self.num_key_value_heads = config.n_kv_heads
        self.num_key_value_groups = config.n_heads // config.n_kv_heads
        self.head_dim = config.head_dim
        d, hd = config.dim, config.head_dim
        bias = config.qkv_bias
        self.split = [self.num_heads * hd, self.num_key_value_heads * hd,
                      self.num_key_value_heads * hd]
        if config.fused_projections:
            self.qkv_proj = nn.Linear(d, sum(self.split), bias=bias, device=device)
        else:
            self.q_proj = nn.Linear(d, self.split[0], bias=bias, device=device)
            self.k_proj = nn.Linear(d, self.split[1], bias=bias, device=device)
            self.v_proj = nn.Linear(d, self.split[2], bias=bias, device=device)
        self.o_proj = nn.Linear(self.num_heads * hd, d, bias=False, device=device)

    def forward(self, hidden_states, position_embeddings, attention_mask=None,
                past_key_value=None):
        bsz, q_len, _ = hidden_states.size()
        if self.config.fused_projections:
            query_states, key_states, value_states = self.qkv_proj(
                hidden_states).split(self.split, dim=-1)
        else:
            query_states = self.q_proj(hidden_states)
            key_states = self.k_proj(hidden_states)
            value_states = self.v_proj(hidden_states)

        query_states = query_states.view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        key_states = key_states.view(bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(1, 2)
        value_states = value_states.view(bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(1, 2)

        cos, sin = position_embeddings
        query_states, key_states = apply_rotary_pos_emb(
            query_states, key_states, cos, sin, self.config.rope_style)

        if past_key_value is not None:
            past_key, past_value = past_key_value
            key_states = torch.cat([past_key, key_states], dim=2)
            value_states = torch.cat([past_value, value_states], dim=2)
        present = (key_states, value_states)

        key_states = repeat_kv(key_states, self.num_key_value_groups)
        value_states = repeat_kv(value_states, self.num_key_value_groups)

        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) / math.sqrt(self.head_dim)
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query_states.dtype)
        attn_output = torch.matmul(attn_weights, value_states)

        attn_output = attn_output.transpose(1, 2).contiguous()
        attn_output = attn_output.reshape(bsz, q_len, -1)
        attn_output = self.o_proj(attn_output)
        return attn_output, present


class LlamaDecoderLayer(nn.Module):
    def __init__(self, config, device=None):
        super().__init__()
        self.self_attn = LlamaAttention(config, device)
        self.mlp = LlamaMLP(config, device)
        self.input_layernorm = LlamaRMSNorm(config.dim, eps=config.rms_eps, device=device)
        self.post_attention_layernorm = LlamaRMSNorm(config.dim, eps=config.rms_eps, device=device)

    def forward(self, hidden_states, position_embeddings, attention_mask=None,
                past_key_value=None):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states, present = self.self_attn(
            hidden_states, position_embeddings, attention_mask, past_key_value)
        hidden_states = residual + hidden_states

        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        hidden_states = residual + hidden_states
        return hidden_states, present


def make_causal_mask(q_len, past_len, dtype):
    """[1, 1, q_len, past_len + q_len]: 0 where visible, finfo.min above the diagonal."""
    mask = torch.full((q_len, q_len), torch.finfo(dtype).min, dtype=dtype)
    mask = torch.triu(mask, diagonal=1)
    if past_len is not None:
        mask = torch.cat([torch.zeros(q_len, past_len, dtype=dtype), mask], dim=-1)
    return mask[None, None, :, :]


class LlamaModel(nn.Module):
    def __init__(self, config, device=None):
        super().__init__()
        self.embed_tokens = nn.Embedding(config.vocab_size, config.dim, device=device)
        self.layers = nn.ModuleList(
            [LlamaDecoderLayer(config, device) for _ in range(config.n_layers)])
        self.norm = LlamaRMSNorm(config.dim, eps=config.rms_eps, device=device)
        self.rotary_emb = LlamaRotaryEmbedding(config.head_dim, config.rope_theta,
                                               config.rope_style)

    def forward(self, input_ids, past_key_values=None, attention_mask=None,
                position_ids=None):
        inputs_embeds = self.embed_tokens(input_ids)
        q_len = input_ids.shape[1]
        past_len = past_key_values[0][0].shape[2] if past_key_values else 0
        if position_ids is None:
            cache_position = torch.arange(past_len, past_len + q_len)
            position_ids = cache_position.unsqueeze(0)

        if (past_key_values and attention_mask is None and not torch.jit.is_tracing()
                and q_len != 1):
            raise ValueError("with past key/values and no attention_mask, input_ids "
                             "must hold one token")
        dtype = inputs_embeds.dtype
        if attention_mask is not None:
            # Hugging Face's 4D mask from a [batch, past + q_len] one: causal,
            # and finfo.min wherever the given mask is 0 (padding).
            causal = make_causal_mask(q_len, past_len if past_key_values else None,
                                      dtype)
            hidden = (1.0 - attention_mask[:, None, None, :].to(dtype)).to(torch.bool)
            attention_mask = causal.masked_fill(hidden, torch.finfo(dtype).min)
        elif past_key_values:
            # Like Hugging Face: a step after a cache takes one new token and
            # needs no mask (decided without looking at traced sizes).
            attention_mask = None
        else:
            attention_mask = make_causal_mask(q_len, None, dtype)

        hidden_states = inputs_embeds
        position_embeddings = self.rotary_emb(hidden_states, position_ids)
        presents = []
        for i, layer in enumerate(self.layers):
            past = past_key_values[i] if past_key_values else None
            hidden_states, present = layer(hidden_states, position_embeddings,
                                           attention_mask, past)
            presents.append(present)
        hidden_states = self.norm(hidden_states)
        return hidden_states, presents


class LlamaForCausalLM(nn.Module):
    """forward(input_ids, *past) -> (logits, present.0.key, present.0.value, ...)."""

    def __init__(self, config, device=None):
        super().__init__()
        self.config = config
        self.model = LlamaModel(config, device)
        self.lm_head = nn.Linear(config.dim, config.vocab_size, bias=False, device=device)
        if config.tie_word_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight

    def forward(self, input_ids, *rest):
        """rest: with config.hf_inputs, attention_mask and position_ids, then
        the past."""
        n = self.config.n_layers
        attention_mask = position_ids = None
        if self.config.hf_inputs:
            attention_mask, position_ids, *rest = rest
        past = rest
        if past and len(past) != 2 * n:
            raise ValueError(f"expected {2 * n} past tensors, got {len(past)}")
        past_key_values = [(past[2 * i], past[2 * i + 1]) for i in range(n)] if past else None
        hidden_states, presents = self.model(input_ids, past_key_values, attention_mask,
                                             position_ids)
        if self.config.logits_to_keep:
            hidden_states = hidden_states[:, -self.config.logits_to_keep:, :]
        logits = self.lm_head(hidden_states).float()
        return (logits,) + tuple(t for kv in presents for t in kv)


# ---------------------------------------------------------------- weights ---

def _param_slots(model):
    """(module, attribute name, parameter) for every distinct parameter."""
    seen = set()
    for module in model.modules():
        for name, p in list(module._parameters.items()):
            if p is None or id(p) in seen:
                continue
            seen.add(id(p))
            yield module, name, p


def _retie(model, replaced):
    """Points every slot holding an old parameter at its replacement."""
    for module in model.modules():
        for name, p in list(module._parameters.items()):
            if p is not None and id(p) in replaced:
                module._parameters[name] = replaced[id(p)]


def init_random_weights(model, seed):
    """Normal(0, 0.02) for linear/embedding weights, 1 + 0.1 * normal for RMSNorm."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():   # deduplicated, fixed order
            noise = torch.randn(p.shape, generator=gen, dtype=p.dtype)
            if name.endswith("norm.weight"):
                p.copy_(1.0 + 0.1 * noise)
            else:
                p.copy_(0.02 * noise)


ZERO = torch.zeros(1)   # the one element every zero-weight parameter views


def is_zero_weight(t):
    return isinstance(t, torch.Tensor) and t.data_ptr() == ZERO.data_ptr()


def build_model(config, weights, seed):
    if weights == "zeros":
        # Modules on the meta device (no memory), then every parameter a
        # stride-0 view of ZERO.
        model = LlamaForCausalLM(config, device="meta")
        replaced = {}
        for _, _, p in _param_slots(model):
            replaced[id(p)] = nn.Parameter(ZERO.expand(*p.shape), requires_grad=False)
        _retie(model, replaced)
    else:
        model = LlamaForCausalLM(config)
        init_random_weights(model, seed)
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


# ----------------------------------------------------------------- inputs ---

GRAPHS = ("prefill", "decode", "merged")


def input_names(config, graph):
    first = ["input_ids"] + (["attention_mask", "position_ids"] if config.hf_inputs else [])
    if graph == "prefill":
        return first
    return first + [f"past.{i}.{kv}" for i in range(config.n_layers)
                    for kv in ("key", "value")]


def output_names(config):
    return ["logits"] + [f"present.{i}.{kv}" for i in range(config.n_layers)
                         for kv in ("key", "value")]


def make_inputs(config, graph, seed, prefill_len, past_len):
    """Arrays keyed by graph input name; each graph has its own stream.

    merged: the prompt of prefill_len tokens on an empty past (its prefill).
    """
    rng = np.random.default_rng([seed, GRAPHS.index(graph)])
    q_len, past = {"prefill": (prefill_len, 0), "decode": (1, past_len),
                   "merged": (prefill_len, 0)}[graph]
    arrays = {"input_ids": rng.integers(0, config.vocab_size, size=(1, q_len),
                                        dtype=np.int64)}
    if config.hf_inputs:
        arrays["attention_mask"] = np.ones((1, past + q_len), dtype=np.int64)
        arrays["position_ids"] = np.arange(past, past + q_len, dtype=np.int64)[None]
    if graph == "prefill":
        return arrays
    shape = (1, config.n_kv_heads, past, config.head_dim)
    for i in range(config.n_layers):
        for kv in ("key", "value"):
            arrays[f"past.{i}.{kv}"] = rng.standard_normal(shape).astype(np.float32)
    return arrays


def dynamic_axes(config, graph):
    seq, total = io_dims(graph)
    axes = {}
    if config.hf_inputs:
        axes["attention_mask"] = {1: total}
        if seq == "seq":
            axes["position_ids"] = {1: "seq"}
    if seq == "seq":
        axes["input_ids"] = {1: "seq"}
        if not config.logits_to_keep:
            axes["logits"] = {1: "seq"}
    for i in range(config.n_layers):
        for kv in ("key", "value"):
            if graph != "prefill":
                axes[f"past.{i}.{kv}"] = {2: "past"}
            axes[f"present.{i}.{kv}"] = {2: total}
    return axes


def io_dims(graph):
    """The new tokens' and the present caches' length dimension of a graph."""
    return {"prefill": ("seq", "seq"), "decode": (1, "past_plus_1"),
            "merged": ("seq", "total")}[graph]


# ----------------------------------------------------------------- export ---

@contextlib.contextmanager
def _weights_kept_out(weight_inputs):
    """Lets torch.onnx.export handle stride-0 zero weights (views of ZERO) cheaply.

    The export runs with constant folding and export_params=True as for real
    weights, so the graph has the same structure (folding Transpose of an
    nn.Linear weight into an [in, out] initializer is a view here: free).
    Three torch internals are wrapped for the duration:

    - the initializer deduplication: all-zero weights of one shape would be
      merged.  Zero weights skip it and are left out of the parameter dict,
      so torch declares them as graph inputs without data; they are recorded
      in ``weight_inputs`` (name -> shape) for attach_zero_weights.  Every
      other folded constant (from RoPE's inverse frequencies, ...) goes
      through torch's own pass and is exported with its values.
    - Tensor.clone: the tracer keeps a clone of every input and parameter
      (only to warn about modified dict/str inputs), which would materialise
      each weight; zero weights return themselves (never written).
    - the ONNX shape inference passes: they copy the value of every parameter
      a node reads into a one-node ONNX graph (gigabytes, minutes for 8B).  A
      weight's value never decides a shape, and without it the input keeps
      its traced type and sizes, so the inferred shapes are the same (the tiny
      config exports to the same graph proto with zero and random weights).
    """
    original = torch._C._jit_pass_onnx_deduplicate_initializers
    original_clone = torch.Tensor.clone

    def wrapper(graph, params_dict, is_train):
        others = {k: v for k, v in params_dict.items() if not is_zero_weight(v)}
        for k, v in params_dict.items():
            if is_zero_weight(v):
                weight_inputs[k] = tuple(v.shape)
        return original(graph, others, is_train)

    def clone(self, *args, **kwargs):
        if is_zero_weight(self):
            return self
        return original_clone(self, *args, **kwargs)

    inference = {}
    for name in ("_jit_pass_onnx_graph_shape_type_inference",
                 "_jit_pass_onnx_node_shape_type_inference"):
        inference[name] = getattr(torch._C, name)

        def without_weights(target, params_dict, opset, _f=inference[name]):
            kept = {k: v for k, v in params_dict.items() if not is_zero_weight(v)}
            return _f(target, kept, opset)

        setattr(torch._C, name, without_weights)
    torch._C._jit_pass_onnx_deduplicate_initializers = wrapper
    torch.Tensor.clone = clone
    try:
        yield
    finally:
        torch._C._jit_pass_onnx_deduplicate_initializers = original
        torch.Tensor.clone = original_clone
        for name, f in inference.items():
            setattr(torch._C, name, f)


def _remove(path):
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)


def set_io_shapes(proto, config, graph):
    """Writes the documented shapes on the graph inputs and outputs.

    torch's shape inference loses some static dims of the outputs (it names
    them e.g. 'Castlogits_dim_0'); every output's shape is known, so state it.
    """
    seq, total = io_dims(graph)
    kv = [1, config.n_kv_heads, None, config.head_dim]
    kept = config.logits_to_keep or seq
    shapes = {"input_ids": [1, seq], "logits": [1, kept, config.vocab_size]}
    if config.hf_inputs:
        shapes["attention_mask"] = [1, total]
        shapes["position_ids"] = [1, seq]
    for i in range(config.n_layers):
        for name in ("key", "value"):
            shapes[f"past.{i}.{name}"] = kv[:2] + ["past"] + kv[3:]
            shapes[f"present.{i}.{name}"] = kv[:2] + [total] + kv[3:]
    for value in list(proto.graph.input) + list(proto.graph.output):
        if value.name not in shapes:
            continue
        shape = value.type.tensor_type.shape
        del shape.dim[:]
        for d in shapes[value.name]:
            dim = shape.dim.add()
            if isinstance(d, str):
                dim.dim_param = d
            else:
                dim.dim_value = d


def torch_export(model, config, graph, path, example, weights):
    """torch.onnx.export into ``path``; returns {weight input name: shape} for zeros."""
    names = input_names(config, graph)
    args = tuple(torch.from_numpy(example[n]) for n in names)
    if weights == "zeros":
        # Tracing runs the model, at a cost that grows with the token count:
        # trace one token (the graph is byte-identical for any length, its
        # sequence dim is dynamic; checked on tiny for lengths 1, 2, 3, 8).
        args = tuple(a[:, :1] if n in ("input_ids", "attention_mask", "position_ids")
                     and graph == "prefill" else a for n, a in zip(names, args))
    weight_inputs = {}
    ctx = _weights_kept_out(weight_inputs) if weights == "zeros" else contextlib.nullcontext()
    with ctx, torch.no_grad():
        torch.onnx.export(
            model, args, path,
            input_names=names, output_names=output_names(config),
            dynamic_axes=dynamic_axes(config, graph),
            opset_version=OPSET, do_constant_folding=True, export_params=True)
    return weight_inputs


def fold_weight_transposes(model, weights):
    """Replaces each Transpose of a weight input by a weight of the transposed dims.

    torch emits that pair for nn.Linear when it does not fold constants; the
    data is zero, so the transposed initializer is only a new shape (named as
    the Transpose's output, so its consumers are unchanged).  torch_export
    folds constants, so there is usually nothing to replace: this keeps the
    structure right for a graph exported without folding.  ``weights``
    (name -> shape) is updated in place; weights nothing reads any more are
    dropped.
    """
    g = model.graph
    kept = []
    for node in g.node:
        if node.op_type == "Transpose" and node.input[0] in weights:
            shape = weights[node.input[0]]
            perm = next((list(a.ints) for a in node.attribute if a.name == "perm"),
                        list(reversed(range(len(shape)))))
            weights[node.output[0]] = tuple(shape[p] for p in perm)
        else:
            kept.append(node)
    if len(kept) == len(g.node):
        return
    del g.node[:]
    g.node.extend(kept)
    used = {name for node in g.node for name in node.input} | {o.name for o in g.output}
    unused = [n for n in weights if n not in used]
    for name in unused:
        del weights[name]
    inputs = [i for i in g.input if i.name not in unused]
    del g.input[:]
    g.input.extend(inputs)


def attach_zero_weights(model, weights, data_name, data_path, external):
    """Turns the weight inputs into float32 zero initializers.

    external: in one sparse file of zeros (``data_name`` next to the graph),
    offsets aligned to ALIGN; otherwise inline raw zeros (small models only).
    Returns {name: byte offset in the data file} (empty when not external).
    """
    g = model.graph
    kept_inputs = [i for i in g.input if i.name not in weights]
    del g.input[:]
    g.input.extend(kept_inputs)
    offset, offsets = 0, {}
    for name, shape in weights.items():
        nbytes = 4 * int(np.prod(shape, dtype=np.int64))
        t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=list(shape))
        if external:
            offset = (offset + ALIGN - 1) // ALIGN * ALIGN
            offsets[name] = offset
            t.data_location = TensorProto.EXTERNAL
            for k, v in (("location", data_name), ("offset", str(offset)),
                         ("length", str(nbytes))):
                e = t.external_data.add()
                e.key, e.value = k, v
            offset += nbytes
        else:
            t.raw_data = bytes(nbytes)
        g.initializer.append(t)
    if external:
        _remove(data_path)
        with open(data_path, "wb") as f:
            f.truncate(offset)
    return offsets


def fill_random_weights(weights, offsets, data_path, seed):
    """Writes random values over the zero weights of the external data file
    (``offsets``: attach_zero_weights's).

    One tensor at a time and in chunks, so a model of any size fits in
    memory: normal(0, 0.02) for matrices and biases, 1 + 0.1 * normal for the
    RMSNorm weights, each tensor from its own generator seeded by
    ``seed`` and its index.
    """
    chunk = 1 << 24
    with open(data_path, "r+b") as f:
        for index, (name, shape) in enumerate(weights.items()):
            rng = np.random.default_rng([seed, index])
            count = int(np.prod(shape, dtype=np.int64))
            f.seek(offsets[name])
            for start in range(0, count, chunk):
                values = rng.standard_normal(min(chunk, count - start), dtype=np.float32)
                norm = len(shape) == 1 and not name.endswith("bias")
                values = 1 + 0.1 * values if norm else 0.02 * values
                f.write(values.astype("<f4").tobytes())


def _np_dtype(onnx_type):
    if hasattr(helper, "tensor_dtype_to_np_dtype"):        # onnx >= 1.13
        return np.dtype(helper.tensor_dtype_to_np_dtype(onnx_type))
    from onnx import mapping
    return np.dtype(mapping.TENSOR_TYPE_TO_NP_TYPE[onnx_type])


def initializer_bytes(model):
    total = 0
    for t in model.graph.initializer:
        n = int(np.prod(t.dims, dtype=np.int64))
        total += n * _np_dtype(t.data_type).itemsize
    return total


def export_graph(model, config, graph, out_dir, example, weights, external_data,
                 seed=0):
    """weights: random, zeros, or streamed (random values written over the
    zeros export's data file, for models too big to hold in memory)."""
    path = os.path.join(out_dir, f"{graph}.onnx")
    data_name = f"{graph}.onnx.data"
    data_path = os.path.join(out_dir, data_name)
    _remove(data_path)
    traced = "zeros" if weights == "streamed" else weights
    weight_inputs = torch_export(model, config, graph, path, example, traced)
    proto = onnx.load(path)
    set_io_shapes(proto, config, graph)
    if traced == "zeros":
        fold_weight_transposes(proto, weight_inputs)
        nbytes = sum(4 * int(np.prod(s, dtype=np.int64)) for s in weight_inputs.values())
        external = weights == "streamed" or external_data == "always" or (
            external_data == "auto" and nbytes + initializer_bytes(proto) > EXTERNAL_AUTO_BYTES)
        if not external and nbytes > ZEROS_AUTO_BYTES:
            raise SystemExit("error: --external-data never needs weights under 2 GB")
        offsets = attach_zero_weights(proto, weight_inputs, data_name, data_path,
                                      external)
        if weights == "streamed":
            fill_random_weights(weight_inputs, offsets, data_path, seed)
        with open(path, "wb") as f:
            f.write(proto.SerializeToString())
    else:
        nbytes = initializer_bytes(proto)
        external = external_data == "always" or (
            external_data == "auto" and nbytes > EXTERNAL_AUTO_BYTES)
        if external:
            onnx.save_model(proto, path, save_as_external_data=True,
                            all_tensors_to_one_file=True, location=data_name,
                            size_threshold=1024)
        else:
            onnx.save_model(proto, path)
    onnx.checker.check_model(path)
    return path, external


# ----------------------------------------------------------------- checks ---

def op_histogram(model):
    """{group: Counter(op_type)}; group is 'layer N' from torch's scoped node names.

    Some Constant nodes carry no scope; they count in their first consumer's group.
    """
    def group_of(node):
        m = re.search(r"layers\.(\d+)/", node.name)
        return f"layer {m.group(1)}" if m else None

    consumer_group = {}
    for node in reversed(model.graph.node):
        g = group_of(node)
        for name in node.input:
            if g or name not in consumer_group:
                consumer_group[name] = g or consumer_group.get(name)
    groups = collections.defaultdict(collections.Counter)
    for node in model.graph.node:
        g = group_of(node)
        if g is None and node.op_type == "Constant":
            g = consumer_group.get(node.output[0])
        groups[g or "outside layers"][node.op_type] += 1
    return groups


def format_counter(c):
    return ", ".join(f"{k} {v}" for k, v in sorted(c.items()))


def structure_summary(proto, config, graph, seed, prefill_len, past_len):
    """Prints the op types per layer and compares them with a small real-weight export.

    torch's common-subexpression pass lets layers 1.. reuse RoPE's unsqueezed
    cos/sin from layer 0, so layer 0 has two more ops than the others; layers
    1.. must all be alike.  The reference is the same config shrunk (head_dim
    8 or 4, ffn 24, vocab 64, 2 layers) with random weights: its layer 0,
    layer 1 and the ops outside the layers must have the same op types as
    this graph's layer 0, layers 1.. and outside.
    """
    import tempfile
    hist = op_histogram(proto)
    layers = [hist[f"layer {i}"] for i in range(config.n_layers)]
    same = all(layer == layers[-1] for layer in layers[1:])
    print(f"  {graph}: {len(proto.graph.node)} nodes; op types of layer 0: "
          f"{format_counter(layers[0])}")
    if config.n_layers > 1:
        print(f"  {graph}: layers 1..{config.n_layers - 1} "
              f"{'all' if same else 'DO NOT all'} have: {format_counter(layers[-1])}")
    print(f"  {graph}: outside the layers: {format_counter(hist['outside layers'])}")

    small = LlamaConfig(dim=(8 if config.n_heads <= 8 else 4) * config.n_heads,
                        n_layers=2, n_heads=config.n_heads, n_kv_heads=config.n_kv_heads,
                        ffn_dim=24, vocab_size=64, rms_eps=config.rms_eps,
                        rope_theta=config.rope_theta, rope_style=config.rope_style,
                        tie_word_embeddings=config.tie_word_embeddings,
                        qkv_bias=config.qkv_bias, hf_inputs=config.hf_inputs,
                        fused_projections=config.fused_projections,
                        logits_to_keep=config.logits_to_keep)
    with tempfile.TemporaryDirectory() as tmp:
        ref_model = build_model(small, "random", seed)
        example = make_inputs(small, graph, seed, prefill_len, past_len)
        path, _ = export_graph(ref_model, small, graph, tmp, example, "random", "never")
        ref = op_histogram(onnx.load(path))
    ok = (same and ref["layer 0"] == layers[0] and ref["outside layers"] == hist["outside layers"]
          and (config.n_layers == 1 or ref["layer 1"] == layers[-1]))
    print(f"  {graph}: op types {'match' if ok else 'DIFFER FROM'} a small real-weight "
          f"export of the same kind (2 layers, random weights, constant folding)")
    if not ok:
        for k in ("layer 0", "layer 1", "outside layers"):
            print(f"    reference {k}: {format_counter(ref[k])}")
    return ok


def save_npz(path, arrays):
    np.savez(path, **arrays)


def verify(model, config, graph, out_dir, example):
    names = input_names(config, graph)
    with torch.no_grad():
        outs = model(*(torch.from_numpy(example[n]) for n in names))
    torch_out = {n: t.numpy() for n, t in zip(output_names(config), outs)}
    torch_path = os.path.join(out_dir, f"torch_{graph}.npz")
    ort_path = os.path.join(out_dir, f"ort_{graph}.npz")
    save_npz(torch_path, torch_out)
    if not os.path.isdir(os.path.join(os.path.dirname(RUN_ORT), "node_modules")):
        raise SystemExit(f"error: ONNX Runtime is not installed: run 'npm install "
                         f"--ignore-scripts' in {os.path.dirname(RUN_ORT)}")
    r = subprocess.run(["node", RUN_ORT, os.path.join(out_dir, f"{graph}.onnx"),
                        os.path.join(out_dir, f"inputs_{graph}.npz"), ort_path],
                       capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"error: run_ort.mjs failed: {r.stderr.strip()}")
    ort = np.load(ort_path)
    worst, worst_name = 0.0, None
    for name, ref in torch_out.items():
        got = ort[name]
        if got.shape != ref.shape:
            raise SystemExit(f"error: {graph}: {name}: ORT shape {got.shape}, torch {ref.shape}")
        diff = float(np.max(np.abs(got - ref))) if ref.size else 0.0
        if diff > worst or worst_name is None:
            worst, worst_name = diff, name
    logits_diff = float(np.max(np.abs(ort["logits"] - torch_out["logits"])))
    ok = worst < TOLERANCE
    print(f"  verify {graph}: ORT vs torch max |diff| logits {logits_diff:.3g}, "
          f"all outputs {worst:.3g} ({worst_name}), logits max |value| "
          f"{float(np.max(np.abs(torch_out['logits']))):.3g}: {'ok' if ok else 'FAIL'}")
    return ok


# ------------------------------------------------------------------- main ---

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("config", help=f"one of {', '.join(CONFIGS)} or a JSON file")
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--prefill-len", type=int, default=8)
    ap.add_argument("--past-len", type=int, default=8)
    ap.add_argument("--external-data", choices=["auto", "always", "never"], default="auto")
    ap.add_argument("--weights", choices=["random", "zeros"],
                    help="default: zeros for models over 2 GB, else random")
    ap.add_argument("--graphs", default="prefill,decode",
                    help="comma-separated subset of prefill,decode,merged "
                         "(merged needs --hf-inputs)")
    ap.add_argument("--hf-inputs", action="store_true",
                    help="the graphs also take attention_mask and position_ids "
                         "(int64), as Hugging Face's exports do")
    ap.add_argument("--verify", action="store_true",
                    help="run torch and ONNX Runtime on the inputs and compare")
    args = ap.parse_args(argv)

    config = load_config(args.config)
    if args.hf_inputs:
        config = replace(config, hf_inputs=True)
    graphs = [g for g in args.graphs.split(",") if g]
    if not graphs or any(g not in GRAPHS for g in graphs):
        ap.error("--graphs takes a comma-separated subset of prefill,decode,merged")
    if "merged" in graphs and not config.hf_inputs:
        ap.error("--graphs merged needs --hf-inputs: its causal mask comes from "
                 "attention_mask, as in Hugging Face's exports with a cache")
    if args.prefill_len < 1 or args.past_len < 1:
        ap.error("--prefill-len and --past-len must be at least 1")
    weight_bytes = 4 * config.n_params()
    weights = args.weights or ("zeros" if weight_bytes > ZEROS_AUTO_BYTES else "random")
    if weights == "random" and weight_bytes > ZEROS_AUTO_BYTES:
        # Too big for a torch module: trace the zeros module and write the
        # random values into the data file tensor by tensor.
        weights = "streamed"
    if args.verify and weights != "random":
        ap.error("--verify needs --weights random on a model under "
                 f"{ZEROS_AUTO_BYTES >> 30} GB (it runs the torch module)")
    os.makedirs(args.out_dir, exist_ok=True)

    print(f"config {args.config}: {json.dumps(asdict(config))}")
    print(f"  {config.n_params():,} parameters ({weight_bytes / 2**20:.1f} MiB), "
          f"weights {weights}, seed {args.seed}")
    t0 = time.time()
    model = build_model(config, "zeros" if weights == "streamed" else weights,
                        args.seed)
    print(f"  built the torch module in {time.time() - t0:.2f} s")

    ok = True
    for graph in graphs:
        example = make_inputs(config, graph, args.seed, args.prefill_len, args.past_len)
        save_npz(os.path.join(args.out_dir, f"inputs_{graph}.npz"), example)
        t0 = time.time()
        path, external = export_graph(model, config, graph, args.out_dir, example,
                                      weights, args.external_data, args.seed)
        elapsed = time.time() - t0
        sizes = [path] + ([path + ".data"] if external else [])
        apparent = sum(os.path.getsize(p) for p in sizes)
        on_disk = sum(os.stat(p).st_blocks * 512 for p in sizes)
        print(f"  {graph}: exported {path} in {elapsed:.1f} s; "
              f"{apparent / 2**20:.1f} MiB apparent, {on_disk / 2**20:.1f} MiB on disk"
              f"{' (external data ' + os.path.basename(path) + '.data)' if external else ''}")
        proto = onnx.load(path, load_external_data=False)
        ok &= structure_summary(proto, config, graph, args.seed, args.prefill_len,
                                args.past_len)
        if args.verify:
            ok &= verify(model, config, graph, args.out_dir, example)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
