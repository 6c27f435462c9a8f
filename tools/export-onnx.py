#!/usr/bin/python3
"""A qwen3-style Hugging Face folder (config.json + model.safetensors, F32 or F16) as an ONNX causal-LM decoder
with past key/values, in the layout @huggingface/transformers (transformers.js) loads (bench/transformers).

/usr/bin/python3 tools/export-onnx.py --model public/models/toy-qwen3 --out .tmp/bench-onnx/bundled-toy-qwen3
/usr/bin/python3 tools/export-onnx.py --model .tmp/bench-models/qwen3-q20m-q8_0/hf --out .tmp/bench-onnx/qwen3-q20m-q8_0

Needs Debian's python3-torch (1.13: torch.onnx.export writes the file; the `onnx` package is not needed for that)
and python3-onnx (`apt-get install -y python3-onnx`: the graph is checked with onnx.checker). Writes
  <out>/onnx/model.onnx       inputs  input_ids [batch, seq] int64, attention_mask [batch, past + seq] int64,
                                      position_ids [batch, seq] int64,
                                      past_key_values.N.key / .value [batch, kv_heads, past, head_dim] float32
                              outputs logits [batch, seq, vocab] float32,
                                      present.N.key / .value [batch, kv_heads, past + seq, head_dim] float32
                              (keys after q/k RMSNorm and RoPE, as transformers' Qwen3 caches them); opset 14,
                              weights inside the file (< 2 GB)
  <out>/config.json, generation_config.json, tokenizer.json, tokenizer_config.json   copied from --model
  <out>/ref.json              PyTorch's logits (float32) for a few token ids at every position of a full
                              forward: the bench's numerical check of the ONNX file (ORT in the browser, and the
                              engine, against these); `decode_check` is the same positions run one token at a
                              time through the past key/values in PyTorch (the path the ONNX file takes in decode).
The function is that of Qwen3ForCausalLM (tools/train-toy-model/model.py, which trained the bundled model:
RMSNorm, per-head q/k RMSNorm, NEOX RoPE from position_ids, grouped-query attention, SwiGLU, tied or untied head).
Quantized GGUFs (Q8_0, Q4_0) export as the F32 values of their dequantized weights (make-test-model's hf/ folder holds
exactly those), so the ONNX model computes the same function in F32, not the same bytes.
"""
import argparse
import json
import math
import os
import shutil
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "train-toy-model"))
from safetensors_io import read_safetensors  # noqa: E402

FORMAT_VERSION = 2  # bump when the graph changes (bench/run.mjs re-exports folders of another version; keep its check equal)


class RMSNorm(nn.Module):
    def __init__(self, size, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))
        self.eps = eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, d = c["hidden_size"], c["head_dim"]
        self.heads, self.kv_heads, self.head_dim = c["num_attention_heads"], c["num_key_value_heads"], d
        self.input_layernorm = RMSNorm(h, c["rms_norm_eps"])
        self.post_attention_layernorm = RMSNorm(h, c["rms_norm_eps"])
        self.q_proj = nn.Linear(h, self.heads * d, bias=False)
        self.k_proj = nn.Linear(h, self.kv_heads * d, bias=False)
        self.v_proj = nn.Linear(h, self.kv_heads * d, bias=False)
        self.o_proj = nn.Linear(self.heads * d, h, bias=False)
        self.q_norm = RMSNorm(d, c["rms_norm_eps"])
        self.k_norm = RMSNorm(d, c["rms_norm_eps"])
        self.gate_proj = nn.Linear(h, c["intermediate_size"], bias=False)
        self.up_proj = nn.Linear(h, c["intermediate_size"], bias=False)
        self.down_proj = nn.Linear(c["intermediate_size"], h, bias=False)

    def forward(self, x, cos, sin, allowed, past_k, past_v):
        b, t = x.shape[0], x.shape[1]
        d, kvh, rep = self.head_dim, self.kv_heads, self.heads // self.kv_heads
        y = self.input_layernorm(x)
        q = self.q_norm(self.q_proj(y).view(b, t, self.heads, d)).transpose(1, 2)
        k = self.k_norm(self.k_proj(y).view(b, t, kvh, d)).transpose(1, 2)
        v = self.v_proj(y).view(b, t, kvh, d).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = torch.cat([past_k, k], dim=2)
        v = torch.cat([past_v, v], dim=2)
        # Grouped-query attention without repeating K/V: query heads g*rep..g*rep+rep-1 share kv head g.
        qg = q.reshape(b, kvh, rep * t, d)
        att = torch.matmul(qg, k.transpose(2, 3)) * (1.0 / math.sqrt(d))
        att = att.view(b, kvh, rep, t, -1)
        att = torch.where(allowed, att, torch.tensor(-3.0e38, dtype=att.dtype))
        att = att.softmax(-1).view(b, kvh, rep * t, -1)
        o = torch.matmul(att, v).view(b, self.heads, t, d).transpose(1, 2).reshape(b, t, self.heads * d)
        x = x + self.o_proj(o)
        y = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(y)) * self.up_proj(y)), k, v


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], dim=-1)


