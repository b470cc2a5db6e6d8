"""How the suite is split across pytest-xdist workers (`--dist loadgroup`, pyproject's addopts).

Tests are independent (own temp dirs, config/data dirs, tmux sockets, ports bound to 0), so
xdist hands them out one by one. Two kinds stay together on one worker:
- the tests of a module that share a module-scoped fixture (a kernel, a loop, a corpus):
  spread over workers, each worker would build it again;
- the tests marked `xdist_group(name)`: those that must not run at the same time as each
  other (a cell that fills the kernel's default memory limit, the embedded model's server).

The order in which these units are handed out is ours (`--no-loadscope-reorder`): first the
units holding a test allowed more than the suite's default timeout (the embedded model's
minutes), so the longest unit never starts last and ends the run alone; then the units of
many tests; then the single tests, in collection order.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

SHARED_SCOPES = frozenset({"module", "package", "class"})


def shares_a_fixture(item: pytest.Item) -> bool:
    """Whether *item* uses a fixture built once for its module (or class, or package)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(defs and defs[-1].scope in SHARED_SCOPES for defs in info.name2fixturedefs.values())


def allowed_seconds(item: pytest.Item) -> float:
    """The time pytest-timeout allows *item*: its `timeout` mark, else the suite's default."""
    marker = item.get_closest_marker("timeout")
    if marker is not None and marker.args:
        return float(marker.args[0])
    return float(item.config.getini("timeout") or 0)


def unit_of(item: pytest.Item) -> str:
    """The unit of work *item* is handed out in: its group, else itself."""
    marker = item.get_closest_marker("xdist_group")
    if marker is None:
        return item.nodeid
    return str(marker.args[0] if marker.args else marker.kwargs.get("name", "default"))


def in_dispatch_order(items: list[pytest.Item]) -> list[pytest.Item]:
    """*items* reordered unit by unit: long units first, then by size, then as collected."""
    units: dict[str, list[pytest.Item]] = defaultdict(list)
    for item in items:
        units[unit_of(item)].append(item)
    default = float(items[0].config.getini("timeout") or 0) if items else 0.0
    first_seen = {name: index for index, name in enumerate(units)}

    def rank(name: str) -> tuple[bool, int, int]:
        members = units[name]
        long = any(allowed_seconds(item) > default for item in members)
        return (not long, -len(members), first_seen[name])

    return [item for name in sorted(units, key=rank) for item in units[name]]


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups (its own hook, in each worker)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("xdist_group") is None and shares_a_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
    items[:] = in_dispatch_order(items)
