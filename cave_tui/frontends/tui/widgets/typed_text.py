"""What a key typed while a dialog is open does to the input below it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TypedText:
    """What a routed key does to the input: erase *erase* characters, then insert *text*."""

    text: str = ""
    erase: int = 0
