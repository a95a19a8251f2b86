#!/usr/bin/env python3
"""Writes the exporter's torch LLaMA as a GGUF file or a Hugging Face checkpoint.

Run with Debian's Python (torch, numpy; sentencepiece for a vocabulary):

    /usr/bin/python3 -m wafer.checkpoints --config tiny --format gguf \\
        --out model.gguf [--dtype f32|f16|bf16|q8_0|q4_0] [--seed 0]
        [--tokenizer spm.model] [--alignment 32] [--reference ref.npz]
    /usr/bin/python3 -m wafer.checkpoints --config tiny --format safetensors \\
        --out DIR [--dtype f32|f16|bf16] [--shards N] [--reference ref.npz]
        [--tokenizer spm.model]
    (either format) [--onnx-dir DIR]: also the exporter's prefill.onnx and
        decode.onnx holding the checkpoint's weights as stored
    (either format) [--train TEXT --train-steps 200]: train the model on the
        text first (needs --tokenizer), so that it generates text

The weights are those of ``export_llama.build_model(config, "random", seed)``,
so a checkpoint and the exporter's ONNX graphs of the same config and seed
hold the same model.

GGUF (v3, written with ``struct``: no ``gguf`` package here) follows
llama.cpp's converter: tensor names ``token_embd``, ``blk.N.attn_q`` ...,
dims innermost first, the q and k rows permuted from Hugging Face's
rotate-half order to Meta's adjacent pairs, norms in F32, and 2-D weights in
``--dtype`` (a quantised type falls back to F16 for rows that are not a
multiple of 32, as ``ffn_down`` of the tiny config). With ``--tokenizer`` the
SentencePiece model's pieces, scores and types become
``tokenizer.ggml.tokens/scores/token_type`` (model "llama").

safetensors: ``model.safetensors`` or ``--shards N`` files
``model-0000i-of-0000N.safetensors`` with ``model.safetensors.index.json``,
plus ``config.json``, Hugging Face names and row order; ``--tokenizer``
is copied in as ``tokenizer.model``.

``--reference`` reads the written checkpoint back with this module's own
numpy readers (dequantising Q8_0 / Q4_0 blocks) and saves every tensor,
row-major, keyed by its stored name: the reference the C++ readers are
tested against.
"""

import argparse
import json
import os
import shutil
import struct
import sys

import numpy as np

# GGUF metadata value types and ggml tensor types (the formats' numbers).
U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
GGML_F32, GGML_F16, GGML_Q4_0, GGML_Q8_0, GGML_BF16 = 0, 1, 2, 8, 30
GGML_TYPES = {"f32": GGML_F32, "f16": GGML_F16, "q4_0": GGML_Q4_0,
              "q8_0": GGML_Q8_0, "bf16": GGML_BF16}
QK = 32   # values per Q8_0 / Q4_0 block

_SCALAR = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i",
           F32: "<f", BOOL: "<?", U64: "<Q", I64: "<q", F64: "<d"}

GGUF_ROLES = [  # (Hugging Face name within a layer, GGUF name)
    ("input_layernorm", "attn_norm"), ("self_attn.q_proj", "attn_q"),
    ("self_attn.k_proj", "attn_k"), ("self_attn.v_proj", "attn_v"),
    ("self_attn.o_proj", "attn_output"), ("post_attention_layernorm", "ffn_norm"),
    ("mlp.gate_proj", "ffn_gate"), ("mlp.up_proj", "ffn_up"),
    ("mlp.down_proj", "ffn_down")]


# ----------------------------------------------------------- weights ---

def train(model, tokenizer, text_path, steps, seed):
    """Next-token training of `model` on the text (AdamW, 8 windows of 64
    tokens per step), so that generation shows text rather than noise."""
    import sentencepiece
    import torch
    sp = sentencepiece.SentencePieceProcessor(model_file=tokenizer)
    ids = []
    with open(text_path, encoding="utf-8") as f:
        for line in f:
            ids += [sp.bos_id()] + sp.encode(line.rstrip("\n")) + [sp.eos_id()]
    data = torch.tensor(ids)
    seq, batch = 64, 8
    if len(ids) <= seq + 1:
        raise SystemExit(f"error: {text_path}: too little text to train on")
    torch.manual_seed(seed)
    model.train()
    for p in model.parameters():
        p.requires_grad_(True)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
    for step in range(steps):
        starts = torch.randint(0, len(ids) - seq - 1, (batch,))
        x = torch.stack([data[i:i + seq] for i in starts])
        y = torch.stack([data[i + 1:i + seq + 1] for i in starts])
        logits = model(x)[0]
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    print(f"trained {steps} steps on {len(ids)} tokens: loss {float(loss):.3f}")


