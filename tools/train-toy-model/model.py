"""A small Qwen3-architecture decoder in PyTorch (the same function as Hugging Face's Qwen3ForCausalLM):
RMSNorm, q/k RMSNorm per head, NEOX (rotate-half) RoPE, grouped-query attention, SwiGLU MLP, tied embeddings."""
import math
from dataclasses import dataclass, asdict

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class ToyConfig:
    vocab_size: int = 1536
    hidden_size: int = 128
    intermediate_size: int = 384
    num_hidden_layers: int = 4
    num_attention_heads: int = 4
    num_key_value_heads: int = 2
    head_dim: int = 32
    rms_norm_eps: float = 1e-6
    rope_theta: float = 10000.0
    max_position_embeddings: int = 1024

    def to_dict(self):
        return asdict(self)


class RMSNorm(nn.Module):
    def __init__(self, size: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))
        self.eps = eps

    def forward(self, x):
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * xf.to(x.dtype)


def rope_tables(cfg: ToyConfig, length: int, device=None):
    inv = 1.0 / (cfg.rope_theta ** (torch.arange(0, cfg.head_dim, 2, dtype=torch.float32, device=device) / cfg.head_dim))
    t = torch.arange(length, dtype=torch.float32, device=device)
    freqs = torch.outer(t, inv)
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], dim=-1)


class Attention(nn.Module):
    def __init__(self, cfg: ToyConfig):
        super().__init__()
        self.cfg = cfg
        self.q_proj = nn.Linear(cfg.hidden_size, cfg.num_attention_heads * cfg.head_dim, bias=False)
        self.k_proj = nn.Linear(cfg.hidden_size, cfg.num_key_value_heads * cfg.head_dim, bias=False)
        self.v_proj = nn.Linear(cfg.hidden_size, cfg.num_key_value_heads * cfg.head_dim, bias=False)
        self.o_proj = nn.Linear(cfg.num_attention_heads * cfg.head_dim, cfg.hidden_size, bias=False)
        self.q_norm = RMSNorm(cfg.head_dim, cfg.rms_norm_eps)
        self.k_norm = RMSNorm(cfg.head_dim, cfg.rms_norm_eps)

    def forward(self, x, cos, sin, mask, past=None):
        """past: (k, v) of earlier positions [1 or b, kv_heads, P, head_dim] (after RoPE), shared by the batch.
        Returns the output and (k, v) of all positions."""
        b, t, _ = x.shape
        c = self.cfg
        q = self.q_norm(self.q_proj(x).view(b, t, c.num_attention_heads, c.head_dim)).transpose(1, 2)
        k = self.k_norm(self.k_proj(x).view(b, t, c.num_key_value_heads, c.head_dim)).transpose(1, 2)
        v = self.v_proj(x).view(b, t, c.num_key_value_heads, c.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if past is not None:
            k = torch.cat([past[0].expand(b, -1, -1, -1), k], dim=2)
            v = torch.cat([past[1].expand(b, -1, -1, -1), v], dim=2)
        rep = c.num_attention_heads // c.num_key_value_heads
        # Grouped-query attention: query heads h*rep..h*rep+rep-1 share kv head h.
        qg = q.reshape(b, c.num_key_value_heads, rep * t, c.head_dim)
        att = (qg @ k.transpose(-1, -2)).view(b, c.num_key_value_heads, rep, t, -1) / math.sqrt(c.head_dim)
        att = att.masked_fill(mask, float('-inf')).softmax(-1)
        y = (att.view(b, c.num_key_value_heads, rep * t, -1) @ v).view(b, c.num_attention_heads, t, c.head_dim)
        y = y.transpose(1, 2).reshape(b, t, c.num_attention_heads * c.head_dim)
        return self.o_proj(y), (k, v)


class MLP(nn.Module):
    def __init__(self, cfg: ToyConfig):
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Layer(nn.Module):
    def __init__(self, cfg: ToyConfig):
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = MLP(cfg)

    def forward(self, x, cos, sin, mask, past=None):
        a, kv = self.self_attn(self.input_layernorm(x), cos, sin, mask, past)
        x = x + a
        return x + self.mlp(self.post_attention_layernorm(x)), kv


class Inner(nn.Module):
    def __init__(self, cfg: ToyConfig):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList([Layer(cfg) for _ in range(cfg.num_hidden_layers)])
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)


