"""Held-out evaluation on the demo's and the web IDE's tools (demo_corpus.py's eval.jsonl and multiturn.jsonl), in
PyTorch, greedy, tools offered (tool_choice auto).

Single turns: the right tool; exact arguments (the expected call; patches compared without a trailing newline);
then, given its own call and the tool's answer, a text reply, no further call, ending the turn, that quotes the
tool's result verbatim. Small talk and requests no tool serves: a text reply, no call.
Multi-turn: conversations of 8 user turns run as the demo page runs them: the model's calls are executed (calculator,
get_time, apply_patch on notes.txt, ported from src/demo/demo-tools.ts), at most 4 tool rounds a turn (then, or after a repeated failing call, an answer with the call token banned), the file
re-sent as a developer message after it changed, a turn cut off at the output limit left out of the chat, the oldest
whole turns dropped when the prompt would not leave 300 tokens of the context (truncation "auto").
A conversation finishes when every turn ends with a text answer.

python3 demo_eval.py --data .tmp/toy2 [--checkpoint .tmp/toy2/model.pt | --safetensors public/models/toy-qwen3]
"""
import argparse
import json
import os
import random
import re
import sys
import time
import zoneinfo

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import demo_corpus as D  # noqa: E402
from corpus import render_segments  # noqa: E402
from eval import load_model, parse_output  # noqa: E402
from model import greedy  # noqa: E402
from tokenizer import Tokenizer  # noqa: E402

MAX_NEW = 320


def prompt_ids(tok, messages, tools):
    segs = render_segments(messages, tools, set(), False)
    return tok.encode("".join(t for t, _ in segs) + "<|im_start|>assistant\n")


def generate(model, tok, stop, messages, tools, banned=()):
    return tok.decode(greedy(model, prompt_ids(tok, messages, tools), stop, MAX_NEW, banned))


def first_call(calls):
    if len(calls) < 1:
        return None
    try:
        c = json.loads(calls[0])
    except json.JSONDecodeError:
        return None
    return c if isinstance(c, dict) and isinstance(c.get("name"), str) else None


# ------------------------------------------------------------------ the demo's tools (src/demo/demo-tools.ts)

def evaluate_arithmetic(e):
    tokens = re.findall(r"\d+(?:\.\d+)?|[-+*/()]", e)
    if "".join(tokens) != re.sub(r"\s+", "", e):
        raise ValueError(f"not an arithmetic expression: {e}")
    return eval("".join(tokens), {"__builtins__": {}})


def apply_patch(file, patch):
    lines = patch.replace("\r\n", "\n").split("\n")
    if lines[0].strip() != "*** Begin Patch":
        raise ValueError("patch must start with *** Begin Patch")
    if not any(l.strip() == "*** End Patch" for l in lines):
        raise ValueError("patch must end with *** End Patch")
    text = file.split("\n")
    hunk = None

    def flush(text, hunk):
        if hunk is None:
            return text
        old, neu = hunk
        n = len(old)
        at = len(text) if n == 0 else next((i for i in range(len(text) - n + 1) if text[i:i + n] == old), -1)
        if at < 0:
            raise ValueError("hunk does not match the file: " + "\\n".join(old))
        return text[:at] + neu + text[at + n:]

    for line in lines[1:]:
        if line.startswith("*** End Patch"):
            break
        if line.startswith("*** Update File:") or line.startswith("*** Add File:") or line.startswith("*** Delete File:"):
            text, hunk = flush(text, hunk), None
            if not line.startswith("*** Update File:"):
                raise ValueError("the demo file can only be updated")
            continue
        if line.startswith("@@"):
            text, hunk = flush(text, hunk), ([], [])
            continue
        if hunk is None:
            hunk = ([], [])
        if line.startswith("-"):
            hunk[0].append(line[1:])
        elif line.startswith("+"):
            hunk[1].append(line[1:])
        else:
            c = line[1:] if line.startswith(" ") else line
            hunk[0].append(c)
            hunk[1].append(c)
    return "\n".join(flush(text, hunk))


def run_tool(name, args, state, r):
    try:
        if name == "calculator":
            return D.js_num(evaluate_arithmetic(args["expression"]))
        if name == "get_time":
            try:
                zoneinfo.ZoneInfo(args["timezone"])
            except (zoneinfo.ZoneInfoNotFoundError, ValueError):
                # What the page shows: Intl's RangeError in V8.
                raise ValueError(f"Invalid time zone specified: {args['timezone']}") from None
            return D.time_string(r)
        if name == "apply_patch":
            state["file"] = apply_patch(state["file"], args["input"])
            return f"Done. {D.DEMO_FILE} now has {len(state['file'].split(chr(10)))} lines."
        return f"Error: there is no tool named {name} here."
    except Exception as e:  # noqa: BLE001 - errors are outputs the model reads
        return f"Error: {e}"


# ------------------------------------------------------------------ eval

