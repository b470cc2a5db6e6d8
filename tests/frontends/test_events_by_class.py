"""Front ends handle core events by their class (`match event: case CodeEvent()`), never by
their type string: a scan of the front ends' sources (and the Rich display) for the ways an
event was told by its `type`, and for `getattr(event, ...)` guessing at a field."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from cave_tui.agent.events import EventType
from tests.helpers.paths import REPO_ROOT

PACKAGE = REPO_ROOT / "cave_tui"
SCANNED = [*sorted((PACKAGE / "frontends").rglob("*.py")), PACKAGE / "agent" / "display.py"]
TYPE_VALUES = frozenset(t.value for t in EventType)
TYPE_NAMES = frozenset({"type", "kind", "event_type"})  # what held `event.type` in the old code
EVENT_NAMES = frozenset({"event", "ev", "item"})


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _type_strings(node: ast.expr) -> bool:
    """*node* is an event type value, or a tuple/list/set of them."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value in TYPE_VALUES
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return bool(node.elts) and all(_type_strings(e) for e in node.elts)
    return False


def _is_event_type(node: ast.expr) -> bool:
    """`EventType.X` (or `ev.EventType.X`)."""
    return isinstance(node, ast.Attribute) and _name(node.value) == "EventType"


def violations(source: str) -> list[str]:
    """Each place in *source* where an event is handled by its type rather than its class."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            typed = any(isinstance(o, ast.Attribute) and o.attr == "type" for o in operands)
            if any(_is_event_type(o) for o in operands):
                found.append(f"{line}: compares with EventType")
            elif any(_type_strings(o) for o in operands) and (
                typed or any(_name(o) in TYPE_NAMES for o in operands)
            ):
                found.append(f"{line}: compares a type with an event type string")
        elif isinstance(node, ast.Match):
            if isinstance(node.subject, ast.Attribute) and node.subject.attr == "type":
                found.append(f"{line}: match on .type")
        elif isinstance(node, ast.MatchValue) and _is_event_type(node.value):
            found.append(f"{line}: case EventType")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and node.args
            and _name(node.args[0]) in EVENT_NAMES
        ):
            found.append(f"{line}: getattr on an event")
    return found


def test_the_scan_sees_each_way_of_telling_an_event_by_its_type() -> None:
    old = """
if event.type == "final_response": pass
if kind == "code": pass
if kind in ("execution_error", "security_error"): pass
if event.type is EventType.OUTPUT: pass
match event.type:
    case ev.EventType.USER: pass
x = getattr(event, "code", event.content)
y = getattr(message.event, "kind", None)
"""
    assert len(violations(old)) == 8, violations(old)
    new = """
match event:
    case CodeEvent(): pass
if isinstance(event, OutputEvent): pass
if row.kind == "variable" or d.type == "bool" or outcome == "error": pass
"""
    assert violations(new) == []


@pytest.mark.parametrize("path", SCANNED, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_front_ends_handle_events_by_class(path: Path) -> None:
    assert violations(path.read_text()) == [], path


def test_the_event_classes_load_without_the_agent_loop() -> None:
    """The TUI imports the event classes at start-up: that must not load the loop (core.py,
    the models, the runtime), which `cave_tui.agent` loads on first use of `CaveAgent`."""
    code = "import sys, cave_tui.agent.events\nprint(' '.join(sys.modules))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(run.stdout.split())
    assert "cave_tui.agent.events" in loaded
    heavy = {"cave_tui.agent.core", "cave_tui.models", "cave_tui.runtime"}
    assert not heavy & loaded, heavy & loaded
