"""`DataOptions`: the data and session options of one command invocation (`--inject`,
`--load`, `--dump`, `--trust`, `--resume`, `--sessions-dir`), read by `app.startup`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class DataOptions:
    """The data/session options of one command invocation."""

    inject: list[str] = field(default_factory=list)
    load: Path | None = None
    dump: Path | None = None
    trust: bool = False
    resume: str | None = None
    sessions_dir: Path | None = None
    record: bool = True  # False: start no new session (a resumed one is still recorded)
