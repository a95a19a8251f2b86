"""Makes the tokenizer unit tests' fixtures and their expected results.

Usage: tokenizer_fixtures.py OUT_DIR SPM_TRAIN

Writes into OUT_DIR:
  corpus.txt         a few KB of generated text (English, accents, CJK, emoji,
                     digits)
  spm.model          SentencePiece BPE trained on it by spm_train (byte
                     fallback, character coverage < 1, identity normalization
                     as LLaMA's, one user-defined symbol)
  spm_nobyte.model   the same without byte fallback (unknown tokens)
  llama3.json        a byte-level BPE tokenizer.json trained here, LLaMA 3
                     style (Split regex, ignore_merges, merges as pairs,
                     special tokens, BOS from the post-processor)
  gpt2.json          the same merges GPT-2 style (ByteLevel use_regex,
                     merges as "a b" strings, no BOS)
  cases.json         token ids and decoded text for tricky texts, from
                     python3-sentencepiece and the reference byte-level BPE
                     below (Python's regex module for the splits)
"""
import collections
import json
import os
import random
import subprocess
import sys

import regex
import sentencepiece

GPT2_SPLIT = (r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+"
              r"|\s+(?!\S)|\s+")
LLAMA3_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+"
                r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIALS = ["<|begin_of_text|>", "<|end_of_text|>"]
USER_DEFINED = ["<sep>"]

TEXTS = [
    "",
    "Hello world",
    "Hello",
    " leading space",
    "trailing space ",
    "  multiple   spaces  ",
    " ",
    "   ",
    "\n",
    "line one\nline two\n\nend",
    "tab\tseparated\tvalues",
    "café naïve résumé über straße",
    "Ångström crème brûlée façade",
    "你好世界",
    "東京 こんにちは 한국어 日本語",
    "emoji 🙂🚀👍🏽 ❤️ 🎉",
    "digits 1234567890 and 3.14159, 42!",
    "rare: 龘 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 Ωμέγα ǅ ﬁ",
    "<s> literal control text </s>",
    "<sep> user defined<sep>x",
    "don't I'LL we've they'd",
    "ALLCAPS and MiXeD cAsE",
    "\u00a0nbsp\u2009thin\u3000ideographic",
    "\x0bvertical tab\x85next line",
    "\u2581 a literal lower block",
    "a" * 40,
    "the quick brown fox jumps over the lazy dog " * 3,
    "<|begin_of_text|>special in text<|end_of_text|> after",
    "punctuation!!! ??? ... --- (brackets) [x] {y}",
]


def make_corpus(path):
    rng = random.Random(7)
    english = ("the quick brown fox jumps over lazy dog tokenizer wafer mesh "
               "core model prompt token text stream hello world learning "
               "language large small don't we've they'll").split()
    accented = ("café naïve résumé über straße façade señor jalapeño crème "
                "brûlée Ångström Øresund").split()
    cjk = ["你好", "世界", "中文", "東京", "日本語", "한국어", "こんにちは"]
    emoji = ["🙂", "🚀", "👍🏽", "🎉", "❤️"]
    lines = []
    for _ in range(300):
        words = []
        for _ in range(rng.randint(4, 14)):
            k = rng.random()
            if k < 0.65:
                words.append(rng.choice(english))
            elif k < 0.8:
                words.append(rng.choice(accented))
            elif k < 0.88:
                words.append(rng.choice(cjk))
            elif k < 0.93:
                words.append(str(rng.randint(0, 99999)))
            else:
                words.append(rng.choice(emoji))
        lines.append(" ".join(words) + rng.choice([".", "!", "?", ",", ""]))
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return lines


def train_spm(spm_train, corpus, prefix, byte_fallback):
    subprocess.run([
        spm_train, f"--input={corpus}", f"--model_prefix={prefix}",
        "--model_type=bpe", "--vocab_size=400", "--character_coverage=0.98",
        f"--byte_fallback={'true' if byte_fallback else 'false'}",
        "--normalization_rule_name=identity",
        "--remove_extra_whitespaces=false",
        f"--user_defined_symbols={','.join(USER_DEFINED)}",
        "--num_threads=1", "--minloglevel=2"
    ], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def bytes_to_unicode():
    printable = (list(range(ord("!"), ord("~") + 1)) +
                 list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100)))
    table, extra = {}, 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


BYTE_CHARS = bytes_to_unicode()
CHAR_BYTES = {c: b for b, c in BYTE_CHARS.items()}


def to_chars(text):
    return "".join(BYTE_CHARS[b] for b in text.encode("utf-8"))


