#!/usr/bin/env python3
"""Writes the checkpoints CheckpointTest.cpp reads, in one process.

    make_checkpoints.py OUT_DIR

For the tiny config (seed 0): tiny_<dtype>.gguf for f32, f16, bf16, q8_0 and
q4_0 with the numpy read-back tiny_<dtype>.npz; hf/ (f32, one file) and hf3/
(bf16, three shards) with hf.npz / hf3.npz; vocab.gguf with a SentencePiece
vocabulary trained here (spm.model, its pieces in spm_pieces.txt); a tied
one-layer model as tied.gguf and tied_hf/.
"""
import os
import random
import sys

import numpy as np
import sentencepiece

from wafer import checkpoints as ck
from wafer.export_llama import CONFIGS, LlamaConfig


def main(out):
    os.makedirs(out, exist_ok=True)
    tiny = CONFIGS["tiny"]
    hf = ck.hf_weights(tiny, 0)
    gguf = ck.gguf_weights(tiny, hf)
    for dtype in ("f32", "f16", "bf16", "q8_0", "q4_0"):
        path = os.path.join(out, f"tiny_{dtype}.gguf")
        ck.write_gguf(path, tiny, gguf, dtype)
        np.savez(os.path.join(out, f"tiny_{dtype}.npz"), **ck.read_gguf(path)[1])
    for name, dtype, shards in (("hf", "f32", 1), ("hf3", "bf16", 3)):
        files = ck.write_hf(os.path.join(out, name), tiny, hf, dtype, shards)
        ref = {}
        for f in files:
            ref.update(ck.read_safetensors(os.path.join(out, name, f)))
        np.savez(os.path.join(out, f"{name}.npz"), **ref)

    # A 256-piece BPE vocabulary from made-up words (deterministic).
    rng = random.Random(0)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 7)))
             for _ in range(400)]
    text = os.path.join(out, "spm.txt")
    with open(text, "w") as f:
        for _ in range(2000):
            f.write(" ".join(rng.choice(words) for _ in range(12)) + "\n")
    sentencepiece.SentencePieceTrainer.train(
        input=text, model_prefix=os.path.join(out, "spm"), vocab_size=tiny.vocab_size,
        model_type="bpe", minloglevel=2)
    model = os.path.join(out, "spm.model")
    vocab = ck.spm_vocab(model, tiny.vocab_size)
    with open(os.path.join(out, "spm_pieces.txt"), "w") as f:
        for piece, score, kind in zip(*vocab):
            f.write(f"{piece}\t{score!r}\t{kind}\n")
    ck.write_gguf(os.path.join(out, "vocab.gguf"), tiny, gguf, "f32", vocab, alignment=64)

    tied = LlamaConfig(dim=64, n_layers=1, n_heads=4, n_kv_heads=4, ffn_dim=128,
                       vocab_size=256, tie_word_embeddings=True)
    tied_hf = ck.hf_weights(tied, 1)
    ck.write_gguf(os.path.join(out, "tied.gguf"), tied, ck.gguf_weights(tied, tied_hf))
    ck.write_hf(os.path.join(out, "tied_hf"), tied, tied_hf)


if __name__ == "__main__":
    main(sys.argv[1])
