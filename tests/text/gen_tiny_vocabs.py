#!/usr/bin/env python3
"""Writes the small hand-made vocabularies the tokenizer's unit tests use (tests/text/tiny_*), a few KB each:
  tiny_bytelevel/tokenizer.json   byte-level BPE with GPT-2's regex, a few merges and added tokens
  tiny_llama3/tokenizer.json      the same with LLaMA 3's Split regex and ignore_merges
  tiny_gpt2/vocab.json, merges.txt the byte-level one in GPT-2's original files
  tiny_sp/tokenizer.json          SentencePiece-style (LLaMA 2): Prepend/Replace normalizer, byte fallback

Usage: python3 tests/text/gen_tiny_vocabs.py   (from the repository root)
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


B2U = bytes_to_unicode()


# merges in rank order, spelled byte-level (Ġ: space, Ã ©: the bytes of é); "e l" ranks after "l l" so that "hello"
# merges as he + ll, not h + el + l
BYTELEVEL_MERGES = ["h e", "l l", "he ll", "hell o", "Ġ w", "o r", "Ġw or", "l d", "Ġwor ld", "e l", "a a", "aa aa",
                    "Ġ Ġ", "1 2", "12 3", "Ã ©", "Ã© t", "Ġ h"]
ADDED = ["<|endoftext|>", "<|im_start|>", "<x>", "<x><y>"]


def bytelevel_vocab():
    vocab = {B2U[b]: i for i, b in enumerate(sorted(B2U))}
    for m in BYTELEVEL_MERGES:
        a, b = m.split(" ")
        vocab.setdefault(a + b, len(vocab))
    return vocab


def added(vocab):
    return [{"id": len(vocab) + i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True} for i, c in enumerate(ADDED)]


def write(folder, name, obj):
    os.makedirs(os.path.join(HERE, folder), exist_ok=True)
    with open(os.path.join(HERE, folder, name), "w", encoding="utf-8") as f:
        if isinstance(obj, str):
            f.write(obj)
        else:
            json.dump(obj, f, ensure_ascii=False, separators=(",", ":"))
            f.write("\n")


def main():
    vocab = bytelevel_vocab()
    gpt2_pre = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    model = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "vocab": vocab, "merges": BYTELEVEL_MERGES}
    write("tiny_bytelevel", "tokenizer.json", {"version": "1.0", "added_tokens": added(vocab), "normalizer": None,
                                               "pre_tokenizer": gpt2_pre, "decoder": {"type": "ByteLevel"}, "model": model})
    llama3_re = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
                 "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
    # "Ġhello" is a token that no merge makes: only ignore_merges finds it
    v3 = dict(vocab)
    v3.setdefault("Ġhello", len(v3))
    m3 = dict(model, vocab=v3, ignore_merges=True, merges=[m.split(" ") for m in BYTELEVEL_MERGES])
    write("tiny_llama3", "tokenizer.json", {
        "version": "1.0", "added_tokens": added(v3), "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": llama3_re}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        "decoder": {"type": "ByteLevel"}, "model": m3})
    gvocab = dict(vocab)
    gvocab["<|endoftext|>"] = len(gvocab)
    write("tiny_gpt2", "vocab.json", gvocab)
    write("tiny_gpt2", "merges.txt", "#version: 0.2\n" + "\n".join(BYTELEVEL_MERGES) + "\n")

    sp_vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        sp_vocab[f"<0x{b:02X}>"] = len(sp_vocab)
    for t in ["▁", "h", "e", "l", "o", "w", "r", "d", "a", "é"]:
        sp_vocab[t] = len(sp_vocab)
    sp_merges = ["h e", "l l", "he ll", "hell o", "▁ hello", "▁ w", "o r", "▁w or", "l d", "▁wor ld", "▁ ▁"]
    for m in sp_merges:
        a, b = m.split(" ")
        sp_vocab.setdefault(a + b, len(sp_vocab))
    write("tiny_sp", "tokenizer.json", {
        "version": "1.0",
        "added_tokens": [{"id": i, "content": c, "special": True} for i, c in enumerate(["<unk>", "<s>", "</s>"])],
        "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"},
                                                           {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
        "pre_tokenizer": None,
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "vocab": sp_vocab,
                  "merges": sp_merges}})


if __name__ == "__main__":
    main()
