"""A tiny llama.cpp model that reads and writes the embedded model's tokens.

The tests of what cave does around its model server (saved prompt states, restarts, a dead
server, a truncated file) need llama.cpp to load a real GGUF and compute real prompts, not
the embedded model's 1.5 billion weights: on 2 cores shared with the suite, those cost
minutes of CPU. This file has the embedded model's tokenizer (its entries are copied byte for
byte, so prompts have the same tokens and the chat template is the same) and a `qwen2` model
of 16 small layers whose weights are zero: each layer passes its input on unchanged, and the
output always prefers one token (`yes`). Answers are never empty and never end early.

The `gguf` package's reader decodes every one of the 300,000 tokenizer strings (15 s here);
this walks past them and copies their bytes.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

import numpy as np

MAGIC = b"GGUF"
ALIGNMENT = 32
# GGUF value types and their fixed sizes (strings and arrays are walked).
UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64 = 4, 5, 6, 7, 8, 9, 10
FIXED = {0: 1, 1: 1, 2: 2, 3: 2, UINT32: 4, INT32: 4, FLOAT32: 4, BOOL: 1, UINT64: 8, 11: 8, 12: 8}
F32, Q8_0 = 0, 8  # ggml tensor types
EMBED, HEADS, KV_HEADS, FF, LAYERS = 128, 2, 2, 128, 16
PREFERRED = "yes"


def _skip_value(f: BinaryIO, kind: int) -> None:
    if kind == STRING:
        (n,) = struct.unpack("<Q", f.read(8))
        f.seek(n, 1)
    elif kind == ARRAY:
        item, count = struct.unpack("<IQ", f.read(12))
        if item in FIXED:
            f.seek(FIXED[item] * count, 1)
        else:
            for _ in range(count):
                _skip_value(f, item)
    else:
        f.seek(FIXED[kind], 1)


def _tokenizer_entries(source: Path) -> tuple[list[bytes], list[bytes]]:
    """The raw key-value entries of `source` whose key starts with `tokenizer.`, and the
    token strings (for the preferred token's id)."""
    entries: list[bytes] = []
    tokens: list[bytes] = []
    with source.open("rb") as f:
        if f.read(4) != MAGIC:
            raise ValueError(f"{source} is not a GGUF file")
        _version, _tensors, count = struct.unpack("<IQQ", f.read(20))
        for _ in range(count):
            start = f.tell()
            (n,) = struct.unpack("<Q", f.read(8))
            key = f.read(n).decode()
            (kind,) = struct.unpack("<I", f.read(4))
            if key == "tokenizer.ggml.tokens":
                _item, total = struct.unpack("<IQ", f.read(12))
                for _ in range(total):
                    (size,) = struct.unpack("<Q", f.read(8))
                    tokens.append(f.read(size))
            else:
                _skip_value(f, kind)
            if key.startswith("tokenizer."):
                end = f.tell()
                f.seek(start)
                entries.append(f.read(end - start))
    return entries, tokens


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def _kv(key: str, kind: int, value: object) -> bytes:
    head = _string(key) + struct.pack("<I", kind)
    if kind == STRING:
        return head + _string(str(value))
    fmt = {UINT32: "<I", FLOAT32: "<f"}[kind]
    return head + struct.pack(fmt, value)


def _q8_0(rows: np.ndarray) -> bytes:
    """ggml's Q8_0 of a float matrix: per 32 values, an f16 scale and 32 int8."""
    blocks = rows.reshape(-1, 32).astype(np.float32)
    scale = np.abs(blocks).max(axis=1) / 127.0
    safe = np.where(scale == 0, 1.0, scale)
    quants = np.round(blocks / safe[:, None]).astype(np.int8)
    out = np.empty(len(blocks), dtype=[("d", "<f2"), ("qs", "i1", (32,))])
    out["d"], out["qs"] = scale.astype(np.float16), quants
    return out.tobytes()


def _ones(size: int) -> bytes:
    return np.ones(size, np.float32).tobytes()


def _zeros(*dims: int) -> bytes:
    """A float32 tensor of zeros with ggml's dims (innermost first)."""
    return np.zeros(dims[::-1], np.float32).tobytes()


def write_tiny_model(source: Path, target: Path) -> Path:
    """Write the tiny model with `source`'s tokenizer to `target`; return `target`."""
    entries, tokens = _tokenizer_entries(source)
    vocab = len(tokens)
    preferred = tokens.index(PREFERRED.encode())
    arch = "qwen2"
    kvs = [
        _kv("general.architecture", STRING, arch),
        _kv("general.name", STRING, "cave test model (layers of zeros)"),
        _kv(f"{arch}.block_count", UINT32, LAYERS),
        _kv(f"{arch}.context_length", UINT32, 32768),
        _kv(f"{arch}.embedding_length", UINT32, EMBED),
        _kv(f"{arch}.feed_forward_length", UINT32, FF),
        _kv(f"{arch}.attention.head_count", UINT32, HEADS),
        _kv(f"{arch}.attention.head_count_kv", UINT32, KV_HEADS),
        _kv(f"{arch}.rope.freq_base", FLOAT32, 1000000.0),
        _kv(f"{arch}.attention.layer_norm_rms_epsilon", FLOAT32, 1e-6),
        *entries,
    ]
    kv_dim = EMBED // HEADS * KV_HEADS
    embedding = np.ones((vocab, EMBED), dtype=np.float32)
    embedding[preferred] = 2.0  # tied output: every state scores this token highest
    tensors: list[tuple[str, tuple[int, ...], int, bytes]] = [
        ("token_embd.weight", (EMBED, vocab), Q8_0, _q8_0(embedding)),
        ("output_norm.weight", (EMBED,), F32, _ones(EMBED)),
    ]
    zeros = _zeros
    for i in range(LAYERS):
        block = f"blk.{i}."
        tensors += [
            (block + "attn_norm.weight", (EMBED,), F32, _ones(EMBED)),
            (block + "ffn_norm.weight", (EMBED,), F32, _ones(EMBED)),
            (block + "attn_q.weight", (EMBED, EMBED), F32, zeros(EMBED, EMBED)),
            (block + "attn_q.bias", (EMBED,), F32, zeros(EMBED)),
            (block + "attn_k.weight", (EMBED, kv_dim), F32, zeros(EMBED, kv_dim)),
            (block + "attn_k.bias", (kv_dim,), F32, zeros(kv_dim)),
            (block + "attn_v.weight", (EMBED, kv_dim), F32, zeros(EMBED, kv_dim)),
            (block + "attn_v.bias", (kv_dim,), F32, zeros(kv_dim)),
            (block + "attn_output.weight", (EMBED, EMBED), F32, zeros(EMBED, EMBED)),
            (block + "ffn_gate.weight", (EMBED, FF), F32, zeros(EMBED, FF)),
            (block + "ffn_up.weight", (EMBED, FF), F32, zeros(EMBED, FF)),
            (block + "ffn_down.weight", (FF, EMBED), F32, zeros(FF, EMBED)),
        ]
    infos, offset = [], 0
    for name, dims, kind, data in tensors:
        infos.append(
            _string(name)
            + struct.pack("<I", len(dims))
            + struct.pack(f"<{len(dims)}Q", *dims)
            + struct.pack("<IQ", kind, offset)
        )
        offset += -(-len(data) // ALIGNMENT) * ALIGNMENT
    head = MAGIC + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + b"".join(kvs) + b"".join(infos)
    tmp = target.with_name(target.name + ".tmp")
    with tmp.open("wb") as out:
        out.write(head + b"\0" * (-len(head) % ALIGNMENT))
        for _name, _dims, _kind, data in tensors:
            out.write(data + b"\0" * (-len(data) % ALIGNMENT))
    tmp.replace(target)
    return target
