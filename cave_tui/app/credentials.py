"""API keys out of the process environment at app start, so model code cannot read them.

`take_secrets_from_environment()` (called once by the command line before the model is
built) removes every variable that names a credential from `os.environ` (so `os.getenv`,
`subprocess` children and, on Linux, `/proc/self/environ` no longer show it) and returns
them as `Credentials`, which the app hands to its model (`LiteLLMModel(credentials=...)`).
In process this keeps keys out of casual reach of model code (printing the environment,
a subprocess); it is not a boundary: the kernel runtime is (see docs/security.md).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, MutableMapping
from typing import Any

from cave_tui.models.credentials import Credentials
from cave_tui.runtime.kernel.limits import is_secret_name

# Of the secret-looking names (`is_secret_name`), those with a credential word as one of
# their `_`-separated parts; the others (OPENAI_BASE_URL, HF_HOME, CAVE_DATA_DIR,
# TIKTOKEN_CACHE_DIR) are configuration, read later, and stay.
CREDENTIAL_WORDS = frozenset(
    {"KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL",
     "CREDENTIALS", "AUTH", "COOKIE"}
)  # fmt: skip
_TAKEN: dict[str, str] = {}  # what left os.environ in this process, by name
CONFIG_SUFFIXES = frozenset({"DIR", "HOME", "CACHE", "PATH", "URL", "HOST", "PORT"})


def is_credential_name(name: str) -> bool:
    """True for an environment variable the app keeps out of the environment."""
    parts = name.upper().split("_")
    return (
        is_secret_name(name)
        and any(part in CREDENTIAL_WORDS for part in parts)
        and parts[-1] not in CONFIG_SUFFIXES
    )


def take_secrets_from_environment(
    environ: MutableMapping[str, str] | None = None,
) -> Credentials:
    """Remove the credential variables from *environ* (default `os.environ`); return them."""
    env = os.environ if environ is None else environ
    taken = {name: env[name] for name in list(env) if is_credential_name(name)}
    if env is os.environ:
        _blank_initial_values(taken)
    for name in taken:
        del env[name]
    if env is os.environ:  # a second call (another command in this process) keeps the first's
        _TAKEN.update(taken)
        taken = dict(_TAKEN)
    return Credentials(taken)


def moved_notice(credentials: Credentials) -> str | None:
    """The start-up notice naming what was moved (None when nothing was)."""
    if not credentials:
        return None
    names = ", ".join(credentials.names)
    return f"API keys moved out of the environment: {names} (model code cannot read them)"


def _blank_initial_values(taken: dict[str, str]) -> None:
    """Overwrite the values in the C environment block, which `/proc/self/environ` shows
    even after `unsetenv` (Linux with glibc; elsewhere nothing to do or nothing possible)."""
    if not sys.platform.startswith("linux") or not taken:
        return
    import ctypes

    try:
        block = ctypes.POINTER(ctypes.c_void_p).in_dll(ctypes.CDLL(None), "environ")
    except (OSError, ValueError):
        return
    names = {name.encode() for name in taken}
    for address in _entries(block):
        name, sep, value = ctypes.string_at(address).partition(b"=")
        if sep and name in names:
            ctypes.memset(address + len(name) + 1, 0, len(value))


def _entries(block: Any) -> Iterable[int]:
    """The addresses of the `NAME=value` strings of a C `environ` array."""
    index = 0
    while True:
        address = block[index]
        if not address:
            return
        yield address
        index += 1
