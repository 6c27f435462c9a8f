"""Held-out evaluation of the toy model in PyTorch, greedy, tools offered (tool_choice auto).

For each held-out prompt (phrasings and values never seen in training):
  turn 1: does it call the right tool, with arguments that are a valid JSON object holding exactly the schema's
          required keys with the right types ("valid args"), and equal to the expected ones ("exact args")?
          Small talk: does it answer with text and no tool call?
  turn 2: given its own call and the tool's answer, does it reply with text and no further tool call
          (the final_answer phase), and does the reply quote the tool's result?

python3 eval.py --data .tmp/toy [--checkpoint .tmp/toy/checkpoint.pt | --safetensors public/models/toy-qwen3]
"""
import argparse
import json
import os
import re
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus import render_segments  # noqa: E402
from model import ToyConfig, ToyQwen3, greedy, load_hf_dir  # noqa: E402
from tokenizer import Tokenizer  # noqa: E402

CALL_RE = re.compile(r"<tool_call>\n(.*?)\n</tool_call>", re.S)


def load_model(a):
    if a.safetensors:
        return load_hf_dir(a.safetensors), "safetensors"
    ck = torch.load(a.checkpoint or os.path.join(a.data, "checkpoint.pt"))
    m = ToyQwen3(ToyConfig(**ck["config"]))
    m.load_state_dict(ck["state_dict"])
    m.eval()
    return m, ck["step"]


def prompt_text(messages, tools):
    segs = render_segments(messages, tools, set(), False)
    return "".join(t for t, _ in segs) + "<|im_start|>assistant\n"


def parse_output(text):
    """(reasoning, content before any call, [call json text], rest) of a generated assistant turn."""
    reasoning = None
    body = text
    if body.startswith("<think>\n"):
        end = body.find("\n</think>\n\n")
        if end >= 0:
            reasoning = body[len("<think>\n"):end]
            body = body[end + len("\n</think>\n\n"):]
    body = body.replace("<|im_end|>", "")
    calls = CALL_RE.findall(body)
    first = body.find("<tool_call>")
    content = body if first < 0 else body[:first].rstrip("\n")
    return reasoning, content, calls, body