def single_turns(model, tok, stop, items, show):
    rows = {}
    shown = 0
    for it in items:
        kind = it["kind"]
        r = rows.setdefault(kind, {"n": 0, "right_tool": 0, "exact_args": 0, "no_call": 0, "final_text": 0, "quotes_result": 0})
        r["n"] += 1
        out = generate(model, tok, stop, it["messages"], it["tools"])
        reasoning, content, calls, _ = parse_output(out)
        call = first_call(calls)
        if shown < show:
            print(f"--- {kind}: {it['messages'][-1]['content']!r}\n{out}")
        if it["expected"] is None:
            if not calls and content.strip() and out.endswith("<|im_end|>"):
                r["no_call"] += 1
            shown += 1
            continue
        exp = it["expected"]
        if call and call["name"] == exp["name"] and len(calls) == 1:
            r["right_tool"] += 1
            got = call.get("arguments")
            if got == exp["arguments"] or (exp["name"] == "apply_patch" and isinstance(got, dict) and isinstance(got.get("input"), str)
                                            and list(got) == ["input"] and got["input"].rstrip("\n") == exp["arguments"]["input"].rstrip("\n")):
                r["exact_args"] += 1
        args = call["arguments"] if call and isinstance(call.get("arguments"), dict) else exp["arguments"]
        turn = {"role": "assistant", "content": content, "tool_calls": [{"id": "call_0", "type": "function", "function": {"name": exp["name"], "arguments": args}}]}
        if reasoning:
            turn["reasoning_content"] = reasoning
        msgs = it["messages"] + [turn, {"role": "tool", "content": it["tool_result"], "tool_call_id": "call_0", "name": exp["name"]}]
        out2 = generate(model, tok, stop, msgs, it["tools"])
        _, content2, calls2, _ = parse_output(out2)
        if shown < show:
            print(f"  [tool] {it['tool_result']}\n{out2}")
        shown += 1
        if not calls2 and content2.strip() and out2.endswith("<|im_end|>"):
            r["final_text"] += 1
            if it["tool_result"] in content2:
                r["quotes_result"] += 1
    return rows


def multi_turn(model, tok, stop, convs, show, budget):
    r = random.Random(7)
    done, turns_ok, turns, tool_errors, dropped = 0, 0, 0, 0, 0
    for ci, conv in enumerate(convs):
        state = {"file": conv["file"]}
        sent = None
        messages = []
        ok_all = True
        for ui, user in enumerate(conv["users"]):
            if state["file"] != sent:
                messages.append(D.demo_file_message(state["file"]))
                sent = state["file"]
            before = (list(messages), sent)
            messages.append({"role": "user", "content": user})
            turns += 1
            ok = False
            # The page's ToolRounds: 4 rounds of calls, then (or once a call that failed comes again) an answer in
            # words: the runtime's max_tool_calls 0 keeps the call marker out, here its token is banned.
            failed, answer_only = set(), False
            for _round in range(5):
                # truncation "auto": drop the oldest whole turns (the file message sent last stays)
                while len(prompt_ids(tok, messages, D.DEMO_TOOLS)) > budget - MAX_NEW:
                    users = [i for i, m in enumerate(messages) if m["role"] == "user" and "tool_call_id" not in m]
                    if len(users) < 2:
                        break
                    keep_file = [m for m in messages[:users[1]] if m["role"] == "system"][-1:]
                    messages = keep_file + messages[users[1]:]
                    dropped += 1
                out = generate(model, tok, stop, messages, D.DEMO_TOOLS, tok.encode("<tool_call>") if answer_only else ())
                reasoning, content, calls, _ = parse_output(out)
                m = {"role": "assistant", "content": content}
                if reasoning:
                    m["reasoning_content"] = reasoning
                if not calls:
                    messages.append(m)
                    ok = bool(content.strip()) and out.endswith("<|im_end|>")
                    if not out.endswith("<|im_end|>") and not out.endswith("<|endoftext|>"):
                        # As the page does: an answer cut off at the output limit is left out of the chat.
                        messages, sent = before
                    break
                call = first_call(calls)
                if call is None or not isinstance(call.get("arguments"), dict):
                    break
                m["tool_calls"] = [{"id": f"c{ui}_{_round}", "type": "function", "function": {"name": call["name"], "arguments": call["arguments"]}}]
                messages.append(m)
                res = run_tool(call["name"], call["arguments"], state, r)
                tool_errors += res.startswith("Error")
                key = json.dumps([call["name"], call["arguments"]], sort_keys=True)
                answer_only = answer_only or key in failed or _round + 1 >= 4
                if res.startswith("Error"):
                    failed.add(key)
                messages.append({"role": "tool", "content": res, "tool_call_id": f"c{ui}_{_round}", "name": call["name"]})
            turns_ok += ok
            ok_all &= ok
        done += ok_all
        if ci < show:
            print(f"--- conversation {ci}: {'finished' if ok_all else 'NOT finished'}; file now {state['file']!r}")
            for m in messages[-6:]:
                print(f"  {m['role']}: {(m.get('content') or '')[:120]!r} {json.dumps(m.get('tool_calls', [{}])[0].get('function', {}))[:160] if m.get('tool_calls') else ''}")
    return {"conversations": len(convs), "finished": done, "turns": turns, "turns_answered": turns_ok, "tool_errors": tool_errors, "turns_dropped": dropped}