def hf_weights(config, seed, train_on=None):
    """Hugging Face name -> float32 array of the exporter's model (trained on
    `train_on` = (tokenizer, text, steps) when given)."""
    from wafer.export_llama import build_model
    model = build_model(config, "random", seed)
    if train_on:
        train(model, *train_on, seed)
    out = {}
    for name, p in model.named_parameters():   # tied weights appear once
        out[name] = p.detach().numpy().astype(np.float32)
    return out


def permute_pairs(w, n_head):
    """llama.cpp's permute: rotate-half rows -> adjacent-pair rows per head."""
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def gguf_weights(config, hf):
    """GGUF name -> array, q/k rows in pair order (as convert_hf_to_gguf.py)."""
    out = {"token_embd.weight": hf["model.embed_tokens.weight"]}
    for i in range(config.n_layers):
        for hf_role, role in GGUF_ROLES:
            w = hf[f"model.layers.{i}.{hf_role}.weight"]
            if role == "attn_q":
                w = permute_pairs(w, config.n_heads)
            elif role == "attn_k":
                w = permute_pairs(w, config.n_kv_heads)
            out[f"blk.{i}.{role}.weight"] = w
    out["output_norm.weight"] = hf["model.norm.weight"]
    if "lm_head.weight" in hf:
        out["output.weight"] = hf["lm_head.weight"]
    return out


# ------------------------------------------------------------ encodings ---

def to_bf16_bits(x):
    """float32 -> bfloat16 bits, round to nearest even (as torch)."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = bits + 0x7FFF + ((bits >> 16) & 1)
    return (rounded >> 16).astype(np.uint16)


def quantize_q8_0(x):
    """ggml's quantize_row_q8_0_ref: d = amax / 127, q = round(x / d)."""
    blocks = x.astype(np.float32).reshape(-1, QK)
    d = np.abs(blocks).max(axis=1) / 127.0
    inv = np.divide(1.0, d, out=np.zeros_like(d), where=d != 0)
    q = np.round(blocks * inv[:, None]).astype(np.int8)   # |q| <= 127
    out = np.zeros((len(blocks), 34), np.uint8)
    out[:, 0:2] = d.astype(np.float16).view(np.uint8).reshape(-1, 2)
    out[:, 2:] = q.view(np.uint8)
    return out.tobytes()


def quantize_q4_0(x):
    """ggml's quantize_row_q4_0_ref: d = max / -8 (max by magnitude, signed)."""
    blocks = x.astype(np.float32).reshape(-1, QK)
    idx = np.abs(blocks).argmax(axis=1)
    mx = blocks[np.arange(len(blocks)), idx]
    d = mx / -8.0
    inv = np.divide(1.0, d, out=np.zeros_like(d), where=d != 0)
    q = np.minimum(15, (blocks * inv[:, None] + 8.5).astype(np.int8)).astype(np.uint8)
    out = np.zeros((len(blocks), 18), np.uint8)
    out[:, 0:2] = d.astype(np.float16).view(np.uint8).reshape(-1, 2)
    out[:, 2:] = q[:, :16] | (q[:, 16:] << 4)
    return out.tobytes()


def encode(x, ggml_type):
    if ggml_type == GGML_F32:
        return x.astype("<f4").tobytes()
    if ggml_type == GGML_F16:
        return x.astype("<f2").tobytes()
    if ggml_type == GGML_BF16:
        return to_bf16_bits(x).astype("<u2").tobytes()
    if ggml_type == GGML_Q8_0:
        return quantize_q8_0(x)
    return quantize_q4_0(x)


