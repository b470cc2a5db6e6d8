"""Token counting with a real tokenizer, offline, without importing litellm.

litellm ships the cl100k_base BPE file inside its package (it is what its own
`token_counter` uses offline). We point tiktoken's cache at that folder, found
through `importlib.util.find_spec` so litellm itself (about 3 s to import) is
never loaded just to count tokens. The ranks read from it are kept in a compact copy in
cave's cache folder (tokenizer_cache.py), which later processes read in a tenth of the time.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

from cave_tui.models import tokenizer_cache

# Per-message framing tokens in OpenAI's chat format.
_PER_MESSAGE = 3
_PER_REPLY = 3


ENCODING = "cl100k_base"


def _copy_path() -> Path:
    """Where the compact copy of the encoding's ranks lives (tokenizer_cache.py)."""
    import platformdirs

    return platformdirs.user_cache_path("cave") / "tokenizers" / f"{ENCODING}.ranks"


@functools.cache
def _encoding() -> Any:
    spec = importlib.util.find_spec("litellm")
    if spec and spec.submodule_search_locations:
        folder = (
            Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
        )
        if folder.is_dir():
            os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(folder))
    try:
        import tiktoken
    except Exception:
        return None
    version = str(getattr(tiktoken, "__version__", ""))
    copy = _copy_path()
    saved = tokenizer_cache.read(copy, ENCODING, version)
    if saved is not None:
        try:
            return tiktoken.Encoding(**saved)
        except Exception:  # refused by tiktoken: rebuilt from its own file below
            pass
    try:
        from tiktoken_ext import openai_public  # type: ignore[import-untyped]

        arguments = openai_public.cl100k_base()  # its file, checked against its digest
        encoding = tiktoken.Encoding(**arguments)
    except Exception:  # no tokenizer file and no network: fall back to an estimate
        return None
    tokenizer_cache.write(copy, arguments, version)
    return encoding


def count_text(text: str) -> int:
    enc = _encoding()
    if enc is None:
        return max(1, len(text) // 4) if text else 0
    return len(enc.encode(text, disallowed_special=()))


def at_most_tokens(messages: list[dict[str, Any]]) -> int:
    """An upper bound of `count_messages(messages)` without the tokenizer (loading it takes
    about 0.25 s): a cl100k token holds at least one UTF-8 byte."""
    total = _PER_REPLY
    for message in messages:
        content = message.get("content") or ""
        if not isinstance(content, str):
            content = json.dumps(content)
        role = str(message.get("role", ""))
        total += _PER_MESSAGE + len(content.encode("utf-8", "surrogatepass")) + len(role)
    return total


def count_messages(messages: list[dict[str, Any]]) -> int:
    """cl100k tokens of a chat prompt, framing included."""
    total = _PER_REPLY
    for message in messages:
        total += _PER_MESSAGE
        content = message.get("content") or ""
        if not isinstance(content, str):
            content = json.dumps(content)
        total += count_text(content) + count_text(str(message.get("role", "")))
    return total