class Decoder(nn.Module):
    """forward(input_ids, attention_mask, position_ids, *past (k0, v0, k1, v1, ...)) -> logits, *present."""

    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = nn.ModuleList([Layer(c) for _ in range(c["num_hidden_layers"])])
        self.norm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])
        self.tied = bool(c.get("tie_word_embeddings", False))
        if not self.tied:
            self.lm_head = nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)
        d = c["head_dim"]
        inv = 1.0 / (float(c.get("rope_theta", 10000.0)) ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
        self.register_buffer("inv_freq", inv, persistent=False)
        # RoPE as tables of cos/sin per position (computed here in float64), gathered by position_ids: WGSL's sin/cos
        # on large angles are only ~1e-4 accurate, which ORT's WebGPU EP showed as logit errors growing with the
        # position (8e-4 on the bundled model with the angles computed in the graph).
        self.rope_table = bool(c.get("_rope_table", True))
        if self.rope_table:
            pos = torch.arange(c["max_position_embeddings"], dtype=torch.float64)
            f = torch.outer(pos, inv.double())
            e = torch.cat([f, f], dim=-1)
            self.register_buffer("cos_table", e.cos().float(), persistent=False)
            self.register_buffer("sin_table", e.sin().float(), persistent=False)

    def forward(self, input_ids, attention_mask, position_ids, *past):
        t = input_ids.shape[1]
        total = attention_mask.shape[1]
        if self.rope_table:
            cos, sin = self.cos_table[position_ids].unsqueeze(1), self.sin_table[position_ids].unsqueeze(1)  # [b, 1, t, d]
        else:
            freqs = position_ids.to(torch.float32).unsqueeze(-1) * self.inv_freq  # [b, t, d/2]
            emb = torch.cat([freqs, freqs], dim=-1).unsqueeze(1)  # [b, 1, t, d]
            cos, sin = emb.cos(), emb.sin()
        # Query i sits at absolute position total - t + i; key j is visible when j <= that and attention_mask[b, j].
        qpos = torch.arange(t, dtype=torch.int64) + (total - t)
        kpos = torch.arange(total, dtype=torch.int64)
        causal = kpos.unsqueeze(0) <= qpos.unsqueeze(1)  # [t, total]
        allowed = causal.unsqueeze(0) & (attention_mask.unsqueeze(1) > 0)  # [b, t, total]
        allowed = allowed.unsqueeze(1).unsqueeze(1)  # [b, 1, 1, t, total]
        x = self.embed_tokens(input_ids)
        present = []
        for i, layer in enumerate(self.layers):
            x, k, v = layer(x, cos, sin, allowed, past[2 * i], past[2 * i + 1])
            present += [k, v]
        x = self.norm(x)
        logits = torch.matmul(x, self.embed_tokens.weight.t()) if self.tied else self.lm_head(x)
        return (logits, *present)


def hf_to_decoder(state, c):
    """Qwen3ForCausalLM names -> this module's."""
    out = {"embed_tokens.weight": state["model.embed_tokens.weight"], "norm.weight": state["model.norm.weight"]}
    if not c.get("tie_word_embeddings", False):
        out["lm_head.weight"] = state["lm_head.weight"]
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        for ours, theirs in [("input_layernorm", "input_layernorm"), ("post_attention_layernorm", "post_attention_layernorm"),
                             ("q_proj", "self_attn.q_proj"), ("k_proj", "self_attn.k_proj"), ("v_proj", "self_attn.v_proj"),
                             ("o_proj", "self_attn.o_proj"), ("q_norm", "self_attn.q_norm"), ("k_norm", "self_attn.k_norm"),
                             ("gate_proj", "mlp.gate_proj"), ("up_proj", "mlp.up_proj"), ("down_proj", "mlp.down_proj")]:
            out[f"layers.{i}.{ours}.weight"] = state[p + theirs + ".weight"]
    return out


def empty_past(c, batch=1, length=0):
    return [torch.zeros(batch, c["num_key_value_heads"], length, c["head_dim"]) for _ in range(2 * c["num_hidden_layers"])]


def run(model, ids, past_len=0, past=None):
    """ids: list of token ids at positions past_len.. after `past`."""
    c = model.c
    past = past if past is not None else empty_past(c)
    t = len(ids)
    x = torch.tensor([ids], dtype=torch.int64)
    mask = torch.ones(1, past_len + t, dtype=torch.int64)
    pos = torch.arange(past_len, past_len + t, dtype=torch.int64).unsqueeze(0)
    out = model(x, mask, pos, *past)
    return out[0], list(out[1:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True, help="Hugging Face folder: config.json + model.safetensors (qwen3)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--opset", type=int, default=14)
    ap.add_argument("--check-tokens", type=int, default=12, help="token ids in ref.json (spread over the vocabulary)")
    ap.add_argument("--rope-in-graph", action="store_true", help="cos/sin computed in the graph from position_ids (default: tables)")
    a = ap.parse_args()
    torch.set_num_threads(2)
    t0 = time.time()
    with open(os.path.join(a.model, "config.json")) as f:
        c = json.load(f)
    if c.get("model_type") != "qwen3":
        sys.exit(f"{a.model}: model_type {c.get('model_type')!r}; this exporter writes qwen3 only")
    c.setdefault("head_dim", c["hidden_size"] // c["num_attention_heads"])
    c["_rope_table"] = not a.rope_in_graph
    model = Decoder(c)
    missing, unexpected = model.load_state_dict(hf_to_decoder(read_safetensors(os.path.join(a.model, "model.safetensors")), c), strict=False)
    if missing or unexpected:
        sys.exit(f"weights: missing {missing}, unexpected {unexpected}")
    model.eval()
    L = c["num_hidden_layers"]
    os.makedirs(os.path.join(a.out, "onnx"), exist_ok=True)
    path = os.path.join(a.out, "onnx", "model.onnx")
    past_names = [f"past_key_values.{i}.{kv}" for i in range(L) for kv in ("key", "value")]
    present_names = [f"present.{i}.{kv}" for i in range(L) for kv in ("key", "value")]
    dyn = {"input_ids": {0: "batch_size", 1: "sequence_length"}, "attention_mask": {0: "batch_size", 1: "total_sequence_length"},
           "position_ids": {0: "batch_size", 1: "sequence_length"}, "logits": {0: "batch_size", 1: "sequence_length"}}
    for n in past_names:
        dyn[n] = {0: "batch_size", 2: "past_sequence_length"}
    for n in present_names:
        dyn[n] = {0: "batch_size", 2: "total_sequence_length"}
    # Traced with 3 new tokens after 2 cached ones, so the graph keeps the concatenation and the offset mask.
    sample = (torch.tensor([[1, 2, 3]]), torch.ones(1, 5, dtype=torch.int64), torch.tensor([[2, 3, 4]]), *empty_past(c, 1, 2))
    with torch.no_grad():
        torch.onnx.export(model, sample, path, input_names=["input_ids", "attention_mask", "position_ids", *past_names],
                          output_names=["logits", *present_names], dynamic_axes=dyn, opset_version=a.opset, do_constant_folding=True)
    try:
        import onnx

        onnx.checker.check_model(path)
        graph = onnx.load(path, load_external_data=False).graph
        ops = sorted({n.op_type for n in graph.node})
        checked = "onnx.checker passed"
    except ImportError:
        ops, checked = [], "onnx not installed (apt-get install -y python3-onnx): not checked"
    for name in ["config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json"]:
        if os.path.exists(os.path.join(a.model, name)):
            shutil.copyfile(os.path.join(a.model, name), os.path.join(a.out, name))
    if not os.path.exists(os.path.join(a.out, "generation_config.json")):
        with open(os.path.join(a.out, "generation_config.json"), "w") as f:
            json.dump({"bos_token_id": c.get("bos_token_id"), "eos_token_id": c.get("eos_token_id"), "do_sample": False}, f)

    # The reference: token ids spread over the vocabulary, PyTorch F32 logits at every position of one forward.
    V = c["vocab_size"]
    n = a.check_tokens
    ids = [(i * 7919 + 13) % V for i in range(n)]
    with torch.no_grad():
        full, _ = run(model, ids)
        full = full[0]
        # The same positions through the cache: a prefill of half, then one token at a time (present -> past).
        h = n // 2
        logits, past = run(model, ids[:h])
        rows = [logits[0]]
        for p in range(h, n):
            logits, past = run(model, [ids[p]], p, past)
            rows.append(logits[0])
        cached = torch.cat(rows, 0)
        cache_diff = float((cached - full).abs().max())
        # The training definition (tools/train-toy-model/model.py, tied head) as a second opinion where it applies.
        train_diff = None
        if c.get("tie_word_embeddings", False):
            from model import load_hf_dir

            ref_model = load_hf_dir(a.model)
            train_logits, _ = ref_model(torch.tensor([ids]))
            train_diff = float((train_logits[0] - full).abs().max())
    ref = {
        "format_version": FORMAT_VERSION,
        "source": os.path.abspath(a.model),
        "tokens": ids,
        "vocab": V,
        "logits": [[round(float(v), 6) for v in row] for row in full],
        "decode_check": {"prefill": h, "max_abs_diff_vs_full_forward": cache_diff},
        "train_definition_max_abs_diff": train_diff,
        "onnx": {"file": "onnx/model.onnx", "bytes": os.path.getsize(path), "opset": a.opset, "ops": ops, "check": checked},
        "export_s": round(time.time() - t0, 1),
        "rope": "in the graph" if a.rope_in_graph else "cos/sin tables gathered by position_ids",
        "torch": torch.__version__,
    }
    with open(os.path.join(a.out, "ref.json"), "w") as f:
        json.dump(ref, f)
    print(json.dumps({k: ref[k] for k in ["tokens", "decode_check", "train_definition_max_abs_diff", "onnx", "export_s"]}))


if __name__ == "__main__":
    main()
