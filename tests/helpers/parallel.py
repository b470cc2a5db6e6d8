"""How the suite is split across pytest-xdist workers (`--dist loadgroup`, pyproject's addopts).

Tests are independent (own temp dirs, config/data dirs, tmux sockets, ports bound to 0), so
xdist hands them out one by one. Two kinds stay together on one worker:
- the tests of a module that share a module-scoped fixture (a kernel, a loop, a corpus):
  spread over workers, each worker would build it again;
- the tests marked `xdist_group(name)`: those that must not run at the same time as each
  other (a cell that fills the kernel's default memory limit, the embedded model's server).
"""

from __future__ import annotations

import pytest

SHARED_SCOPES = frozenset({"module", "package", "class"})


def shares_a_fixture(item: pytest.Item) -> bool:
    """Whether *item* uses a fixture built once for its module (or class, or package)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(defs and defs[-1].scope in SHARED_SCOPES for defs in info.name2fixturedefs.values())


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups (its own hook, in each worker)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("xdist_group") is None and shares_a_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