def dequantize(raw, ggml_type, shape):
    """Independent numpy decoding of ggml's block formats (the test reference)."""
    n = int(np.prod(shape))
    if ggml_type == GGML_F32:
        v = np.frombuffer(raw, "<f4", n)
    elif ggml_type == GGML_F16:
        v = np.frombuffer(raw, "<f2", n).astype(np.float32)
    elif ggml_type == GGML_BF16:
        v = (np.frombuffer(raw, "<u2", n).astype(np.uint32) << 16).view(np.float32)
    elif ggml_type == GGML_Q8_0:
        b = np.frombuffer(raw, np.uint8, n // QK * 34).reshape(-1, 34)
        d = b[:, :2].copy().view("<f2").astype(np.float32)
        v = d * b[:, 2:].view(np.int8).astype(np.float32)
    elif ggml_type == GGML_Q4_0:
        b = np.frombuffer(raw, np.uint8, n // QK * 18).reshape(-1, 18)
        d = b[:, :2].copy().view("<f2").astype(np.float32)
        qs = b[:, 2:]
        q = np.concatenate([qs & 0xF, qs >> 4], axis=1).astype(np.float32) - 8
        v = d * q
    else:
        raise ValueError(f"ggml type {ggml_type} is not supported")
    return np.asarray(v, np.float32).reshape(shape)


# ----------------------------------------------------------------- GGUF ---

def _gguf_string(s):
    b = s.encode("utf-8") if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def _gguf_value(vtype, value):
    if vtype == STRING:
        return _gguf_string(value)
    if vtype == ARRAY:
        etype, items = value
        body = b"".join(_gguf_value(etype, v) for v in items)
        return struct.pack("<IQ", etype, len(items)) + body
    return struct.pack(_SCALAR[vtype], value)


def gguf_metadata(config, vocab, alignment):
    """(key, type, value) triples as llama.cpp writes them for a llama."""
    meta = [("general.architecture", STRING, "llama"),
            ("general.name", STRING, "wafer-export"),
            ("llama.context_length", U32, 2048),
            ("llama.embedding_length", U32, config.dim),
            ("llama.block_count", U32, config.n_layers),
            ("llama.feed_forward_length", U32, config.ffn_dim),
            ("llama.rope.dimension_count", U32, config.head_dim),
            ("llama.attention.head_count", U32, config.n_heads),
            ("llama.attention.head_count_kv", U32, config.n_kv_heads),
            ("llama.attention.layer_norm_rms_epsilon", F32, config.rms_eps),
            ("llama.rope.freq_base", F32, config.rope_theta),
            ("llama.vocab_size", U32, config.vocab_size)]
    if alignment != 32:
        meta.append(("general.alignment", U32, alignment))
    if vocab is not None:
        tokens, scores, types = vocab
        meta += [("tokenizer.ggml.model", STRING, "llama"),
                 ("tokenizer.ggml.tokens", ARRAY, (STRING, tokens)),
                 ("tokenizer.ggml.scores", ARRAY, (F32, scores)),
                 ("tokenizer.ggml.token_type", ARRAY, (I32, types))]
    meta += [("tokenizer.ggml.bos_token_id", U32, 1),
             ("tokenizer.ggml.eos_token_id", U32, 2)]
    return meta


def spm_vocab(path, vocab_size):
    """Pieces, scores and llama.cpp token types of a SentencePiece model."""
    import sentencepiece
    sp = sentencepiece.SentencePieceProcessor(model_file=path)
    if sp.get_piece_size() != vocab_size:
        raise SystemExit(f"error: {path}: {sp.get_piece_size()} pieces, but the "
                         f"config's vocab_size is {vocab_size}")
    tokens, scores, types = [], [], []
    for i in range(vocab_size):
        tokens.append(sp.id_to_piece(i))
        scores.append(sp.get_score(i))
        # llama.cpp: 1 normal, 2 unknown, 3 control, 5 unused, 6 byte.
        types.append(2 if sp.is_unknown(i) else 3 if sp.is_control(i) else
                     5 if sp.is_unused(i) else 6 if sp.is_byte(i) else 1)
    return tokens, scores, types


def write_gguf(path, config, tensors, dtype="f32", vocab=None, alignment=32):
    """tensors: GGUF name -> row-major float32 array."""
    write_gguf_tensors(path, gguf_metadata(config, vocab, alignment), tensors,
                       dtype, alignment)


def write_gguf_tensors(path, meta, tensors, dtype="f32", alignment=32):
    """Any GGUF: (key, type, value) metadata and name -> array tensors; 2-D
    ones in `dtype`, the others F32."""
    infos, blobs, offset = [], [], 0
    for name, w in tensors.items():
        t = GGML_TYPES[dtype] if w.ndim == 2 else GGML_F32
        if t in (GGML_Q8_0, GGML_Q4_0) and w.shape[-1] % QK:
            t = GGML_F16
        raw = encode(w, t)
        infos.append(_gguf_string(name) + struct.pack("<I", w.ndim)
                     + b"".join(struct.pack("<Q", d) for d in reversed(w.shape))
                     + struct.pack("<IQ", t, offset))
        pad = -len(raw) % alignment
        blobs.append(raw + b"\0" * pad)
        offset += len(raw) + pad
    head = (b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(meta))
            + b"".join(_gguf_string(k) + struct.pack("<I", t) + _gguf_value(t, v)
                       for k, t, v in meta)
            + b"".join(infos))
    head += b"\0" * (-len(head) % alignment)
    with open(path, "wb") as f:
        f.write(head)
        for blob in blobs:
            f.write(blob)


def read_gguf(path):
    """(metadata dict, {name: float32 row-major array}) with numpy only."""
    data = open(path, "rb").read()
    pos = 0

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from(fmt, data, pos)
        pos += struct.calcsize(fmt)
        return v[0]

    def string():
        nonlocal pos
        n = take("<Q")
        pos += n
        return data[pos - n:pos].decode("utf-8", "replace")

    def value(t):
        if t == STRING:
            return string()
        if t == ARRAY:
            et, n = take("<I"), take("<Q")
            return [value(et) for _ in range(n)]
        return take(_SCALAR[t])

    assert data[:4] == b"GGUF"
    pos = 4
    _version, n_tensors, n_kv = take("<I"), take("<Q"), take("<Q")
    meta = {}
    for _ in range(n_kv):
        key = string()
        meta[key] = value(take("<I"))
    infos = []
    for _ in range(n_tensors):
        name = string()
        dims = [take("<Q") for _ in range(take("<I"))]
        infos.append((name, tuple(reversed(dims)), take("<I"), take("<Q")))
    align = meta.get("general.alignment", 32)
    start = pos + (-pos % align)
    tensors = {name: dequantize(data[start + off:], t, shape)
               for name, shape, t, off in infos}
    return meta, tensors


# ---------------------------------------------------------- safetensors ---

ST_DTYPES = {"f32": "F32", "f16": "F16", "bf16": "BF16"}


def write_safetensors(path, tensors, dtype="f32"):
    header, blobs, offset = {}, [], 0
    for name, w in tensors.items():
        raw = encode(w, {"f32": GGML_F32, "f16": GGML_F16, "bf16": GGML_BF16}[dtype])
        header[name] = {"dtype": ST_DTYPES[dtype], "shape": list(w.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)   # the data starts 8-aligned, as upstream
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for blob in blobs:
            f.write(blob)


def read_safetensors(path):
    data = open(path, "rb").read()
    n = struct.unpack_from("<Q", data)[0]
    header = json.loads(data[8:8 + n])
    kinds = {"F32": GGML_F32, "F16": GGML_F16, "BF16": GGML_BF16}
    return {name: dequantize(data[8 + n + e["data_offsets"][0]:], kinds[e["dtype"]],
                             tuple(e["shape"]))
            for name, e in header.items() if name != "__metadata__"}


def hf_config(config):
    return {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
            "hidden_size": config.dim, "num_hidden_layers": config.n_layers,
            "num_attention_heads": config.n_heads,
            "num_key_value_heads": config.n_kv_heads,
            "intermediate_size": config.ffn_dim, "vocab_size": config.vocab_size,
            "rms_norm_eps": config.rms_eps, "rope_theta": config.rope_theta,
            "rope_scaling": None, "tie_word_embeddings": config.tie_word_embeddings,
            "max_position_embeddings": 2048, "bos_token_id": 1, "eos_token_id": 2,
            "hidden_act": "silu", "torch_dtype": "float32"}


def write_hf(out_dir, config, hf, dtype="f32", shards=1):
    """config.json and one or `shards` safetensors files; the file names."""
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(hf_config(config), f, indent=2)
    if shards <= 1:
        write_safetensors(os.path.join(out_dir, "model.safetensors"), hf, dtype)
        return ["model.safetensors"]
    names = list(hf)
    groups = np.array_split(np.arange(len(names)), shards)
    files, weight_map = [], {}
    for i, group in enumerate(groups):
        file = f"model-{i + 1:05d}-of-{shards:05d}.safetensors"
        part = {names[j]: hf[names[j]] for j in group}
        write_safetensors(os.path.join(out_dir, file), part, dtype)
        weight_map.update({n: file for n in part})
        files.append(file)
    total = sum(w.size * (4 if dtype == "f32" else 2) for w in hf.values())
    with open(os.path.join(out_dir, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": int(total)}, "weight_map": weight_map},
                  f, indent=2)
    return files


# ------------------------------------------------------------ ONNX twin ---

def unpermute_pairs(w, n_head):
    """The inverse of permute_pairs: adjacent-pair rows -> rotate-half rows."""
    return (w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def stored_as_hf(config, fmt, stored):
    """The checkpoint's tensors as read back (rounded to its dtype), by
    Hugging Face name with q/k rows in rotate-half order."""
    if fmt == "safetensors":
        return dict(stored)
    hf = {"model.embed_tokens.weight": stored["token_embd.weight"],
          "model.norm.weight": stored["output_norm.weight"]}
    if "output.weight" in stored:
        hf["lm_head.weight"] = stored["output.weight"]
    for i in range(config.n_layers):
        for hf_role, role in GGUF_ROLES:
            w = stored[f"blk.{i}.{role}.weight"]
            if role == "attn_q":
                w = unpermute_pairs(w, config.n_heads)
            elif role == "attn_k":
                w = unpermute_pairs(w, config.n_kv_heads)
            hf[f"model.layers.{i}.{hf_role}.weight"] = w
    return hf


def export_onnx_twin(config, seed, hf, out_dir):
    """The exporter's prefill.onnx and decode.onnx holding exactly the
    checkpoint's weights, so ONNX Runtime can run the same model."""
    import torch
    from wafer import export_llama as ex
    model = ex.build_model(config, "random", seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.from_numpy(np.array(hf[name], dtype=np.float32)))
    os.makedirs(out_dir, exist_ok=True)
    for graph in ("prefill", "decode"):
        example = ex.make_inputs(config, graph, seed, 8, 8)
        ex.export_graph(model, config, graph, out_dir, example, "random", "never")


# ------------------------------------------------------------------ main ---

def main(argv=None):
    from wafer.export_llama import CONFIGS, load_config
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", required=True,
                    help=f"one of {', '.join(CONFIGS)} or a JSON file")
    ap.add_argument("--format", required=True, choices=["gguf", "safetensors"])
    ap.add_argument("--out", required=True, help="a .gguf file or a directory")
    ap.add_argument("--dtype", default="f32", choices=list(GGML_TYPES))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shards", type=int, default=1)
    ap.add_argument("--alignment", type=int, default=32)
    ap.add_argument("--tokenizer", help="a SentencePiece .model: the GGUF vocabulary, "
                                        "or tokenizer.model of the safetensors directory")
    ap.add_argument("--reference", help="write the checkpoint's tensors, read back "
                                        "with numpy, to this .npz")
    ap.add_argument("--train", help="a text file: train the model on it (next-token "
                                     "prediction, tokenized with --tokenizer) first")
    ap.add_argument("--train-steps", type=int, default=200)
    ap.add_argument("--onnx-dir", help="also export the exporter's prefill.onnx "
                                       "and decode.onnx with the checkpoint's "
                                       "weights as stored (for ONNX Runtime)")
    args = ap.parse_args(argv)
    config = load_config(args.config)
    if args.format == "safetensors" and args.dtype not in ST_DTYPES:
        ap.error("safetensors takes --dtype f32, f16 or bf16")
    if args.shards < 1 or args.alignment < 1 or args.alignment & (args.alignment - 1):
        ap.error("--shards must be >= 1 and --alignment a power of two")
    if 4 * config.n_params() > (1 << 30):
        raise SystemExit(f"error: {args.config}: too large to write from random weights")
    if config.qkv_bias:
        # A LLaMA checkpoint has no biases: they would be dropped silently.
        raise SystemExit(f"error: {args.config}: q/k/v biases (qkv_bias) are "
                         "not part of a LLaMA checkpoint")
    if config.fused_projections:
        raise SystemExit(f"error: {args.config}: fused projections "
                         "(fused_projections) are not part of a LLaMA checkpoint")
    if args.train and not args.tokenizer:
        ap.error("--train needs --tokenizer")
    hf = hf_weights(config, args.seed,
                    (args.tokenizer, args.train, args.train_steps) if args.train else None)
    if args.format == "gguf":
        vocab = spm_vocab(args.tokenizer, config.vocab_size) if args.tokenizer else None
        write_gguf(args.out, config, gguf_weights(config, hf), args.dtype, vocab,
                   args.alignment)
        written = [args.out]
        stored = read_gguf(args.out)[1] if args.reference or args.onnx_dir else {}
    else:
        files = write_hf(args.out, config, hf, args.dtype, args.shards)
        written = [os.path.join(args.out, f) for f in files]
        if args.tokenizer:
            spm_vocab(args.tokenizer, config.vocab_size)   # checks the size
            shutil.copyfile(args.tokenizer, os.path.join(args.out, "tokenizer.model"))
        stored = {}
        if args.reference or args.onnx_dir:
            for f in written:
                stored.update(read_safetensors(f))
    if args.reference:
        np.savez(args.reference, **stored)
    if args.onnx_dir:
        export_onnx_twin(config, args.seed, stored_as_hf(config, args.format, stored),
                         args.onnx_dir)
    size = sum(os.path.getsize(f) for f in written)
    print(f"wrote {args.format} {args.dtype} ({len(written)} file"
          f"{'s' if len(written) > 1 else ''}, {size} bytes) to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
