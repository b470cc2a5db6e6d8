"""The order in which the suite's tests are handed to the xdist workers (tests/helpers/parallel.py):
the slow tests go out early, so the run never ends on one of them while the others idle."""

from __future__ import annotations

import pytest

from tests.helpers import parallel


def _own_items(request: pytest.FixtureRequest) -> list[pytest.Item]:
    """This module's collected tests (real items: their marks, their config)."""
    path = request.node.nodeid.split("::", 1)[0]
    return [item for item in request.session.items if item.nodeid.startswith(f"{path}::")]


def test_a_listed_slow_test_goes_out_before_the_quick_ones(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    items = _own_items(request)
    last = items[-1]
    monkeypatch.setattr(parallel, "SLOW", (last.nodeid,))
    ordered = parallel.in_dispatch_order(items)
    assert ordered[0] is last
    assert ordered[1:] == items[:-1]  # the others keep their order


def test_a_slow_test_handed_out_late_is_named_in_the_summary() -> None:
    durations = {"t.py::quick": 0.2, "t.py::listed": 90.0, "t.py::late": 45.0}
    assert parallel.handed_out_late(durations, early={"t.py::listed"}) == ["45s t.py::late"]


def test_every_slow_entry_names_a_test_file_that_exists(request: pytest.FixtureRequest) -> None:
    root = request.config.rootpath
    missing = [entry for entry in parallel.SLOW if not (root / entry.split("::")[0]).is_file()]
    assert not missing, missing


def test_every_litellm_entry_names_a_test_that_exists(request: pytest.FixtureRequest) -> None:
    root = request.config.rootpath
    ids = [item.nodeid for item in request.session.items]
    collected = {nodeid.split("::", 1)[0] for nodeid in ids}
    missing = [
        entry
        for entry in parallel.LITELLM
        if not (root / entry.split("::")[0]).is_file()
        or (entry.split("::")[0] in collected and not any(i.startswith(entry) for i in ids))
    ]
    assert not missing, missing


def test_the_tests_that_import_litellm_share_one_worker(request: pytest.FixtureRequest) -> None:
    litellm = [item for item in request.session.items if parallel.imports_litellm(item)]
    units = {parallel.unit_of(item) for item in litellm}
    # The embedded model's group keeps its own; every other one is in the litellm group.
    assert units <= {parallel.LITELLM_GROUP, "local-model"}, units


def test_a_quick_filler_test() -> None:
    """The last of the module's tests, so the first test has one to move ahead of others."""
    assert parallel.SLOW_SECONDS > 0
