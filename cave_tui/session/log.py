"""`events.jsonl`: one JSON record per line, appended, flushed per record, fsynced on demand.

A process killed mid-write can leave a torn last line; `read_records` ignores it
(and reports it) and `EventLog` cuts it off before appending again, so every
complete record survives and the file stays valid JSON Lines.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from cave_tui.dataio.atomic import atomic_path
from cave_tui.dataio.bounded_read import EVENTS_LIMIT, open_regular, read_fd, read_regular
from cave_tui.session.records import record_problem


def _default(obj: Any) -> Any:
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    if isinstance(obj, set | frozenset | tuple):
        return list(obj)
    if isinstance(obj, Path):
        return str(obj)
    return str(obj)


def dumps_record(record: dict[str, Any]) -> str:
    return json.dumps(record, default=_default, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class SkippedLine:
    """A line of the log that was skipped, and why (not JSON, or a record cave cannot use)."""

    line: int  # 1-based
    reason: str

    def __str__(self) -> str:
        return f"line {self.line} ({self.reason})"


@dataclass
class ReadReport:
    """What `read_records` had to skip."""

    torn_tail: bool = False  # the last line was incomplete (killed mid-write)
    bad_lines: list[int] = field(default_factory=list)  # 1-based numbers of unreadable lines
    skipped: list[SkippedLine] = field(default_factory=list)  # every complete line skipped
    good_bytes: int = 0  # length of the valid prefix (where appending may resume)
    ends_line: bool = True  # the file is empty or ends with a newline


def read_records(path: str | Path) -> tuple[list[dict[str, Any]], ReadReport]:
    """All usable records of an events file, tolerating a torn last line.

    The file must be a regular file (not a link, a FIFO...) of at most `EVENTS_LIMIT`
    bytes: else `UnsafeFileError` (an `OSError`) says why. A missing file has no records.
    """
    try:
        data = read_regular(path, EVENTS_LIMIT)
    except FileNotFoundError:
        return [], ReadReport()
    return parse_records(data)


def _parse(line: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """The record on *line*, or None and why it cannot be used (`records.record_problem`)."""
    try:
        record = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return None, "not JSON"
    problem = record_problem(record)
    return (None, problem) if problem is not None else (record, None)


def parse_records(data: bytes) -> tuple[list[dict[str, Any]], ReadReport]:
    """The usable records in the bytes of an events file (see `read_records`): a line that
    is not JSON, or a record of the wrong shape, is skipped and named in the report."""
    report = ReadReport(ends_line=not data or data.endswith(b"\n"))
    records: list[dict[str, Any]] = []
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    offset = 0
    for number, line in enumerate(lines, 1):
        offset += len(line) + 1
        report.good_bytes = offset  # a complete line: appending after it is safe
        if not line.strip():
            continue
        record, problem = _parse(line)
        if record is None:
            report.skipped.append(SkippedLine(number, problem or "unreadable"))
            if problem == "not JSON":
                report.bad_lines.append(number)
            continue
        records.append(record)
    if tail.strip():
        record, problem = _parse(tail)
        if problem == "not JSON":
            report.torn_tail = True  # killed mid-write: cut off before appending
        else:
            report.good_bytes = len(data)
            if record is None:
                report.skipped.append(SkippedLine(len(lines) + 1, problem or "unreadable"))
            else:
                records.append(record)
    return records, report


def _open_log(path: Path) -> BinaryIO:
    """The log opened for appending and reading: a regular file, never through a link."""
    fd = open_regular(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    return os.fdopen(fd, "a+b")


class LogInUseError(OSError):
    """Another live process is recording this session."""


class EventLog:
    """Appends records to `events.jsonl`; each `append` reaches the OS before it returns.

    The file is locked (`flock`) while open, so two processes never append to one
    session; the lock dies with its process, even on `kill -9`.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._write_lock = threading.Lock()  # background hashes append from their thread
        self._f = _open_log(self.path)
        try:
            self._lock()
            records, report = parse_records(read_fd(self._f.fileno(), self.path, EVENTS_LIMIT))
            self.seq = max((int(r.get("seq", 0)) for r in records), default=0)
            if report.good_bytes < os.fstat(self._f.fileno()).st_size:
                # Cut a torn tail (a record cut by a crash) so appends start on a fresh line.
                os.ftruncate(self._f.fileno(), report.good_bytes)
            elif not report.ends_line:  # a complete last record without its newline
                self._f.write(b"\n")
                self._f.flush()
            self.repaired = report.torn_tail
        except BaseException:
            self._f.close()
            raise

    def _lock(self) -> None:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            return
        try:
            fcntl.flock(self._f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LogInUseError(
                f"{self.path} is being recorded by another running cave process"
            ) from None

    def append(self, record: dict[str, Any], *, sync: bool = False) -> dict[str, Any]:
        with self._write_lock:
            self.seq += 1
            record = {"seq": self.seq, "t": round(time.time(), 3), **record}
            self._f.write((dumps_record(record) + "\n").encode("utf-8"))
            self._f.flush()
            if sync:
                os.fsync(self._f.fileno())
            return record

    def lost(self) -> bool:
        """True when the file open here is no longer at `path` (deleted, or its folder
        deleted or moved away): appends would go to a file nobody can find."""
        if self._f.closed:
            return False
        opened = os.fstat(self._f.fileno())
        if opened.st_nlink == 0:
            return True
        try:
            named = os.stat(self.path)
        except FileNotFoundError:
            return True
        return (named.st_dev, named.st_ino) != (opened.st_dev, opened.st_ino)

    def relink(self) -> int:
        """Write every record of the open (possibly deleted) file to a new file at `path`,
        re-creating its folder, and append there from now on; returns the bytes copied.

        The deleted file stays readable through its descriptor until it is closed, so
        nothing recorded is lost. Raises `OSError` when the new file cannot be written.
        """
        with self._write_lock:
            self._f.flush()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._f.seek(0)
            with atomic_path(self.path) as tmp, open(tmp, "wb") as out:
                shutil.copyfileobj(self._f, out)
            fresh = _open_log(self.path)
            old, self._f = self._f, fresh
            try:
                self._lock()
            finally:
                old.close()
            return os.fstat(fresh.fileno()).st_size

    def sync(self) -> None:
        if not self._f.closed:
            self._f.flush()
            os.fsync(self._f.fileno())

    def close(self) -> None:
        if not self._f.closed:
            try:
                self.sync()
            except OSError:
                pass  # every record was already flushed to the OS
            finally:
                self._f.close()

    @property
    def closed(self) -> bool:
        return self._f.closed
