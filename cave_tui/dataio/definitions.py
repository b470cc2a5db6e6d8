"""Functions and classes a dump keeps as source, run again in the runtime on restore.

Restoring a definition runs its statement as a cell of the runtime (under the runtime's
security checker and a time limit, in the kernel when there is one), so no bytes made by
model code are unpickled in the host. A definition that fails is named with the reason.
The manifest's `definitions` are checked with the rest of it (`dataio/manifest.py`: each name
bindable, each source a string) before anything is restored.
"""

from __future__ import annotations

from typing import Any

DEFINITION_TIMEOUT = 30.0  # a class body runs on definition: it may not hang the restore


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
