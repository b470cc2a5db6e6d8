"""How the suite is split across pytest-xdist workers (`--dist loadgroup`, pyproject's addopts).

Tests are independent (own temp dirs, config/data dirs, tmux sockets, ports bound to 0), so
xdist hands them out one by one. Two kinds stay together on one worker:
- the tests of a module that share a module-scoped fixture (a kernel, a loop, a corpus):
  spread over workers, each worker would build it again;
- the tests marked `xdist_group(name)`: those that must not run at the same time as each
  other (a cell that fills the kernel's default memory limit, the embedded model's server).

The order in which these units are handed out is ours (`--no-loadscope-reorder`): first the
units holding a test allowed more than the suite's default timeout (the embedded model's
minutes), so the longest unit never starts last and ends the run alone; then the units
holding a test listed in SLOW (tens of seconds: a chain of `cave` subprocesses, a tmux
session, a kernel per step); then the units of many tests; then the single tests, in
collection order. xdist keeps each worker two or three tests ahead, so a slow test handed
out last sets the run's end while the other workers idle: the run ends on short tests.
SLOW is kept honest at the end of each run: a test that took longer than SLOW_SECONDS and
is not handed out early is named in the summary, to be added here.
"""

from __future__ import annotations

import sys
from collections import defaultdict

import pytest

SHARED_SCOPES = frozenset({"module", "package", "class"})

# Tests (node id prefixes: a file, or a test and its parameters) that take 10 s or more on
# 2 idle cores; measured with `--durations`. Handed out right after the long units.
SLOW: tuple[str, ...] = (
    "tests/agent/compaction/test_overflow.py::test_http_overflow_is_recovered",
    "tests/app/test_credentials.py::test_without_credentials_litellm_reads_the_environment",
    "tests/dataio/test_dump_target.py::test_cave_run_",
    "tests/dataio/test_many_variables.py::test_dump_snapshot_and_load_of_many_values",
    "tests/dataio/test_persistence.py::test_a_dump_keeps_every_variable_past_the_display_cap",
    "tests/frontends/acp/test_control.py",
    "tests/frontends/acp/test_prompts.py",
    "tests/frontends/acp/test_start.py",
    "tests/frontends/acp/test_toad_tmux.py",
    "tests/frontends/cli/test_default_sandbox.py::test_cave_run_is_sandboxed_by_default",
    "tests/frontends/cli/test_fast_path.py::test_run_exit_codes_and_json",
    "tests/frontends/cli/test_fast_path.py::test_guard_is_the_checker_flag",
    "tests/frontends/cli/test_keyless_local_server.py",
    "tests/frontends/cli/test_light_model_path.py",
    "tests/frontends/cli/test_run_and_replay.py",
    "tests/frontends/cli/test_run_output_layout.py",
    "tests/frontends/cli/test_sessions_command.py",
    "tests/frontends/mcp/test_kernel_and_inspector.py",
    "tests/frontends/mcp/test_start.py",
    "tests/frontends/test_every_command.py::test_every_command_in_the_app",
    "tests/frontends/test_kernel_text_consoles.py",
    "tests/frontends/tui/test_e2e_input.py",
    "tests/frontends/tui/test_e2e_tmux.py",
    "tests/frontends/tui/test_final_answer_shown.py::test_cave_run_prints_the_answer",
    "tests/frontends/tui/test_frame_result.py",
    "tests/models/test_fail_fast.py::test_refused_key_fails_at_once",
)
# A test that took longer than this and is not handed out early is named in the summary.
SLOW_SECONDS = 20.0

# Tests that import litellm in process (about 6 CPU-seconds in each process that does; a
# test whose id holds the parameter `[litellm` is one too). They run on one worker, so one
# process pays it. Kept honest like SLOW: a test outside the group that imports it is named.
LITELLM_GROUP = "litellm"
LITELLM: tuple[str, ...] = (
    "tests/agent/compaction/test_overflow.py::test_http_overflow_is_recovered[litellm",
    "tests/agent/compaction/test_overflow.py::test_provider_reported_prompt_tokens_drive",
    "tests/app/test_credentials.py::test_model_code_cannot_read_the_key_but_the_server_gets",
    "tests/app/test_credentials.py::test_without_credentials_litellm_reads_the_environment",
    "tests/app/test_typed_services.py::test_the_price_comes_from_the_models_capability",
    "tests/compat/test_upstream_08_errors_and_runtimes.py::test_an_exhausted_quota_fails",
    "tests/frontends/tui/test_app_litellm.py",
    "tests/models/test_fail_fast.py",
    "tests/models/test_keyless_named_server.py",
    "tests/models/test_litellm_http.py",
    "tests/models/test_loopback_keys.py",
    "tests/models/test_upstream_models.py::test_litellm_model_with_custom_llm_provider",
)


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


