"""Grow a trained checkpoint into a deeper model that computes the same function (depth up-scaling).

Each layer i of the old model is followed by a copy of itself whose two residual output projections (attention's
o_proj, the MLP's down_proj) are zero: the copy adds nothing to the residual stream, so the grown model's logits are
the old model's (checked here), and training goes on from what the old model knew with twice the layers to learn
with. A zero output projection still gets gradients (its inputs are not zero), and the rest of the copy gets them
once it is not zero.

python3 grow.py --checkpoint .tmp/toy6/model-3h.pt --out .tmp/toy7/model-grown.pt
"""
import argparse
import copy
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import ToyConfig, ToyQwen3  # noqa: E402


def grow(old: ToyQwen3) -> ToyQwen3:
    cfg = ToyConfig(**{**old.cfg.to_dict(), "num_hidden_layers": 2 * old.cfg.num_hidden_layers})
    new = ToyQwen3(cfg)
    new.model.embed_tokens.load_state_dict(old.model.embed_tokens.state_dict())
    new.model.norm.load_state_dict(old.model.norm.state_dict())
    for i, layer in enumerate(old.model.layers):
        new.model.layers[2 * i].load_state_dict(layer.state_dict())
        twin = copy.deepcopy(layer.state_dict())
        twin["self_attn.o_proj.weight"].zero_()
        twin["mlp.down_proj.weight"].zero_()
        new.model.layers[2 * i + 1].load_state_dict(twin)
    return new


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    ck = torch.load(a.checkpoint)
    old = ToyQwen3(ToyConfig(**ck["config"]))
    old.load_state_dict(ck["state_dict"])
    old.eval()
    new = grow(old)
    new.eval()
    ids = torch.randint(0, old.cfg.vocab_size, (2, 300), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        diff = (old(ids)[0] - new(ids)[0]).abs().max().item()
    if diff > 1e-4:
        raise SystemExit(f"the grown model's logits differ from the old one's by {diff}")
    out = {"config": new.cfg.to_dict(), "state_dict": new.state_dict(), "step": 0, "seed": ck["seed"],
           "args": {"grown_from": a.checkpoint, "from_step": ck["step"]}}
    torch.save(out, a.out)
    n_old = sum(p.numel() for p in old.parameters())
    n_new = sum(p.numel() for p in new.parameters())
    print(f"{a.checkpoint} ({old.cfg.num_hidden_layers} layers, {n_old} parameters) -> {a.out} "
          f"({new.cfg.num_hidden_layers} layers, {n_new} parameters); max |logit difference| {diff:.2e}")


if __name__ == "__main__":
    main()
