#!/usr/bin/env python3
"""llama.cpp's own dequantization (ggml's type traits: to_float) through ctypes on the libggml-base that the
node-llama-cpp package ships. Usage: ggml-dequantize-oracle.py LIBDIR JOBS.json OUT.bin (python3, standard library
only). JOBS.json: [{"type": <ggml type id>, "file": <path of raw block bytes>, "elements": <count>}, ...];
OUT.bin: the f32 values of every job, one after another (little-endian)."""
import ctypes, json, os, sys


class TypeTraits(ctypes.Structure):
    _fields_ = [("type_name", ctypes.c_char_p), ("blck_size", ctypes.c_int64), ("blck_size_interleave", ctypes.c_int64),
                ("type_size", ctypes.c_size_t), ("is_quantized", ctypes.c_bool), ("to_float", ctypes.c_void_p),
                ("from_float_ref", ctypes.c_void_p)]


TO_FLOAT = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(ctypes.c_float), ctypes.c_int64)


def main():
    libdir, jobs_path, out_path = sys.argv[1:4]
    ggml = ctypes.CDLL(os.path.join(libdir, "libggml-base.so"))
    ggml.ggml_get_type_traits.restype = ctypes.POINTER(TypeTraits)
    ggml.ggml_get_type_traits.argtypes = [ctypes.c_int]
    with open(jobs_path) as f:
        jobs = json.load(f)
    with open(out_path, "wb") as out:
        for job in jobs:
            traits = ggml.ggml_get_type_traits(job["type"]).contents
            if not traits.to_float:
                sys.exit(f"ggml type {job['type']} has no to_float")
            with open(job["file"], "rb") as f:
                data = f.read()
            n = job["elements"]
            if len(data) != n // traits.blck_size * traits.type_size:
                sys.exit(f"job {job['file']}: {len(data)} bytes is not {n} elements of {traits.type_name.decode()}")
            src = ctypes.create_string_buffer(data, len(data))
            dst = (ctypes.c_float * n)()
            TO_FLOAT(traits.to_float)(ctypes.cast(src, ctypes.c_void_p), dst, n)
            out.write(bytes(dst))


if __name__ == "__main__":
    main()