def imports_litellm(item: pytest.Item) -> bool:
    """Whether *item* is one of the tests that import litellm in process."""
    return item.nodeid.startswith(LITELLM) or "[litellm" in item.nodeid


def listed_slow(item: pytest.Item) -> bool:
    """Whether *item* is one of the SLOW tests."""
    return item.nodeid.startswith(SLOW)


def unit_of(item: pytest.Item) -> str:
    """The unit of work *item* is handed out in: its group, else itself."""
    marker = item.get_closest_marker("xdist_group")
    if marker is None:
        return item.nodeid
    return str(marker.args[0] if marker.args else marker.kwargs.get("name", "default"))


def units_of(items: list[pytest.Item]) -> dict[str, list[pytest.Item]]:
    """*items* by the unit they are handed out in, units in collection order."""
    units: dict[str, list[pytest.Item]] = defaultdict(list)
    for item in items:
        units[unit_of(item)].append(item)
    return units


def goes_out_early(members: list[pytest.Item]) -> tuple[bool, bool]:
    """Whether a unit of *members* holds a long test, and whether it holds a SLOW one."""
    default = float(members[0].config.getini("timeout") or 0)
    long = any(allowed_seconds(item) > default for item in members)
    return long, any(listed_slow(item) for item in members)


def in_dispatch_order(items: list[pytest.Item]) -> list[pytest.Item]:
    """*items* reordered unit by unit: long units first, then slow ones, then by size, then
    as collected."""
    units = units_of(items)
    first_seen = {name: index for index, name in enumerate(units)}

    def rank(name: str) -> tuple[bool, bool, int, int]:
        long, slow = goes_out_early(units[name])
        return (not long, not slow, -len(units[name]), first_seen[name])

    return [item for name in sorted(units, key=rank) for item in units[name]]


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups (its own hook, in each worker)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            continue
        if imports_litellm(item):
            item.add_marker(pytest.mark.xdist_group(LITELLM_GROUP))
        elif shares_a_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
    for members in units_of(items).values():
        if any(goes_out_early(members)):
            for item in members:
                item.user_properties.append(EARLY)
    items[:] = in_dispatch_order(items)


EARLY = ("handed_out", "early")  # a user property: reports carry it to xdist's controller
LITELLM_OUTSIDE = ("imported", "litellm")  # the same, for a test outside the litellm group


_HAD_LITELLM = pytest.StashKey[bool]()


def pytest_runtest_setup(item: pytest.Item) -> None:
    item.stash[_HAD_LITELLM] = "litellm" in sys.modules


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):  # type: ignore[no-untyped-def]
    """Mark a test outside the litellm group that imported litellm (the first in its worker)."""
    yield
    imported = not item.stash.get(_HAD_LITELLM, True) and "litellm" in sys.modules
    if imported and unit_of(item) != LITELLM_GROUP:
        item.user_properties.append(LITELLM_OUTSIDE)


def handed_out_late(durations: dict[str, float], early: set[str]) -> list[str]:
    """The tests of *durations* (node id: seconds) that took longer than SLOW_SECONDS and are
    not in *early* (the node ids handed out first), slowest first, with their seconds."""
    late = [(seconds, nodeid) for nodeid, seconds in durations.items()
            if seconds > SLOW_SECONDS and nodeid not in early]  # fmt: skip
    return [f"{seconds:.0f}s {nodeid}" for seconds, nodeid in sorted(late, reverse=True)]


class SlowListCheck:
    """Where the run's reports arrive: each test's duration, and whether it went out early."""

    def __init__(self) -> None:
        self.durations: dict[str, float] = {}
        self.early: set[str] = set()
        self.litellm_outside: set[str] = set()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call":
            self.durations[report.nodeid] = report.duration
            if EARLY in report.user_properties or list(EARLY) in report.user_properties:
                self.early.add(report.nodeid)
            if any(tuple(p) == LITELLM_OUTSIDE for p in report.user_properties):
                self.litellm_outside.add(report.nodeid)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        late = handed_out_late(self.durations, self.early)
        if late:
            terminalreporter.write_sep("-", "slow tests handed out late: add them to SLOW")
            terminalreporter.write_line(f"(tests/helpers/parallel.py; over {SLOW_SECONDS:.0f} s)")
            for line in late:
                terminalreporter.write_line(line)
        if self.litellm_outside:
            terminalreporter.write_sep("-", "tests that import litellm: add them to LITELLM")
            terminalreporter.write_line("(tests/helpers/parallel.py: one worker pays its import)")
            for nodeid in sorted(self.litellm_outside):
                terminalreporter.write_line(nodeid)


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(SlowListCheck(), "slow-list-check")
