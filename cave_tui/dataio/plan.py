"""What a dump or a snapshot saves: every user name of the runtime, sorted by how it is kept.

The runtime lists its whole namespace for persistence (`Runtime.persistable`, never bounded
by the display budget); `plan_dump` splits that listing into values to write, modules to
import again, definitions to run again (the source of the functions and classes the model
wrote) and names that are not saved, each with a typed cause and a reason for the user.
A name no dump may bind again (`unloadable_name`: a builtin's, such as `max`) is never
saved, whatever it holds: the manifest's schema would refuse the whole dump on load.
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from cave_tui.dataio.names import unloadable_name
from cave_tui.runtime.base import persistable_from_rows
from cave_tui.runtime.items import Function, Type
from cave_tui.runtime.provenance import DefinitionOrigin, Provenance, provenance_of
from cave_tui.runtime.sent_definitions import SentDefinitions
from cave_tui.runtime.shipped.persist import Keep, Persistable, source_digest


class SkipCause(enum.Enum):
    """Why a name is not in a dump (kept in the manifest's `skipped` as `cause`)."""

    HOST = "host"  # a function or class the host injected: the host injects it again
    NAME = "name"  # a name no dump binds again (a builtin's, one the agent reserves…)
    UNSAVEABLE = "unsaveable"  # no format keeps it (a generator, an open socket…)
    NOT_RETRIEVED = "not_retrieved"  # the runtime would not hand it over (kernel safety)
    DEFERRED = "deferred"  # over a snapshot's per-step bound: the next snapshot saves it


@dataclass
class DumpPlan:
    """The namespace sorted for a dump; `skipped` entries go to the manifest as they are."""

    values: list[Persistable] = field(default_factory=list)
    modules: list[dict[str, str]] = field(default_factory=list)  # {"name", "module"}
    definitions: list[dict[str, Any]] = field(default_factory=list)  # manifest entries
    skipped: list[dict[str, Any]] = field(default_factory=list)  # {"name", "type", "reason", …}
    descriptions: dict[str, str] = field(default_factory=dict)
    streams: list[Persistable] = field(default_factory=list)  # lazy frames to stream (`/dump`)
    provenance: Provenance = Provenance.IN_PROCESS  # where the runtime runs its cells


def skip_entry(name: str, type_name: str, cause: SkipCause, reason: str) -> dict[str, Any]:
    return {"name": name, "type": type_name, "reason": reason, "cause": cause.value}


async def persistable(
    runtime: Any, digest_below: int = 0, skip_digest: Collection[str] = ()
) -> list[Persistable]:
    """`runtime.persistable()`, or a listing built from its summary for a runtime without it.
    Names in *skip_digest* get no digest (from a runtime that takes the argument)."""
    method = getattr(runtime, "persistable", None)
    if method is not None:
        takes = skip_digest and "skip_digest" in inspect.signature(method).parameters
        rows: list[Persistable] = await (
            method(digest_below, skip_digest=skip_digest) if takes else method(digest_below)
        )
        return rows
    listing = getattr(runtime, "namespace_listing", None) or runtime.namespace_summary
    return persistable_from_rows(await listing())


async def plan_dump(
    runtime: Any, digest_below: int = 0, skip_digest: Collection[str] = (), *, stream: bool = False
) -> DumpPlan:
    """Every user name of *runtime*, sorted by how a dump keeps it (*skip_digest*: see
    `persistable`). With *stream* (an explicit dump, never a snapshot) the lazy frames that
    stream to Parquet go to `streams` instead of `skipped`."""
    injected = runtime.injected
    describe = getattr(runtime, "descriptions", None)
    plan = DumpPlan(descriptions=dict(describe()) if callable(describe) else {})
    sources = []
    for item in await persistable(runtime, digest_below, skip_digest):
        host = isinstance(injected.get(item.name), Function | Type)
        why = unloadable_name(item.name)  # a dump must load back: not even as source
        if why is not None and not host:  # (the host binds its own, reserved names too)
            plan.skipped.append(skip_entry(item.name, item.type_name, SkipCause.NAME, why))
        elif item.keep is Keep.SOURCE and why is None:
            sources.append(item)
        elif host:
            reason = "injected by the host program, which injects it again"
            plan.skipped.append(skip_entry(item.name, item.type_name, SkipCause.HOST, reason))
        elif item.keep is Keep.MODULE:
            plan.modules.append({"name": item.name, "module": item.module})
        elif item.keep is Keep.NOTHING and item.streams and stream:
            plan.streams.append(item)
        elif item.keep is Keep.NOTHING:
            skip = skip_entry(item.name, item.type_name, SkipCause.UNSAVEABLE, item.reason)
            plan.skipped.append(skip)
        else:
            plan.values.append(item)
    plan.provenance = provenance_of(runtime)
    sent = getattr(runtime, "sent_definitions", None)
    for item in sorted(sources, key=lambda s: s.order):
        plan.definitions.append(definition_entry(item, sent))
    return plan


def definition_entry(item: Persistable, sent: SentDefinitions | None) -> dict[str, Any]:
    """The manifest entry of a definition the runtime reported: the host's own copy of the
    source when the host sent that very definition (`sent`), else the runtime's word for it,
    marked `reported` (code the host never sent: it needs trust like a pickle)."""
    own = sent.sent(item.name, item.source) if isinstance(sent, SentDefinitions) else None
    source = own if own is not None else item.source
    origin = DefinitionOrigin.SENT if own is not None else DefinitionOrigin.REPORTED
    return {
        "name": item.name,
        "type": item.type_name,
        "source": source,
        "digest": source_digest(source),
        "origin": origin.value,
    }


def unsaved(skipped: list[Any]) -> list[dict[str, str]]:
    """The manifest's skipped names a restore does not bring back, as `not_restored` entries
    (host-injected functions and classes are left out: the host injects them again)."""
    out = []
    for entry in skipped:
        if not isinstance(entry, dict) or entry.get("cause") == SkipCause.HOST.value:
            continue
        out.append({"name": str(entry.get("name")), "reason": f"not saved: {entry.get('reason')}"})
    return out
