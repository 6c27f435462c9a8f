"""Train the toy Qwen3 model on the corpus (loss on the assistant's tokens only), on the CPU, from a seed.

nice -n 19 /usr/bin/python3 tools/train-toy-model/train.py --data .tmp/toy --steps 600 --seed 1234
Writes <data>/checkpoint.pt (state dict + config) and logs the loss.
"""
import argparse
import json
import os
import random
import sys
import time

# OpenMP threads that wait passively: on a shared, oversubscribed machine spinning threads burn most of the CPU
# time this process gets (measured: ~7x the CPU per step).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import ToyConfig, ToyQwen3, load_hf_dir  # noqa: E402
from tokenizer import Tokenizer  # noqa: E402


def encode_corpus(path, tok, max_len, limit):
    """Groups of conversations that share a system block: (prefix ids, [(body ids, loss mask)]), the mask 1 where
    the token is a trained assistant token."""
    groups = {}
    prefix_cache = {}
    checked = 0
    with open(path) as f:
        for i, line in enumerate(f):
            if i >= limit:
                break
            c = json.loads(line)
            if c["prefix"] not in prefix_cache:
                prefix_cache[c["prefix"]] = tok.encode(c["prefix"])
            prefix = prefix_cache[c["prefix"]]
            ids, mask = [], []
            for text, trained in c["segments"]:
                t = tok.encode(text)
                ids.extend(t)
                mask.extend([1 if trained else 0] * len(t))
            if checked < 300:
                checked += 1
                whole = tok.encode(c["prefix"] + "".join(t for t, _ in c["segments"]))
                if whole != prefix + ids:
                    raise SystemExit(f"conversation {i} tokenizes differently in pieces than whole")
            room = max_len - len(prefix)
            g = groups.setdefault(c["group"], (prefix, []))
            g[1].append((ids[:room], mask[:room]))
    return list(groups.values())


def make_batch(bodies):
    t = max(len(ids) for ids, _ in bodies)
    x = torch.zeros(len(bodies), t, dtype=torch.long)
    y = torch.full((len(bodies), t), -100, dtype=torch.long)
    for r, (ids, mask) in enumerate(bodies):
        n = len(ids)
        x[r, :n] = torch.tensor(ids)
        tgt = torch.tensor(ids[1:] + [0])
        m = torch.tensor(mask[1:] + [0], dtype=torch.bool)
        y[r, :n] = torch.where(m, tgt, torch.tensor(-100))
    return x, y


