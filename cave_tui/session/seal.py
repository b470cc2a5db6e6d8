"""The seal on a session's snapshot: proof that this user's cave wrote the pickles in it.

After each snapshot the recorder seals `namespace/manifest.json` with an HMAC keyed by a
secret only this user can read (`snapshot.key` in cave's data folder), over the manifest's
bytes (which hold every file's sha256) and the names it was *not* trusted to load (pickles a
resume held back). `meta.json` keeps the seal. A resume trusts the pickles of a snapshot
whose seal checks out; a snapshot changed by anyone else (the manifest, a file, the seal),
copied from another machine or user, or written before seals existed, needs `--trust`.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

KEY_FILE = "snapshot.key"
KEY_BYTES = 32
META_KEY = "snapshot_seal"


def key_path() -> Path:
    """`snapshot.key` in cave's data folder (`CAVE_DATA_DIR`, else the platform's)."""
    override = os.environ.get("CAVE_DATA_DIR")
    if override:
        return Path(override).expanduser() / KEY_FILE
    from platformdirs import user_data_dir

    return Path(user_data_dir("cave")) / KEY_FILE


def _read_key(path: Path) -> bytes | None:
    with contextlib.suppress(OSError):
        data = path.read_bytes()
        if len(data) == KEY_BYTES:
            return data
    return None


def signing_key(*, create: bool = True) -> bytes | None:
    """This user's key (made on first use, readable by the user only); None if unavailable."""
    path = key_path()
    key = _read_key(path)
    if key is not None or not create:
        return key
    tmp = path.with_name(f".{KEY_FILE}.{secrets.token_hex(6)}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(KEY_BYTES))
            f.flush()
            os.fsync(f.fileno())
        os.link(tmp, path)  # whole or not at all; a cave that got there first wins
    except FileExistsError:
        pass
    except OSError:
        return None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    return _read_key(path)


def _mac(key: bytes, manifest: bytes, untrusted: Collection[str]) -> str:
    message = hashlib.sha256(manifest).hexdigest() + "\n" + json.dumps(sorted(untrusted))
    return hmac.new(key, message.encode(), hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Seal:
    """The HMAC of a snapshot manifest, and the names it holds without trust."""

    mac: str
    untrusted: tuple[str, ...] = ()

    def to_meta(self) -> dict[str, Any]:
        return {"hmac": self.mac, "untrusted": list(self.untrusted)}

    @classmethod
    def from_meta(cls, data: Any) -> Seal | None:
        if not isinstance(data, dict):
            return None
        mac, untrusted = data.get("hmac"), data.get("untrusted", [])
        if not isinstance(mac, str) or not isinstance(untrusted, list):
            return None
        if not all(isinstance(n, str) for n in untrusted):
            return None
        return cls(mac, tuple(untrusted))


def seal(manifest: bytes, untrusted: Iterable[str] = ()) -> Seal | None:
    """The seal of a snapshot manifest cave just wrote; None when there is no key."""
    key = signing_key()
    if key is None:
        return None
    held = tuple(sorted(set(untrusted)))
    return Seal(_mac(key, manifest, held), held)


def vouched_names(stored: Seal | None, manifest: bytes, names: Iterable[str]) -> set[str]:
    """The *names* of a manifest whose pickles this user's cave wrote: all but the held-back
    ones when *stored* is the manifest's valid seal, none otherwise."""
    key = signing_key(create=False) if stored is not None else None
    if stored is None or key is None:
        return set()
    if not hmac.compare_digest(stored.mac, _mac(key, manifest, stored.untrusted)):
        return set()
    return set(names) - set(stored.untrusted)
