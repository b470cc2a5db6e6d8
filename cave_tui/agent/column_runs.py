"""Column names listed short: a run of names that differ only in their increasing numbers
(`sf_h00` … `sf_h23`, `pixel_0_0` … `pixel_7_7`, `1960` … `2013`) is written once, as
"sf_h00 to sf_h23 (24)", so that a wide frame's every column fits in a line the model reads."""

from __future__ import annotations

import re
from collections.abc import Sequence

NUMBERS = re.compile(r"\d+")
MIN_RUN = 4  # shorter runs are listed name by name


def _shape(name: str) -> str:
    return NUMBERS.sub("#", name)


def _numbers(name: str) -> tuple[int, ...]:
    return tuple(int(n) for n in NUMBERS.findall(name))


def with_runs(names: Sequence[str], min_run: int = MIN_RUN) -> list[tuple[str, int]]:
    """*names* in order as (text, how many columns it stands for): each run of at least
    *min_run* neighbours with the same text around increasing numbers is one entry,
    "first to last (count)"."""
    out: list[tuple[str, int]] = []
    i = 0
    while i < len(names):
        j = i
        shape = _shape(names[i])
        if "#" in shape:
            while (
                j + 1 < len(names)
                and _shape(names[j + 1]) == shape
                and _numbers(names[j + 1]) > _numbers(names[j])
            ):
                j += 1
        count = j - i + 1
        if count >= min_run:
            out.append((f"{names[i]} to {names[j]} ({count})", count))
        else:
            out.extend((name, 1) for name in names[i : j + 1])
        i = j + 1
    return out