def group_loss(model, prefix, bodies):
    """Mean loss over the trained tokens of a group; the shared prefix is computed once."""
    past = None
    if prefix:
        _, past = model(torch.tensor([prefix]), logits=False)
    x, y = make_batch(bodies)
    hidden, _ = model(x, past=past, logits=False, final_hidden=True)
    # Logits only where there is a target (the assistant's tokens): the output projection is a large part of the cost.
    sel = y.reshape(-1) != -100
    h = hidden.reshape(-1, hidden.shape[-1])[sel]
    logits = h @ model.model.embed_tokens.weight.t()
    return F.cross_entropy(logits, y.reshape(-1)[sel]), x.numel() + len(prefix)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=".tmp/toy")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--steps", type=int, default=100000)
    ap.add_argument("--max-len", type=int, default=1024)
    ap.add_argument("--lr", type=float, default=5e-3)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--intermediate", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--head-dim", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--limit", type=int, default=100000, help="conversations to use")
    ap.add_argument("--save-every", type=int, default=10)
    ap.add_argument("--init", default=None, help="start from this checkpoint's weights (a fresh optimizer)")
    ap.add_argument("--init-hf", default=None, help="start from the weights of a Hugging Face model dir (e.g. the bundled model; its context may differ: RoPE has no learned positions)")
    ap.add_argument("--decay", action="store_true", help="after warmup, decay the rate linearly to 0 at --steps (a cooldown)")
    ap.add_argument("--stop-after", type=int, default=None, help="end after this many steps (the rate schedule still runs to --steps)")
    ap.add_argument("--out", default="checkpoint.pt", help="checkpoint file name in --data")
    a = ap.parse_args()

    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    rng = random.Random(a.seed)
    with open(os.path.join(a.data, "vocab.json")) as f:
        vocab = json.load(f)
    tok = Tokenizer(vocab)
    t0 = time.time()
    # The encoded corpus is cached next to it (the Python BPE encoder takes minutes on a busy machine).
    cache = os.path.join(a.data, f"train.{a.max_len}.{a.limit}.encoded.pt")
    src = os.path.join(a.data, "train.jsonl")
    if os.path.exists(cache) and os.path.getmtime(cache) > os.path.getmtime(src):
        data = torch.load(cache)
    else:
        data = encode_corpus(src, tok, a.max_len, a.limit)
        torch.save(data, cache)
    n_conv = sum(len(g[1]) for g in data)
    n_prefix = sum(len(g[0]) for g in data)
    n_body = sum(len(ids) for g in data for ids, _ in g[1])
    n_trained = sum(sum(m) for g in data for _, m in g[1])
    print(f"{len(data)} groups, {n_conv} conversations; {n_prefix} prefix + {n_body} body tokens ({n_trained} trained); "
          f"encoded in {time.time() - t0:.0f}s", flush=True)

    cfg = ToyConfig(vocab_size=len(vocab["tokens"]), hidden_size=a.hidden, intermediate_size=a.intermediate,
                    num_hidden_layers=a.layers, num_attention_heads=a.heads, num_key_value_heads=a.kv_heads,
                    head_dim=a.head_dim, max_position_embeddings=a.max_len)
    model = ToyQwen3(cfg)
    if a.init:
        ck0 = torch.load(a.init)
        if ck0["config"] != cfg.to_dict():
            raise SystemExit(f"--init {a.init}: its config {ck0['config']} differs from {cfg.to_dict()}")
        model.load_state_dict(ck0["state_dict"])
        print(f"initialised from {a.init} (step {ck0['step']}, seed {ck0['seed']})", flush=True)
    if a.init_hf:
        hf = load_hf_dir(a.init_hf)
        if {k: v for k, v in hf.cfg.to_dict().items() if k != "max_position_embeddings"} != {k: v for k, v in cfg.to_dict().items() if k != "max_position_embeddings"}:
            raise SystemExit(f"--init-hf {a.init_hf}: its config {hf.cfg.to_dict()} differs from {cfg.to_dict()}")
        model.load_state_dict(hf.state_dict())
        print(f"initialised from {a.init_hf} (context {hf.cfg.max_position_embeddings} -> {cfg.max_position_embeddings})", flush=True)
    print(f"{sum(p.numel() for p in model.parameters())} parameters: {cfg}", flush=True)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.98), eps=1e-8)

    def lr_at(step):
        # Linear warmup, then constant: the weights after step N do not depend on --steps, so any checkpoint
        # is reproduced by rerunning with --steps N.
        if step < a.warmup:
            return a.lr * (step + 1) / a.warmup
        if a.decay:
            return a.lr * (a.steps - step) / max(1, a.steps - a.warmup)
        return a.lr

    order = []
    start = time.time()
    seen = 0
    ema = None
    last = a.steps if a.stop_after is None else min(a.steps, a.stop_after)
    for step in range(last):
        if not order:
            order = list(range(len(data)))
            rng.shuffle(order)
        prefix, bodies = data[order.pop()]
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        loss, n = group_loss(model, prefix, bodies)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        seen += n
        ema = loss.item() if ema is None else 0.9 * ema + 0.1 * loss.item()
        if step % 10 == 0 or step == last - 1:
            el = time.time() - start
            print(f"step {step} loss {loss.item():.4f} ema {ema:.4f} lr {lr_at(step):.2e} tokens {seen} "
                  f"{seen / el:.0f} tok/s elapsed {el:.0f}s", flush=True)
        if (step + 1) % a.save_every == 0 or step == last - 1:
            ck = {"config": cfg.to_dict(), "state_dict": model.state_dict(), "step": step + 1, "seed": a.seed, "args": vars(a)}
            torch.save(ck, os.path.join(a.data, a.out + ".tmp"))
            os.replace(os.path.join(a.data, a.out + ".tmp"), os.path.join(a.data, a.out))
    print(f"done: {last} steps in {time.time() - start:.0f}s", flush=True)


if __name__ == "__main__":
    main()
