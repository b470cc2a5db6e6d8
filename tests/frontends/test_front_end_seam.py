"""Commands reach the front ends through one typed seam: every front end has every method."""

from __future__ import annotations

import inspect

import pytest

from cave_tui.app.commands.registry import FrontEnd
from cave_tui.frontends.cli.front_end import CliFrontEnd
from cave_tui.frontends.repl.plain import ReplFrontEnd
from cave_tui.frontends.tui.app import TuiFrontEnd

ACTIONS = [
    name
    for name, member in vars(FrontEnd).items()
    if inspect.isfunction(member) and not name.startswith("_")
]


def test_the_protocol_names_each_action():
    assert {"quit", "clear", "show", "render", "session_loaded", "replay_session"} <= set(ACTIONS)


@pytest.mark.parametrize("front_end", [TuiFrontEnd, ReplFrontEnd, CliFrontEnd])
def test_every_front_end_implements_every_action_with_its_signature(front_end):
    for name in ACTIONS:
        ours = inspect.signature(getattr(front_end, name))
        theirs = inspect.signature(getattr(FrontEnd, name))
        assert list(ours.parameters) == list(theirs.parameters), (front_end.__name__, name)
