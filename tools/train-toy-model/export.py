"""Export a training checkpoint as a Hugging Face Qwen3ForCausalLM directory: model.safetensors (F32, tied
embeddings: no lm_head.weight) and config.json. export.ts then writes the GGUF and the tokenizer files.

python3 export.py --data .tmp/toy --out public/models/toy-qwen3
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_io import write_safetensors  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=".tmp/toy")
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--out", default="public/models/toy-qwen3")
    a = ap.parse_args()
    ck = torch.load(a.checkpoint or os.path.join(a.data, "checkpoint.pt"))
    with open(os.path.join(a.data, "vocab.json")) as f:
        vocab = json.load(f)
    c = ck["config"]
    os.makedirs(a.out, exist_ok=True)
    write_safetensors(os.path.join(a.out, "model.safetensors"), ck["state_dict"], {"format": "pt"})
    config = {
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "vocab_size": c["vocab_size"],
        "hidden_size": c["hidden_size"],
        "intermediate_size": c["intermediate_size"],
        "num_hidden_layers": c["num_hidden_layers"],
        "num_attention_heads": c["num_attention_heads"],
        "num_key_value_heads": c["num_key_value_heads"],
        "head_dim": c["head_dim"],
        "hidden_act": "silu",
        "max_position_embeddings": c["max_position_embeddings"],
        "rms_norm_eps": c["rms_norm_eps"],
        "rope_theta": c["rope_theta"],
        "rope_scaling": None,
        "attention_bias": False,
        "attention_dropout": 0.0,
        "tie_word_embeddings": True,
        "use_cache": True,
        "use_sliding_window": False,
        "sliding_window": None,
        "bos_token_id": vocab["bosId"],
        "eos_token_id": vocab["eosId"],
        "torch_dtype": "float32",
    }
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    with open(os.path.join(a.out, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": vocab["bosId"], "eos_token_id": vocab["eosId"], "do_sample": False}, f, indent=2)
        f.write("\n")
    print(f"exported step {ck['step']} (seed {ck['seed']}) to {a.out}")


if __name__ == "__main__":
    main()
