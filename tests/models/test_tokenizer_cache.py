"""The compact copy of the tokenizer's ranks: the same tokens as tiktoken's own file, and a
damaged, foreign or unwritable copy is never used and never an error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import tiktoken

from cave_tui.models import tokenizer_cache, tokens

TEXT = "def f(x):\n    return x ** 2  # ünïcödé, 数字 123456 and <|endoftext|> as text\n"


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    tokens._encoding()  # points tiktoken at the file litellm ships
    from tiktoken_ext import openai_public

    return openai_public.cl100k_base()


def test_the_copy_reads_back_the_same_encoding(tmp_path: Path, spec: dict[str, Any]) -> None:
    path = tmp_path / "cl100k_base.ranks"
    tokenizer_cache.write(path, spec, tiktoken.__version__)
    saved = tokenizer_cache.read(path, "cl100k_base", tiktoken.__version__)
    assert saved is not None
    assert saved["mergeable_ranks"] == spec["mergeable_ranks"]
    assert saved["special_tokens"] == spec["special_tokens"]
    ours, theirs = tiktoken.Encoding(**saved), tiktoken.Encoding(**spec)
    assert ours.encode(TEXT, disallowed_special=()) == theirs.encode(TEXT, disallowed_special=())


def test_a_damaged_or_foreign_copy_is_refused(tmp_path: Path, spec: dict[str, Any]) -> None:
    path = tmp_path / "cl100k_base.ranks"
    tokenizer_cache.write(path, spec, tiktoken.__version__)
    whole = path.read_bytes()
    assert tokenizer_cache.read(path, "cl100k_base", "0.0.1") is None  # another tiktoken
    assert tokenizer_cache.read(path, "o200k_base", tiktoken.__version__) is None
    for damaged in (whole[:-1], whole[: len(whole) // 2], b"garbage\n" + whole, b"", b"{}\n"):
        path.write_bytes(damaged)
        assert tokenizer_cache.read(path, "cl100k_base", tiktoken.__version__) is None
    assert tokenizer_cache.read(tmp_path / "missing", "cl100k_base", tiktoken.__version__) is None


def test_an_unwritable_folder_is_left_alone(tmp_path: Path, spec: dict[str, Any]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    tokenizer_cache.write(blocker / "cl100k_base.ranks", spec, tiktoken.__version__)
    assert blocker.read_text() == "not a folder"


def test_the_counter_builds_the_copy_then_uses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "tokenizers" / "cl100k_base.ranks"
    monkeypatch.setattr(tokens, "_copy_path", lambda: copy)
    expected = tiktoken.get_encoding("cl100k_base").encode(TEXT, disallowed_special=())
    for _ in range(2):  # the first builds the copy from tiktoken's file, the second reads it
        tokens._encoding.cache_clear()
        assert tokens._encoding().encode(TEXT, disallowed_special=()) == expected
        assert copy.is_file()
    copy.write_bytes(b"damaged")
    tokens._encoding.cache_clear()
    assert tokens.count_text(TEXT) == len(expected)
    assert tokenizer_cache.read(copy, "cl100k_base", tiktoken.__version__) is not None  # rebuilt
    tokens._encoding.cache_clear()