def valid_args(args, tool):
    params = tool["function"]["parameters"]
    if not isinstance(args, dict):
        return False
    props = params.get("properties", {})
    for k, v in args.items():
        if k not in props:
            return False
        t = props[k].get("type")
        if t == "string" and not isinstance(v, str):
            return False
        if t == "number" and not isinstance(v, (int, float)):
            return False
        if "enum" in props[k] and v not in props[k]["enum"]:
            return False
    return all(k in args for k in params.get("required", []))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=".tmp/toy")
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--safetensors", default=None, help="a Hugging Face model dir (model.safetensors + config.json)")
    ap.add_argument("--limit", type=int, default=1000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--show", type=int, default=3, help="transcripts to print")
    ap.add_argument("--json", default=None, help="write the table as JSON here")
    ap.add_argument("--kinds", default=None, help="only these tasks, comma-separated (weather,math,time,units,patch,chat)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    with open(os.path.join(a.data, "vocab.json")) as f:
        vocab = json.load(f)
    tok = Tokenizer(vocab)
    model, step = load_model(a)
    stop = {vocab["eosId"], vocab["bosId"]}
    items = [json.loads(l) for l in open(os.path.join(a.data, "eval.jsonl"))]
    if a.kinds:
        items = [i for i in items if i["kind"] in a.kinds.split(",")]
    items = items[: a.limit]
    rows = {}
    t0 = time.time()
    shown = 0
    for it in items:
        kind = it["kind"]
        r = rows.setdefault(kind, {"n": 0, "right_tool": 0, "valid_args": 0, "exact_args": 0, "no_call": 0, "final_text": 0, "quotes_result": 0, "thinks": 0})
        r["n"] += 1
        out_ids = greedy(model, tok.encode(prompt_text(it["messages"], it["tools"])), stop, 200)
        out = tok.decode(out_ids)
        reasoning, content, calls, body = parse_output(out)
        if reasoning is not None:
            r["thinks"] += 1
        if shown < a.show:
            print(f"--- {kind}: {it['messages'][-1]['content']!r}\n{out}")
        if it["expected"] is None:
            if not calls and content.strip():
                r["no_call"] += 1
            continue
        exp = it["expected"]
        call = None
        if len(calls) == 1:
            try:
                call = json.loads(calls[0])
            except json.JSONDecodeError:
                call = None
        if isinstance(call, dict) and call.get("name") == exp["name"]:
            r["right_tool"] += 1
            tool = next(t for t in it["tools"] if t["function"]["name"] == exp["name"])
            if valid_args(call.get("arguments"), tool):
                r["valid_args"] += 1
            if call.get("arguments") == exp["arguments"]:
                r["exact_args"] += 1
        # Turn 2: the model's own turn replayed (its reasoning and commentary), then the tool's answer.
        args = call.get("arguments") if isinstance(call, dict) and isinstance(call.get("arguments"), dict) else exp["arguments"]
        turn = {"role": "assistant", "content": content,
                "tool_calls": [{"id": "call_0", "type": "function", "function": {"name": exp["name"], "arguments": args}}]}
        if reasoning:
            turn["reasoning_content"] = reasoning
        msgs = it["messages"] + [turn, {"role": "tool", "content": it["tool_result"], "tool_call_id": "call_0", "name": exp["name"]}]
        out2 = tok.decode(greedy(model, tok.encode(prompt_text(msgs, it["tools"])), stop, 200))
        _, content2, calls2, _ = parse_output(out2)
        if shown < a.show:
            print(f"  [tool] {it['tool_result']}\n{out2}")
        if not calls2 and content2.strip() and out2.endswith("<|im_end|>"):
            r["final_text"] += 1
            # The reply quotes the result: some value of the tool's answer appears in it.
            try:
                res = json.loads(it["tool_result"])
                vals = [str(v) for k, v in res.items() if k in ("temperature", "result", "time", "value")]
            except json.JSONDecodeError:
                # apply_patch answers in plain text: the reply should name the file.
                vals = [exp["arguments"]["input"].split("\n")[1][len("*** Update File: "):]]
            if vals and all(v in content2 for v in vals):
                r["quotes_result"] += 1
        shown += 1

    tot = {k: sum(r[k] for r in rows.values()) for k in next(iter(rows.values()))}
    tool_rows = [r for k, r in rows.items() if k != "chat"]
    n_tool = sum(r["n"] for r in tool_rows)
    print(f"\nheld-out eval, checkpoint {step}, greedy, tools offered (auto); {time.time() - t0:.0f}s")
    print(f"| task | n | right tool | valid args | exact args | final answer, no call | reply quotes result | thinks |")
    print(f"|---|---|---|---|---|---|---|---|")
    for k, r in rows.items():
        if k == "chat":
            print(f"| small talk | {r['n']} | no call: {r['no_call']}/{r['n']} | | | | | {r['thinks']}/{r['n']} |")
        else:
            n = r["n"]
            print(f"| {k} | {n} | {r['right_tool']}/{n} | {r['valid_args']}/{n} | {r['exact_args']}/{n} | {r['final_text']}/{n} | {r['quotes_result']}/{n} | {r['thinks']}/{n} |")
    print(f"| all tool tasks | {n_tool} | {sum(r['right_tool'] for r in tool_rows) / n_tool:.1%} | {sum(r['valid_args'] for r in tool_rows) / n_tool:.1%} | "
          f"{sum(r['exact_args'] for r in tool_rows) / n_tool:.1%} | {sum(r['final_text'] for r in tool_rows) / n_tool:.1%} | "
          f"{sum(r['quotes_result'] for r in tool_rows) / n_tool:.1%} | |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"checkpoint": step, "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