class ToyQwen3(nn.Module):
    def __init__(self, cfg: ToyConfig):
        super().__init__()
        self.cfg = cfg
        self.model = Inner(cfg)
        self.apply(self._init)
        # Scale the residual output projections down (GPT-2 style) for a stable start.
        for layer in self.model.layers:
            nn.init.normal_(layer.self_attn.o_proj.weight, std=0.02 / math.sqrt(2 * cfg.num_hidden_layers))
            nn.init.normal_(layer.mlp.down_proj.weight, std=0.02 / math.sqrt(2 * cfg.num_hidden_layers))

    @staticmethod
    def _init(m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=0.02)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, std=0.02)

    def forward(self, ids, past=None, logits=True, final_hidden=False):
        """ids [b, t] at positions P..P+t-1 after `past` (per layer (k, v) of P earlier positions, shared by the
        batch, or None). Returns (logits [b, t, vocab] or None, per-layer (k, v) of all P+t positions)."""
        b, t = ids.shape
        start = 0 if past is None else past[0][0].shape[2]
        cos, sin = rope_tables(self.cfg, start + t, ids.device)
        cos, sin = cos[start:], sin[start:]
        mask = torch.ones(t, start + t, dtype=torch.bool, device=ids.device).triu(start + 1)
        x = self.model.embed_tokens(ids)
        kvs = []
        for i, layer in enumerate(self.model.layers):
            x, kv = layer(x, cos, sin, mask, None if past is None else past[i])
            kvs.append(kv)
        if final_hidden:
            return self.model.norm(x), kvs
        if not logits:
            return None, kvs
        x = self.model.norm(x)
        return x @ self.model.embed_tokens.weight.t(), kvs

    def hf_state_dict(self):
        """Weights under Qwen3ForCausalLM's names (tied: no lm_head.weight)."""
        return {k: v.detach().float().contiguous() for k, v in self.state_dict().items()}


@torch.no_grad()
def greedy(model: ToyQwen3, prompt_ids, stop_ids, max_new: int = 200, banned=()):
    """Greedy decoding with a KV cache; `banned` token ids are never chosen."""
    logits, kvs = model(torch.tensor([list(prompt_ids)]))
    out = []
    for _ in range(max_new):
        row = logits[0, -1]
        if banned:
            row = row.clone()
            row[list(banned)] = float("-inf")
        nxt = int(row.argmax())
        out.append(nxt)
        if nxt in stop_ids or len(prompt_ids) + len(out) >= model.cfg.max_position_embeddings:
            break
        logits, kvs = model(torch.tensor([[nxt]]), past=kvs)
    return out


def load_hf_dir(path: str) -> ToyQwen3:
    """The model of a Hugging Face directory as export.py writes it (config.json + model.safetensors), in eval mode."""
    import json
    import os

    from safetensors_io import read_safetensors

    with open(os.path.join(path, "config.json")) as f:
        c = json.load(f)
    cfg = ToyConfig(vocab_size=c["vocab_size"], hidden_size=c["hidden_size"], intermediate_size=c["intermediate_size"],
                    num_hidden_layers=c["num_hidden_layers"], num_attention_heads=c["num_attention_heads"],
                    num_key_value_heads=c["num_key_value_heads"], head_dim=c["head_dim"], rms_norm_eps=c["rms_norm_eps"],
                    rope_theta=c["rope_theta"], max_position_embeddings=c["max_position_embeddings"])
    model = ToyQwen3(cfg)
    model.load_state_dict(read_safetensors(os.path.join(path, "model.safetensors")))
    model.eval()
    return model
