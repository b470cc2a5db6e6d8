"""Upstream 0.8's binding contract of a runtime, shared by both cave runtimes.

- A *raw binding* (`Runtime.inject_into_namespace`): a value bound by name and kept across
  a reset like an injected item, but never described to the model (upstream's `bindings`;
  skills' exports and persisted outputs are bound this way).
- `inject_resources`: a group of items validated (names free, each one ready to send)
  before any of them is bound, so a failure changes nothing.
- `bind_unique`: a value bound under the first free `prefix_N` name.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import Any

from cave_tui.runtime.items import Injectable, Variable, validate_name


def raw_binding(name: str, value: Any) -> Variable:
    """A Variable the runtime binds and restores but never describes (nor counts as the
    user's own)."""
    item = Variable(name, value)
    item.described = False
    item.by_host = True
    return item


def is_raw_binding(item: object) -> bool:
    return not getattr(item, "described", True)


def unlisted_binding(name: str, value: Any) -> Variable:
    """A raw binding also left out of every namespace listing (the model's and the user's)
    and of session dumps: a skill's export bound before the skill is activated. Injecting
    the item itself later (`Runtime.inject`) replaces it and lists it."""
    item = raw_binding(name, value)
    item.listed = False
    return item


def is_unlisted(item: object) -> bool:
    return not getattr(item, "listed", True)


def bound_prefix(prefix: str) -> str:
    """*prefix* as Python binds it: identifiers are NFKC-normalised (U+212A KELVIN SIGN binds
    `K`), so `bind_unique` checks and hands out the names the namespace really holds."""
    return unicodedata.normalize("NFKC", prefix)


def unique_name_start(prefix: str, start: int) -> str:
    """Check *prefix* and *start* of a `bind_unique` call; returns the first candidate name
    (the prefix as `bound_prefix` gives it)."""
    if isinstance(start, bool) or start < 1:  # upstream refuses True too
        raise ValueError(f"start must be a positive integer, not {start!r}")
    try:
        validate_name(f"{prefix}_{start}")
        return f"{bound_prefix(prefix)}_{start}"
    except ValueError:
        raise ValueError(
            f"prefix {prefix!r} cannot form a Python name ({prefix}_{start})"
        ) from None


def check_group(items: Iterable[Injectable], taken: Iterable[str]) -> None:
    """ValueError unless every item of a group has a name of its own, free of *taken*."""
    claimed = set(taken)
    for item in items:
        kind = "Binding" if is_raw_binding(item) else type(item).__name__
        if item.name in claimed:
            raise ValueError(f"{kind} '{item.name}' already exists")
        claimed.add(item.name)
