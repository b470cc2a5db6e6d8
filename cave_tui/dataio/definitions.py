"""Functions and classes a dump keeps as source: checked when read, run again in the runtime.

Restoring a definition runs its statement as a cell of the runtime (under the runtime's
security checker and a time limit, in the kernel when there is one), so no bytes made by
model code are unpickled in the host. A definition that fails is named with the reason.
"""

from __future__ import annotations

import keyword
from typing import Any

from cave_tui.dataio.errors import DataIOError

DEFINITION_TIMEOUT = 30.0  # a class body runs on definition: it may not hang the restore


def read_definitions(manifest: dict[str, Any], where: Any) -> list[dict[str, str]]:
    """The manifest's `definitions` as {"name", "source"}; DataIOError when malformed."""
    raw = manifest.get("definitions") or []
    if not isinstance(raw, list):
        raise DataIOError(f"{where}: `definitions` is not a list", path=where)
    out = []
    for entry in raw:
        name = entry.get("name") if isinstance(entry, dict) else None
        source = entry.get("source") if isinstance(entry, dict) else None
        if not (isinstance(name, str) and name.isidentifier() and isinstance(source, str)):
            raise DataIOError(f"{where}: a malformed entry in `definitions`: {entry!r:.200}")
        if keyword.iskeyword(name) or name.startswith("_"):
            raise DataIOError(f"{where}: `definitions` names {name!r}, which cannot be bound")
        out.append({"name": name, "source": source})
    return out


async def restore_definitions(runtime: Any, dump: Any) -> None:
    """Run each of *dump*'s definitions in *runtime*, in order; record what came back."""
    for definition in dump.definitions:
        name = definition["name"]
        result = await runtime.execute(definition["source"], timeout=DEFINITION_TIMEOUT)
        if result.success:
            dump.names.append(name)
            continue
        lines = (result.error_text or result.error_type or "it failed").strip().splitlines()
        dump.not_restored.append(
            {"name": name, "reason": f"running its definition again failed: {lines[-1]}"}
        )