def train_byte_level(lines, merges_wanted):
    """Greedy BPE: merge the most frequent pair (ties: smallest pair)."""
    words = collections.Counter()
    for line in lines:
        for piece in regex.findall(LLAMA3_SPLIT, line + "\n"):
            words[tuple(to_chars(piece))] += 1
    merges = []
    for _ in range(merges_wanted):
        pairs = collections.Counter()
        for word, count in words.items():
            for pair in zip(word, word[1:]):
                pairs[pair] += count
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        merges.append(best)
        merged = collections.Counter()
        for word, count in words.items():
            out, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == best:
                    out.append(word[i] + word[i + 1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            merged[tuple(out)] += count
        words = merged
    vocab = [BYTE_CHARS[b] for b in range(256)]
    for a, b in merges:
        if a + b not in vocab:
            vocab.append(a + b)
    return vocab, merges


def bpe(word, ranks):
    """GPT-2's reference bpe(): merge every occurrence of the best pair."""
    parts = list(word)
    while len(parts) > 1:
        pairs = {(parts[i], parts[i + 1]) for i in range(len(parts) - 1)}
        best = min(pairs, key=lambda p: ranks.get(p, float("inf")))
        if best not in ranks:
            break
        out, i = [], 0
        while i < len(parts):
            if i + 1 < len(parts) and (parts[i], parts[i + 1]) == best:
                out.append(parts[i] + parts[i + 1])
                i += 2
            else:
                out.append(parts[i])
                i += 1
        parts = out
    return parts


def reference_encode(text, ids, ranks, split, ignore_merges):
    out = []
    special = "(" + "|".join(regex.escape(s) for s in SPECIALS) + ")"
    for chunk in regex.split(special, text):
        if chunk in SPECIALS:
            out.append(ids[chunk])
            continue
        for piece in regex.findall(split, chunk):
            word = to_chars(piece)
            if ignore_merges and word in ids:
                out.append(ids[word])
            else:
                out.extend(ids[p] for p in bpe(word, ranks))
    return out


def reference_decode(tokens, specials):
    data = b"".join(b"" if t in specials else bytes(CHAR_BYTES[c] for c in t)
                    for t in tokens)
    return data.decode("utf-8", "replace")


def write_tokenizer_json(path, vocab, merges, llama3):
    ids = {t: i for i, t in enumerate(vocab)}
    added = [{"id": len(vocab) + i, "content": s, "single_word": False,
              "lstrip": False, "rstrip": False, "normalized": False,
              "special": True} for i, s in enumerate(SPECIALS)]
    if llama3:
        pre = {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": LLAMA3_SPLIT},
             "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False,
             "trim_offsets": True, "use_regex": False}]}
        post = {"type": "Sequence", "processors": [
            {"type": "ByteLevel", "add_prefix_space": True,
             "trim_offsets": False, "use_regex": True},
            {"type": "TemplateProcessing",
             "single": [{"SpecialToken": {"id": SPECIALS[0], "type_id": 0}},
                        {"Sequence": {"id": "A", "type_id": 0}}],
             "pair": [], "special_tokens": {}}]}
        merge_list = [[a, b] for a, b in merges]
    else:
        pre = {"type": "ByteLevel", "add_prefix_space": False,
               "trim_offsets": True, "use_regex": True}
        post = {"type": "ByteLevel", "add_prefix_space": True,
                "trim_offsets": False, "use_regex": True}
        merge_list = [f"{a} {b}" for a, b in merges]
    document = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": added, "normalizer": None, "pre_tokenizer": pre,
        "post_processor": post,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True,
                    "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False,
                  "byte_fallback": False, "ignore_merges": llama3,
                  "vocab": ids, "merges": merge_list}}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(document, f, ensure_ascii=False, indent=1)


def spm_cases(model):
    sp = sentencepiece.SentencePieceProcessor(model_file=model)
    cases = []
    for text in TEXTS:
        ids = sp.encode(text)
        cases.append({"text": text, "ids": ids, "decoded": sp.decode(ids)})
    # Byte tokens that do not form complete UTF-8, around control tokens.
    byte = {b: sp.piece_to_id(f"<0x{b:02X}>") for b in range(256)}
    if all(sp.is_byte(i) for i in byte.values()):
        word = sp.encode("hello")
        for ids in ([sp.bos_id(), byte[0xE4], byte[0xB8]] + word,
                    [byte[0xF0], byte[0x9F], byte[0x99]],
                    word + [byte[0xFF], byte[0x41], byte[0xC3]] + word,
                    [byte[0xE4], byte[0xB8], byte[0xAD], sp.eos_id()] + word,
                    [byte[0xED], byte[0xA0], byte[0x80]]):
            cases.append({"ids": ids, "decoded": sp.decode(ids)})
    return cases


def bpe_cases(vocab, merges, llama3):
    tokens = vocab + SPECIALS
    ids = {t: i for i, t in enumerate(tokens)}
    ranks = {pair: rank for rank, pair in enumerate(merges)}
    split = LLAMA3_SPLIT if llama3 else GPT2_SPLIT
    cases = []
    for text in TEXTS:
        encoded = reference_encode(text, ids, ranks, split, llama3)
        cases.append({"text": text, "ids": encoded,
                      "decoded": reference_decode(
                          [tokens[i] for i in encoded], SPECIALS)})
    for raw in ([0xE4, 0xB8], [0xF0, 0x9F, 0x99, 0x82, 0x41],
                [0xFF, 0x41, 0xC3], [0xED, 0xA0, 0x80]):
        encoded = [ids[BYTE_CHARS[b]] for b in raw] + [ids["<|end_of_text|>"]]
        cases.append({"ids": encoded, "decoded": reference_decode(
            [tokens[i] for i in encoded], SPECIALS)})
    return cases


def main():
    out, spm_train = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    corpus = os.path.join(out, "corpus.txt")
    lines = make_corpus(corpus)
    train_spm(spm_train, corpus, os.path.join(out, "spm"), True)
    train_spm(spm_train, corpus, os.path.join(out, "spm_nobyte"), False)
    vocab, merges = train_byte_level(lines, 300)
    write_tokenizer_json(os.path.join(out, "llama3.json"), vocab, merges, True)
    write_tokenizer_json(os.path.join(out, "gpt2.json"), vocab, merges, False)
    cases = {
        "user_defined": USER_DEFINED,
        "spm": spm_cases(os.path.join(out, "spm.model")),
        "spm_nobyte": spm_cases(os.path.join(out, "spm_nobyte.model")),
        "llama3": bpe_cases(vocab, merges, True),
        "gpt2": bpe_cases(vocab, merges, False),
    }
    with open(os.path.join(out, "cases.json"), "w", encoding="utf-8") as f:
        json.dump(cases, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
