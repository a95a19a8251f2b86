"""wafer-translate --tokenize with a checkpoint's tokenizer against
python3-sentencepiece.

    check_checkpoint_tokenizer.py WAFER_TRANSLATE SPM.model TOKENIZER...

For each TOKENIZER (a GGUF file holding SPM.model's vocabulary, a
checkpoint directory with tokenizer.model, the .model itself) and each
prompt below, the ids must be sentencepiece's (BOS first, as llama.cpp and
wafer add it) and --detokenize must give the prompt back (sentencepiece's
own decoding of the ids).
"""
import subprocess
import sys

import sentencepiece

PROMPTS = ["Hello world", " leading space", "   three spaces  inside   ",
           "Café naïve – 東京 🙂", "tabs\tand\nnewlines", "x" * 50, "",
           "bytes \u00b5\u00df\u0416 \U0001F680 done"]


def run(tool, *args):
    return subprocess.run([tool, *args], check=True, capture_output=True,
                          text=True).stdout.rstrip("\n")


def main():
    tool, model, tokenizers = sys.argv[1], sys.argv[2], sys.argv[3:]
    sp = sentencepiece.SentencePieceProcessor(model_file=model)
    for tokenizer in tokenizers:
        for prompt in PROMPTS:
            want = [sp.bos_id()] + sp.encode(prompt)
            got = run(tool, "--tokenize", "--tokenizer", tokenizer,
                      "--prompt", prompt)
            got = [int(t) for t in got.split(",")] if got else []
            if got != want:
                sys.exit(f"{tokenizer}: {prompt!r}: {got} != sentencepiece's {want}")
            text = run(tool, "--detokenize", "--tokenizer", tokenizer,
                       "--tokens", ",".join(map(str, want)))
            if text != sp.decode(want).rstrip("\n"):
                sys.exit(f"{tokenizer}: {prompt!r} decodes to {text!r}, "
                         f"sentencepiece's {sp.decode(want)!r}")
        print(f"{tokenizer}: {len(PROMPTS)} prompts as sentencepiece")


if __name__ == "__main__":
    main()
