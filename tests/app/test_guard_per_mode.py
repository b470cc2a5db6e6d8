"""The guard the app builds depends on the kernel's mode (issue 30): in the sandbox, the
sandbox is the boundary and `standard` leaves shells and deletes to it."""

from __future__ import annotations

import pytest

from cave_tui.app.services import make_checker, make_runtime

HARM = {"ShellRule", "DestructionRule"}


def _rules(checker: object) -> set[str]:
    return {type(rule).__name__ for rule in getattr(checker, "rules", [])}


def test_make_checker_is_lighter_for_a_sandboxed_kernel():
    assert _rules(make_checker("standard")) >= HARM
    assert not HARM & _rules(make_checker("standard", sandboxed=True))
    assert make_checker("standard", sandboxed=True).check("import subprocess") == []
    # strict is the same in every mode
    assert _rules(make_checker("strict")) == _rules(make_checker("strict", sandboxed=True))


@pytest.mark.parametrize("sandbox", [False, True])
def test_make_runtime_gives_the_kernel_the_guard_of_its_mode(tmp_path, monkeypatch, sandbox):
    monkeypatch.chdir(tmp_path)  # never started: only what was built is looked at
    runtime = make_runtime(True, "standard", sandbox=sandbox)
    assert runtime.sandbox is sandbox
    refused = runtime.security_checker.check("import os\nos.system('id')")
    assert bool(refused) is not sandbox


@pytest.mark.parametrize("sandbox", [False, True])
def test_policy_changes_keep_the_guard_of_the_runtimes_mode(tmp_path, monkeypatch, sandbox):
    from cave_tui.app.config import Config
    from cave_tui.app.services import AppServices

    monkeypatch.chdir(tmp_path)
    runtime = make_runtime(True, "strict", sandbox=sandbox)
    services = AppServices(Config(), runtime=runtime)
    services.set_policy("standard")  # what `/policy standard` does
    assert bool(HARM & _rules(runtime.security_checker)) is not sandbox
