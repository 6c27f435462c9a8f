"""Minimal safetensors reading and writing (F32 / F16) without the safetensors package."""
import json
import struct

import numpy as np
import torch

DTYPES = {"F32": np.float32, "F16": np.float16}


def write_safetensors(path, tensors, metadata=None):
    header = {"__metadata__": metadata or {"format": "pt"}}
    offset = 0
    blobs = []
    for name in sorted(tensors):
        b = tensors[name].detach().to(torch.float32).contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape), "data_offsets": [offset, offset + len(b)]}
        offset += len(b)
        blobs.append(b)
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        s, e = t["data_offsets"]
        arr = np.frombuffer(raw[8 + n + s:8 + n + e], dtype=DTYPES[t["dtype"]]).reshape(t["shape"])
        out[name] = torch.from_numpy(arr.astype(np.float32))
    return out