def client_items(path, per_kind):
    """What other clients send (corpus.py's held-out prompts, stages 1-2 style): their own tools and system prompts
    or none. Small talk twice, with its tools and with none at all (a plain chat client: the AI SDK's "Hello!" with
    no instructions), plus that literal "Hello!"; each tool task per_kind times with the client's tools."""
    items = [json.loads(l) for l in open(path)]
    out = [{"kind": "client: small talk, no tools", "messages": [{"role": "user", "content": "Hello!"}], "tools": [], "expected": None, "tool_result": None}]
    seen = {}
    for it in items:
        if it["kind"] == "chat":
            out.append(dict(it, kind="client: small talk, no tools", tools=[]))
            out.append(dict(it, kind="client: small talk, its tools"))
        elif seen.get(it["kind"], 0) < per_kind:
            seen[it["kind"]] = seen.get(it["kind"], 0) + 1
            out.append(dict(it, kind="client: " + it["kind"]))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=".tmp/toy2")
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--safetensors", default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--show", type=int, default=2)
    ap.add_argument("--limit", type=int, default=100000)
    ap.add_argument("--multiturn", type=int, default=100000, help="multi-turn conversations to run")
    ap.add_argument("--json", default=None)
    ap.add_argument("--clients", default=None, help="corpus.py's eval.jsonl: other clients' prompts (no tools, their own tools)")
    ap.add_argument("--clients-per-kind", type=int, default=5)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    vocab = json.load(open(os.path.join(a.data, "vocab.json")))
    tok = Tokenizer(vocab)
    model, step = load_model(a)
    stop = {vocab["eosId"], vocab["bosId"]}
    t0 = time.time()
    items = [json.loads(l) for l in open(os.path.join(a.data, "eval.jsonl"))]
    if a.limit < len(items):
        items = random.Random(1).sample(items, a.limit)
    with torch.no_grad():
        rows = single_turns(model, tok, stop, items, a.show)
        convs = [json.loads(l) for l in open(os.path.join(a.data, "multiturn.jsonl"))][: a.multiturn]
        mt = multi_turn(model, tok, stop, convs, a.show, model.cfg.max_position_embeddings)
        client_rows = single_turns(model, tok, stop, client_items(a.clients, a.clients_per_kind), a.show) if a.clients else {}
    print(f"\nheld-out eval, {step}, greedy, tools offered (auto); context {model.cfg.max_position_embeddings}; {time.time() - t0:.0f}s")
    print("| task | n | right tool | exact args | final answer, no call | quotes result verbatim |")
    print("|---|---|---|---|---|---|")
    tool_kinds = [k for k in rows if k not in ("chat", "unsupported")]
    for k, r in rows.items():
        n = r["n"]
        if k in ("chat", "unsupported"):
            print(f"| {'small talk' if k == 'chat' else 'no tool for it'} | {n} | no call: {r['no_call']}/{n} | | | |")
        else:
            print(f"| {k} | {n} | {r['right_tool']}/{n} | {r['exact_args']}/{n} | {r['final_text']}/{n} | {r['quotes_result']}/{n} |")
    nt = sum(rows[k]["n"] for k in tool_kinds)
    pct = lambda key: sum(rows[k][key] for k in tool_kinds) / max(1, nt)
    nc = [rows[k] for k in ("chat", "unsupported") if k in rows]
    print(f"| all tool tasks | {nt} | {pct('right_tool'):.1%} | {pct('exact_args'):.1%} | {pct('final_text'):.1%} | {pct('quotes_result'):.1%} |")
    print(f"| no call without a tool task | {sum(r['n'] for r in nc)} | {sum(r['no_call'] for r in nc) / max(1, sum(r['n'] for r in nc)):.1%} | | | |")
    print(f"multi-turn (8 user turns each): {mt['finished']}/{mt['conversations']} conversations finished; {mt['turns_answered']}/{mt['turns']} turns answered; "
          f"{mt['tool_errors']} tool errors; {mt['turns_dropped']} turns dropped by truncation")
    if client_rows:
        print("\nother clients (corpus.py's held-out prompts: their own system prompts and tools, or none)")
        print("| task | n | right tool / no call | exact args | final answer, no call | quotes result verbatim |")
        print("|---|---|---|---|---|---|")
        for k, r in client_rows.items():
            n = r["n"]
            if "small talk" in k:
                print(f"| {k} | {n} | no call: {r['no_call']}/{n} | | | |")
            else:
                print(f"| {k} | {n} | {r['right_tool']}/{n} | {r['exact_args']}/{n} | {r['final_text']}/{n} | {r['quotes_result']}/{n} |")
    if a.json:
        json.dump({"checkpoint": str(step), "rows": rows, "multiturn": mt, "clients": client_rows}, open(a.json, "w"), indent=2)


if __name__ == "__main__":
    main()
