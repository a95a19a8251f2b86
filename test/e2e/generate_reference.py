"""Inputs and the reference of test/e2e/generate.test.

    generate_reference.py corpus OUT.txt
        writes a few KB of text (deterministic) to train a vocabulary on
    generate_reference.py config VOCAB OUT.json
        writes a small LLaMA config with that vocabulary size
    generate_reference.py check OUT SPM.model ONNX_DIR PROMPT N
        OUT is `wafer-run generate --json` output: its prompt tokens must be
        python3-sentencepiece's encoding of PROMPT (BOS first, as llama.cpp
        adds it), and its generated tokens ONNX Runtime's greedy generation
        on the exporter's graphs in ONNX_DIR (test/reference/generate_ort.mjs)
        for N tokens or up to EOS.
"""
import json
import os
import random
import subprocess
import sys

WORDS = ("the wafer holds many small cores and each core keeps a slice of "
         "the model in its own memory while messages hop between neighbours "
         "tokens flow through layers of attention and feed forward blocks "
         "caches of keys and values grow as the story goes on").split()


def corpus(out):
    rng = random.Random(7)
    lines = []
    for _ in range(400):
        n = rng.randint(5, 14)
        sentence = " ".join(rng.choice(WORDS) for _ in range(n))
        lines.append(sentence.capitalize() + rng.choice([".", "!", "?", ","]))
    lines += ["Café naïve – 東京 🙂", "  leading spaces and\ttabs", "x" * 40]
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def config(vocab, out):
    with open(out, "w") as f:
        json.dump({"dim": 64, "n_layers": 2, "n_heads": 4, "n_kv_heads": 2,
                   "ffn_dim": 172, "vocab_size": vocab, "rms_eps": 1e-5}, f)


def check(out_path, spm_path, onnx_dir, prompt, count):
    import sentencepiece
    lines = open(out_path, encoding="utf-8").read().splitlines()
    if not lines or not lines[-1].startswith("{"):
        sys.exit(f"{out_path}: no JSON line at the end")
    result = json.loads(lines[-1])
    sp = sentencepiece.SentencePieceProcessor(model_file=spm_path)
    want_prompt = [sp.bos_id()] + sp.encode(prompt)
    if result["prompt_tokens"] != want_prompt:
        sys.exit(f"prompt tokens {result['prompt_tokens']} != sentencepiece's "
                 f"{want_prompt}")
    runner = os.path.join(os.path.dirname(__file__), "..", "reference",
                          "generate_ort.mjs")
    ort = subprocess.run(["node", runner, onnx_dir,
                          ",".join(map(str, want_prompt)), str(count),
                          str(sp.eos_id())],
                         check=True, capture_output=True, text=True)
    want = json.loads(ort.stdout)
    got = result["generated_tokens"]
    if got != want:
        sys.exit(f"generated {got}\n ONNX Runtime {want}")
    text = sp.decode(want)
    print(f"{len(got)} tokens equal ONNX Runtime's; text {text!r}")


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "corpus":
        corpus(sys.argv[2])
    elif cmd == "config":
        config(int(sys.argv[2]), sys.argv[3])
    else:
        check(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6]))
