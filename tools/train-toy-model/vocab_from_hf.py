"""The training vocabulary (tokenizer.py's vocab.json) read back from a bundled model's tokenizer.json, so that a
model can be fine-tuned on a new corpus with the tokenizer it was trained with (same ids, same embeddings).

python3 vocab_from_hf.py --dir public/models/toy-qwen3 --out .tmp/toy2/vocab.json
"""
import argparse
import json


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="public/models/toy-qwen3")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    with open(f"{a.dir}/tokenizer.json") as f:
        tj = json.load(f)
    model = tj["model"]
    n = len(model["vocab"]) + len(tj["added_tokens"])
    tokens = [None] * n
    types = [1] * n
    for t, i in model["vocab"].items():
        tokens[i] = t
    specials = []
    for s in tj["added_tokens"]:
        tokens[s["id"]] = s["content"]
        types[s["id"]] = 3 if s["special"] else 4
        specials.append({"id": s["id"], "content": s["content"], "control": s["special"]})
    if any(t is None for t in tokens):
        raise SystemExit("tokenizer.json ids are not contiguous")
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    idx = {s["content"]: s["id"] for s in specials}
    vocab = {"tokens": tokens, "tokenTypes": types, "merges": merges, "specialTokens": specials,
             "bosId": idx["<|endoftext|>"], "eosId": idx["<|im_end|>"], "padId": idx["<|endoftext|>"]}
    with open(a.out, "w") as f:
        json.dump(vocab, f, ensure_ascii=False)
    print(f"vocab {n} tokens, {len(merges)} merges -> {a.out}")


if __name__ == "__main__":
    main()
