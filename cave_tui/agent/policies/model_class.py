"""Which preset a model gets by default, and why: small local models get `small`, others `lean`.

A model cave can size (the parameter count in its GGUF file, the one a llama.cpp server
reports, or a size in its name such as `qwen2.5-coder-1.5b` or `llama3.2:3b`) and that runs
on this machine is small up to `SMALL_MAX_PARAMS`; the embedded model always is. Hosted
models, large ones and those cave cannot size get `lean`, which adds no call to correct
work. A preset the user sets (`--policies`, `policies =`, `/policies`) always wins.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import BinaryIO

SMALL_MAX_PARAMS = 8e9  # up to 8B parameters: the small-model preset
AUTO = "auto"  # the spec that means "by the model's class"
SMALL_PRESET = "small"
LEAN_PRESET = "lean"

_SIZE_IN_NAME = re.compile(r"(?:(\d+)x)?(\d+(?:\.\d+)?)\s*b(?![a-z0-9])", re.IGNORECASE)
_LOCAL_PROVIDERS = ("ollama/", "ollama_chat/", "lm_studio/", "llamafile/")


class ModelClass(StrEnum):
    """How the preset was chosen."""

    SMALL = "small"  # a local model of at most SMALL_MAX_PARAMS, or the embedded one
    LARGE = "large"  # a local model sized above SMALL_MAX_PARAMS
    HOSTED = "hosted"  # a model served elsewhere
    UNSIZED = "unsized"  # a local model cave cannot size
    CHOSEN = "chosen"  # the user named the preset


@dataclass(frozen=True)
class PresetChoice:
    """The preset in force and the reason, as the status line and `/policies` say it."""

    preset: str
    model_class: ModelClass
    reason: str

    def describe(self) -> str:
        """`small (the embedded model, 1.5B parameters)`."""
        return f"{self.preset} ({self.reason})"


def params_from_name(name: str) -> float | None:
    """The parameter count a model's name states (`qwen2.5-coder-1.5b` -> 1.5e9, `8x7b`
    -> 5.6e10), or None. The last size in the name wins (`org/model-7b`)."""
    found = _SIZE_IN_NAME.findall(name.rsplit("/", 1)[-1])
    if not found:
        return None
    experts, size = found[-1]
    return float(size) * 1e9 * (int(experts) if experts else 1)


def params_from_server(meta: Mapping[str, object]) -> float | None:
    """The parameter count a llama.cpp server reports: `/v1/models`' `meta.n_params`, or
    a size in the `model_path` of `/props`."""
    count = meta.get("n_params")
    if isinstance(count, int | float) and count > 0:
        return float(count)
    path = meta.get("model_path")
    return params_from_name(Path(path).stem) if isinstance(path, str) else None


# -- GGUF: the header's metadata, read up to the parameter count or the size label ---------------

_SCALARS = dict(enumerate("BbHhIif?")) | {10: "Q", 11: "q", 12: "d"}  # by GGUF value type
_STRING, _ARRAY = 8, 9
_MAX_KEYS = 64  # the general.* keys come first; the tokenizer's arrays after them


def _read(f: BinaryIO, fmt: str) -> object:
    size = struct.calcsize("<" + fmt)
    data = f.read(size)
    if len(data) != size:
        raise ValueError("truncated GGUF header")
    return struct.unpack("<" + fmt, data)[0]


def _string(f: BinaryIO) -> str:
    length = _read(f, "Q")
    assert isinstance(length, int)
    if length > 1 << 20:
        raise ValueError("GGUF string too long")
    return f.read(length).decode("utf-8", "replace")


def _value(f: BinaryIO, kind: int) -> object:
    if kind == _STRING:
        return _string(f)
    if kind == _ARRAY:
        inner, count = _read(f, "I"), _read(f, "Q")
        assert isinstance(inner, int) and isinstance(count, int)
        if count > 1 << 16:
            raise ValueError("large GGUF array: past the general keys")
        return [_value(f, inner) for _ in range(count)]
    if kind not in _SCALARS:
        raise ValueError(f"unknown GGUF value type {kind}")
    return _read(f, _SCALARS[kind])


def gguf_params(path: str | Path) -> float | None:
    """The parameter count a GGUF file's metadata states (`general.parameter_count`, else
    `general.size_label` or `general.name`), or None when it does not or cannot be read."""
    try:
        with Path(path).open("rb") as f:
            if f.read(4) != b"GGUF":
                return None
            _read(f, "I")  # version
            _read(f, "Q")  # tensors
            keys = _read(f, "Q")
            assert isinstance(keys, int)
            label: float | None = None
            for _ in range(min(keys, _MAX_KEYS)):
                key = _string(f)
                kind = _read(f, "I")
                assert isinstance(kind, int)
                value = _value(f, kind)
                if key == "general.parameter_count" and isinstance(value, int | float):
                    return float(value)
                if key in ("general.size_label", "general.name") and isinstance(value, str):
                    label = label or params_from_name(value)
                if not key.startswith("general."):
                    break
            return label or params_from_name(Path(path).stem)
    except (OSError, ValueError, struct.error, AssertionError):
        return params_from_name(Path(path).stem)


# -- the decision ---------------------------------------------------------------------------------


def _billions(params: float) -> str:
    return f"{params / 1e9:.1f}".rstrip("0").rstrip(".") + "B parameters"


def classify(
    *, embedded: bool = False, local: bool = False, params: float | None = None, source: str = ""
) -> PresetChoice:
    """The preset for a model: *embedded* (cave's own), *local* (served on this machine),
    *params* when known and *source* saying where that count came from."""
    where = f" {source}" if source else ""
    if embedded:
        size = f", {_billions(params)}" if params else ""
        return PresetChoice(SMALL_PRESET, ModelClass.SMALL, f"the embedded model{size}")
    if not local:
        return PresetChoice(LEAN_PRESET, ModelClass.HOSTED, "not a local model")
    if params is None:
        return PresetChoice(LEAN_PRESET, ModelClass.UNSIZED, "a local model of unknown size")
    sized = f"a local model, {_billions(params)}{where}"
    if params <= SMALL_MAX_PARAMS:
        return PresetChoice(SMALL_PRESET, ModelClass.SMALL, sized)
    return PresetChoice(LEAN_PRESET, ModelClass.LARGE, sized)


def is_local(model_id: str, api_base: str | None) -> bool:
    """Served on this machine: a loopback `api_base`, or a local server's provider prefix."""
    from cave_tui.models.endpoints import is_loopback

    return is_loopback(api_base) or model_id.startswith(_LOCAL_PROVIDERS)


def preset_for(model: object, server_params: float | None = None) -> PresetChoice:
    """The default preset for *model* (any `Model`), from what it says of itself: the
    embedded model's GGUF, else its id and `api_base`; *server_params* is what its server
    reported, when the caller asked it (`params_from_server`)."""
    server = getattr(model, "server", None)
    weights = getattr(server, "weights", None)
    path = getattr(weights, "path", None)
    if isinstance(path, Path | str):
        return classify(embedded=True, params=gguf_params(path))
    model_id = str(getattr(model, "model_id", "") or "")
    api_base = getattr(model, "api_base", None)
    local = is_local(model_id, api_base if isinstance(api_base, str) else None)
    if server_params is not None:
        return classify(local=local, params=server_params, source="from its server")
    named = params_from_name(model_id)
    return classify(local=local, params=named, source="from its name" if named else "")


def chosen(spec: str) -> PresetChoice:
    """A preset or spec the user set."""
    return PresetChoice(spec, ModelClass.CHOSEN, "set by the user")


async def served_params(model_id: str, api_base: str, *, timeout: float = 2.0) -> float | None:
    """The parameter count the server at *api_base* reports for *model_id*: llama.cpp's
    `/v1/models` (`meta.n_params`), else the size in its `/props` model path; else None."""
    import httpx

    base = api_base.rstrip("/")
    name = model_id.split("/", 1)[1] if model_id.startswith("openai/") else model_id
    async with httpx.AsyncClient(timeout=httpx.Timeout(timeout), trust_env=False) as client:
        try:
            listing = (await client.get(f"{base}/models")).json().get("data") or []
            for entry in listing:
                meta = entry.get("meta")
                mine = entry.get("id") == name or len(listing) == 1
                found = params_from_server(meta) if mine and isinstance(meta, dict) else None
                if found:
                    return found
            props = (await client.get(base.removesuffix("/v1") + "/props")).json()
        except (httpx.HTTPError, ValueError, AttributeError, TypeError):
            return None
        return params_from_server(props) if isinstance(props, dict) else None


# Keys of llama.cpp's `/props` (its server's settings) that no other server's answer has.
LLAMA_CPP_PROPS = frozenset({"default_generation_settings", "total_slots"})


async def continues_replies(api_base: str, *, timeout: float = 2.0) -> bool:
    """Whether the server at *api_base* is llama.cpp's (its `/props` says so), which continues
    a request's last assistant message (prefill): a reply a policy begins is continued."""
    import httpx

    url = api_base.rstrip("/").removesuffix("/v1") + "/props"
    async with httpx.AsyncClient(timeout=httpx.Timeout(timeout), trust_env=False) as client:
        try:
            props = (await client.get(url)).json()
        except (httpx.HTTPError, ValueError):
            return False
    return isinstance(props, dict) and props.keys() >= LLAMA_CPP_PROPS
