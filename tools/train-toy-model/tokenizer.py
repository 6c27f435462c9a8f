"""A byte-level BPE tokenizer (GPT-2 / Qwen2 style) trained on the corpus, and an encoder that matches
Hugging Face tokenizers on it: special tokens split out first, NFC, Qwen2's split regex, byte-to-unicode, merges by
rank.

python3 tokenizer.py --corpus .tmp/toy/train.jsonl --vocab-size 2048 --out .tmp/toy/vocab.json
"""
import argparse
import json
import os
import unicodedata

import regex

QWEN2_SPLIT = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
SPLIT_RE = regex.compile(QWEN2_SPLIT)
# (content, control): control tokens are GGUF type 3 / HF special; the others user-defined (type 4).
SPECIAL_TOKENS = [("<|endoftext|>", True), ("<|im_start|>", True), ("<|im_end|>", True),
                  ("<think>", False), ("</think>", False), ("<tool_call>", False), ("</tool_call>", False)]
SPECIAL_RE = regex.compile("(" + "|".join(regex.escape(s) for s, _ in SPECIAL_TOKENS) + ")")


def byte_to_unicode():
    printable = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    out, n = [], 256
    for b in range(256):
        if b in printable:
            out.append(chr(b))
        else:
            out.append(chr(n))
            n += 1
    return out


BYTE_CHARS = byte_to_unicode()


def words_of(text):
    """Pre-tokenized words (byte-level strings) of a text without special tokens."""
    text = unicodedata.normalize("NFC", text)
    for m in SPLIT_RE.finditer(text):
        yield "".join(BYTE_CHARS[b] for b in m.group(0).encode("utf-8"))


def train_bpe(texts, vocab_size):
    counts = {}
    for t in texts:
        for piece in SPECIAL_RE.split(t):
            if not piece or piece in SPECIAL_SET:
                continue
            for w in words_of(piece):
                counts[w] = counts.get(w, 0) + 1
    words = [list(w) for w in counts]
    freq = list(counts.values())
    pairs = {}
    where = {}
    for i, w in enumerate(words):
        for a, b in zip(w, w[1:]):
            pairs[(a, b)] = pairs.get((a, b), 0) + freq[i]
            where.setdefault((a, b), set()).add(i)
    tokens = list(BYTE_CHARS)
    known = set(tokens)
    merges = []
    target = vocab_size - len(SPECIAL_TOKENS)
    while len(tokens) < target and pairs:
        (a, b), c = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
        if c < 2:
            break
        merges.append(a + " " + b)
        ab = a + b
        if ab not in known:
            known.add(ab)
            tokens.append(ab)
        for i in list(where.get((a, b), ())):
            w = words[i]
            for x, y in zip(w, w[1:]):
                pairs[(x, y)] -= freq[i]
                if pairs[(x, y)] == 0:
                    del pairs[(x, y)]
                s = where.get((x, y))
                if s is not None:
                    s.discard(i)
            out = []
            j = 0
            while j < len(w):
                if j + 1 < len(w) and w[j] == a and w[j + 1] == b:
                    out.append(ab)
                    j += 2
                else:
                    out.append(w[j])
                    j += 1
            words[i] = out
            for x, y in zip(out, out[1:]):
                pairs[(x, y)] = pairs.get((x, y), 0) + freq[i]
                where.setdefault((x, y), set()).add(i)
    return tokens, merges


SPECIAL_SET = {s for s, _ in SPECIAL_TOKENS}


class Tokenizer:
    def __init__(self, vocab):
        self.tokens = vocab["tokens"]
        self.ids = {t: i for i, t in enumerate(self.tokens)}
        self.ranks = {tuple(m.split(" ")): r for r, m in enumerate(vocab["merges"])}
        self.cache = {}

    def bpe(self, word):
        got = self.cache.get(word)
        if got is not None:
            return got
        parts = list(word)
        while len(parts) > 1:
            best, rank = None, None
            for k in range(len(parts) - 1):
                r = self.ranks.get((parts[k], parts[k + 1]))
                if r is not None and (rank is None or r < rank):
                    best, rank = k, r
            if best is None:
                break
            a, b = parts[best], parts[best + 1]
            out, j = [], 0
            while j < len(parts):
                if j + 1 < len(parts) and parts[j] == a and parts[j + 1] == b:
                    out.append(a + b)
                    j += 2
                else:
                    out.append(parts[j])
                    j += 1
            parts = out
        ids = [self.ids[p] for p in parts]
        self.cache[word] = ids
        return ids

    def encode(self, text):
        ids = []
        for piece in SPECIAL_RE.split(text):
            if not piece:
                continue
            if piece in SPECIAL_SET:
                ids.append(self.ids[piece])
                continue
            for w in words_of(piece):
                ids.extend(self.bpe(w))
        return ids

    def decode(self, ids):
        inv = {c: b for b, c in enumerate(BYTE_CHARS)}
        out = bytearray()
        for i in ids:
            t = self.tokens[i]
            if t in SPECIAL_SET:
                out += t.encode("utf-8")
            else:
                out += bytes(inv[c] for c in t)
        return out.decode("utf-8", errors="replace")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=".tmp/toy/train.jsonl")
    ap.add_argument("--vocab-size", type=int, default=2048)
    ap.add_argument("--sample", type=int, default=4000, help="conversations to learn merges from")
    ap.add_argument("--out", default=".tmp/toy/vocab.json")
    a = ap.parse_args()
    texts = []
    with open(a.corpus) as f:
        for i, line in enumerate(f):
            if i >= a.sample:
                break
            c = json.loads(line)
            texts.append(c.get("prefix", "") + "".join(t for t, _ in c["segments"]))
    tokens, merges = train_bpe(texts, a.vocab_size)
    token_types = [1] * len(tokens)
    specials = []
    for s, control in SPECIAL_TOKENS:
        tokens.append(s)
        token_types.append(3 if control else 4)
        specials.append({"id": len(tokens) - 1, "content": s, "control": control})
    idx = {s["content"]: s["id"] for s in specials}
    vocab = {"tokens": tokens, "tokenTypes": token_types, "merges": merges, "specialTokens": specials,
             "bosId": idx["<|endoftext|>"], "eosId": idx["<|im_end|>"], "padId": idx["<|endoftext|>"]}
    with open(a.out, "w") as f:
        json.dump(vocab, f, ensure_ascii=False)
    tok = Tokenizer(vocab)
    # A sample of texts with their ids, for export.ts to check @huggingface/tokenizers against this encoder.
    with open(os.path.join(os.path.dirname(a.out), "tok-sample.jsonl"), "w") as f:
        extra = ["Hello, wörld! 12.5 km → ça va? <think>\nx\n</think>\n\n", "  spaces\t\ttabs\r\nCRLF  ", "emoji 😀 and 中文"]
        for t in texts[:200] + extra:
            f.write(json.dumps({"text": t, "ids": tok.encode(t)}, ensure_ascii=False) + "\n")
    n_chars = sum(len(t) for t in texts[:500])
    n_tok = sum(len(tok.encode(t)) for t in texts[:500])
    print(f"vocab {len(tokens)} ({len(merges)} merges); {n_chars / n_tok:.2f} chars/token; {n_tok / 500:.0f} tokens/conversation")


if __name__ == "__main__":
    main()
