"""What survives a kernel restart: the host's checkpoint of the user's variables.

After each cell the kernel serialises the names the cell changed (Arrow for
frames and arrays, dill for the rest, imports as module names) into message
buffers; the host keeps those bytes here, opaque, within a byte budget. The host
never decodes them: only a fresh kernel does, on restore. What could not be
saved, and why, is kept too, so the restart report can say what was lost: every name
bound or changed since its last good checkpoint (`stale`) is named, never "nothing lost".
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Entry:
    """One variable's checkpoint: how it was encoded and its bytes, opaque to the host."""

    codec: str
    meta: dict[str, Any]
    buffers: list[Any]
    nbytes: int
    kept: int = 0  # buffers kept on the kernel's machine instead (a gateway's kernel)


@dataclass
class CheckpointStore:
    """The checkpoint within a byte budget, what could not be saved, and the user's names."""

    budget: int
    entries: dict[str, Entry] = field(default_factory=dict)
    unsaved: dict[str, str] = field(default_factory=dict)  # name -> why not
    names: list[str] = field(default_factory=list)  # user names after the last cell
    stale: dict[str, str] = field(default_factory=dict)  # name -> why its checkpoint is behind

    def used(self, excluding: set[str] | None = None) -> int:
        excluding = excluding or set()
        return sum(e.nbytes for n, e in self.entries.items() if n not in excluding)

    def room_for(self, names: list[str]) -> int:
        return max(self.budget - self.used(set(names)), 0)

    def apply_cell(
        self,
        names: list[str] | None,
        deleted: list[str],
        changed: Iterable[str] = (),
    ) -> None:
        """A cell's report: the user names now, those it deleted, and those it changed (their
        checkpoint is behind until `store` takes the new one)."""
        if names is not None:
            self.names = list(names)
        for name in deleted:
            self.forget(name)
        for name in changed:
            if name not in deleted:
                self.stale[name] = "changed after the last checkpoint"

    def note_unreported(self, names: Iterable[str]) -> None:
        """A cell ended without a report (killed, or its report broke): the names its code
        binds may have changed, and no checkpoint holds what they became."""
        for name in names:
            self.stale.setdefault(name, "bound by the cell that was stopped")

    def checkpoint_failed(self, names: Iterable[str], why: str) -> None:
        """The checkpoint of *names* did not complete: no old value stands in for them."""
        for name in names:
            self.entries.pop(name, None)
            self.stale.pop(name, None)
            self.unsaved[name] = why

    def store(self, reply: dict[str, Any], buffers: list[Any]) -> None:
        """Take the kernel's checkpoint reply: entries with buffer indexes, or errors.

        The bytes in use are counted once and then kept up to date entry by entry (a reply
        for 10,000 names must not sum the store 10,000 times)."""
        used = self.used()
        for item in reply.get("entries", []):
            name = str(item.get("name"))
            self.stale.pop(name, None)  # saved now, or `unsaved` says why not
            old = self.entries.get(name)
            others = used - (old.nbytes if old is not None else 0)  # the store but *name*
            if "error" in item:
                self.entries.pop(name, None)
                used = others
                self.unsaved[name] = str(item["error"])[:300]
                continue
            try:
                payload = [buffers[int(i)] for i in item.get("buffers", [])]
                kept = int(item.get("kept") or 0)
            except (IndexError, ValueError, TypeError):
                self.unsaved[name] = "malformed checkpoint reply"
                continue
            size = sum(memoryview(b).nbytes for b in payload)
            if kept:
                size = max(int(item.get("nbytes") or 0), 0)
            if size > max(self.budget - others, 0):
                self.entries.pop(name, None)
                used = others
                self.unsaved[name] = "over the checkpoint budget"
                continue
            self.entries[name] = Entry(
                str(item.get("codec")), dict(item.get("meta") or {}), payload, size, kept
            )
            used = others + size
            self.unsaved.pop(name, None)

    def note_injected(self, name: str) -> None:
        """The host bound *name*: a user name now, and a checkpoint of its old value is stale."""
        if name not in self.names:
            self.names.append(name)
        self.forget_entry(name)

    def note_injected_many(self, names: list[str]) -> None:
        """`note_injected` of each of *names* (one look at `names`, not one each)."""
        known = set(self.names)
        for name in names:
            if name not in known:
                self.names.append(name)
                known.add(name)
            self.forget_entry(name)

    def forget_entry(self, name: str) -> None:
        """The name was rebound from the host (inject): its checkpoint is stale."""
        self.entries.pop(name, None)
        self.unsaved.pop(name, None)

    def forget(self, name: str) -> None:
        self.entries.pop(name, None)
        self.unsaved.pop(name, None)
        self.stale.pop(name, None)
        if name in self.names:
            self.names.remove(name)

    def clear(self) -> None:
        self.entries.clear()
        self.unsaved.clear()
        self.names.clear()
        self.stale.clear()

    def restore_request(self) -> tuple[dict[str, Any], list[Any]]:
        items = []
        buffers: list[Any] = []
        for name, entry in self.entries.items():
            index = list(range(len(buffers), len(buffers) + len(entry.buffers)))
            buffers.extend(entry.buffers)
            item: dict[str, Any] = {
                "name": name,
                "codec": entry.codec,
                "meta": entry.meta,
                "buffers": index,
            }
            if entry.kept:
                item["kept"] = entry.kept
            items.append(item)
        return {"entries": items}, buffers


def loss_report(
    reason: str,
    store: CheckpointStore,
    *,
    restored: list[str],
    reinjected: list[str],
    failed: dict[str, str],
    elapsed: float,
) -> str:
    """The observation the model gets after a restart: what came back, what came back as
    it was at the last checkpoint, and every name lost with why."""
    back = set(restored) | set(reinjected)
    reinjected = [n for n in reinjected if n not in restored]  # the checkpoint won
    older = [n for n in restored if n in store.stale]
    restored = [n for n in restored if n not in store.stale]
    lost = []
    for name in dict.fromkeys([*store.names, *store.stale]):
        if name in back:
            continue
        why = (
            failed.get(name)
            or store.unsaved.get(name)
            or store.stale.get(name)
            or "not in the checkpoint"
        )
        lost.append(f"{name} ({why})")
    again = "" if "restarted" in reason else " and was restarted"
    parts = [f"The kernel {reason}{again} ({elapsed:.1f}s)."]
    if restored:
        parts.append("Restored from the last checkpoint: " + ", ".join(restored) + ".")
    if older:
        parts.append(
            "Restored as they were at the last checkpoint (later changes are lost): "
            + ", ".join(older)
            + "."
        )
    if reinjected:
        parts.append("Re-injected: " + ", ".join(reinjected) + ".")
    if lost:
        parts.append("Lost: " + "; ".join(lost) + ".")
    elif store.names and not older:
        parts.append("No variables were lost.")
    parts.append("Other kernel state (open files and connections, threads) is gone.")
    return " ".join(parts)


def names_bound_by(code: str) -> list[str]:
    """The top-level names *code* binds or changes in place (assignments, imports, `def`,
    `class`, `x.append(...)`, `x[i] = ...`): what a cell stopped without a report may
    have changed."""
    from cave_tui.runtime.shipped.mutation import mutation_targets

    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    names: list[str] = []
    scopes = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.comprehension)
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.append(node.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names += [(a.asname or a.name).split(".", 1)[0] for a in node.names if a.name != "*"]
        if not isinstance(node, scopes):
            todo.extend(ast.iter_child_nodes(node))
    names += sorted(mutation_targets(code))
    return [n for n in dict.fromkeys(names) if not n.startswith("_")]
