"""PyTorch's logits for a few token sequences of the bundled model, as a JSON fixture for the runtime's tests
(test/unit/toy-model*.test.ts compare the GGUF through the TypeScript reference forward and the WebGPU engine).

python3 logits_fixture.py --model public/models/toy-qwen3 --data .tmp/toy --out test/unit/toy-model.fixture.json

For each case: the prompt text (rendered by corpus.py's renderer, which equals the chat template), its token ids,
full-vocabulary logits at a few positions (every `stride`-th and the last), and PyTorch's greedy continuation.
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from eval import prompt_text  # noqa: E402
from model import greedy, load_hf_dir  # noqa: E402
from tokenizer import Tokenizer  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="public/models/toy-qwen3")
    ap.add_argument("--data", default=".tmp/toy")
    ap.add_argument("--out", default="test/unit/toy-model.fixture.json")
    ap.add_argument("--stride", type=int, default=64)
    ap.add_argument("--greedy", type=int, default=48)
    a = ap.parse_args()
    torch.set_num_threads(2)
    model = load_hf_dir(a.model)
    with open(os.path.join(a.data, "vocab.json")) as f:
        vocab = json.load(f)
    tok = Tokenizer(vocab)
    items = [json.loads(l) for l in open(os.path.join(a.data, "eval.jsonl"))]
    chat = next(i for i in items if i["kind"] == "chat")
    if any(i["kind"] == "weather" for i in items):
        # corpus.py's held-out set (the first two stages)
        weather = next(i for i in items if i["kind"] == "weather")
        cases = [{"id": "weather-with-tools", "messages": weather["messages"], "tools": weather["tools"]}]
    else:
        # demo_corpus.py's: the demo's tools with its file message, and the web IDE's patch tool
        math = next(i for i in items if i["kind"] == "math")
        ide = next(i for i in items if i["kind"] == "ide")
        cases = [{"id": "demo-calculator", "messages": math["messages"], "tools": math["tools"]},
                 {"id": "web-ide-patch", "messages": ide["messages"], "tools": ide["tools"]}]
        # A conversation of 8 user turns, ~1,900 tokens: positions past the old 1,024-token context.
        import random
        import demo_corpus as D
        msgs, _, _, _ = D.demo_conversation(random.Random(5), "held", set(), D.DEMO_INITIAL_FILE, 8,
                                            ["math", "time", "patch", "chat", "math", "patch", "time", "math"])
        last_user = max(i for i, m in enumerate(msgs) if m["role"] == "user")
        cases.append({"id": "demo-8-turns", "messages": msgs[: last_user + 1], "tools": D.DEMO_TOOLS, "stride": 256, "greedy": 4})
    cases.append({"id": "small-talk", "messages": chat["messages"], "tools": []})
    out = {"model": "toy-qwen3", "note": "PyTorch float32 logits of public/models/toy-qwen3 (tools/train-toy-model/logits_fixture.py)", "cases": []}
    stop = {vocab["eosId"], vocab["bosId"]}
    with torch.no_grad():
        for case in cases:
            text = prompt_text(case["messages"], case["tools"])
            ids = tok.encode(text)
            logits, _ = model(torch.tensor([ids]))
            positions = sorted(set(list(range(0, len(ids), case.get("stride", a.stride))) + [len(ids) - 1]))
            cont = greedy(model, ids, stop, case.get("greedy", a.greedy))
            out["cases"].append({
                "id": case["id"],
                "messages": case["messages"],
                "tools": case["tools"],
                "prompt": text,
                "tokens": ids,
                "positions": positions,
                "logits": [[round(float(v), 5) for v in logits[0, p]] for p in positions],
                "greedy": cont,
                "greedy_text": tok.decode(cont),
            })
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(out, f, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {a.out}: " + ", ".join(f"{c['id']} ({len(c['tokens'])} tokens, {len(c['positions'])} positions)" for c in out["cases"]))


if __name__ == "__main__":
    main()
