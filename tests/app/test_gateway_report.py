"""`--gateway` / `[kernel] gateway`: the runtime the app builds, and what it says of it (the
sandbox of this host does not apply to a gateway's kernel)."""

from __future__ import annotations

from pathlib import Path

from cave_tui.app.config import load_config
from cave_tui.app.runtime_choice import config_runtime
from cave_tui.app.runtime_report import RuntimeReport
from cave_tui.app.sandbox_report import sandbox_problem, settle_sandbox

URL = "http://127.0.0.1:9"


def test_the_gateway_setting_builds_a_gateway_kernel_without_the_sandbox(tmp_path: Path):
    config = load_config(path=tmp_path / "none.toml", environ={"CAVE_GATEWAY": URL})
    assert config.uses_kernel and config.sandbox  # the sandbox left at its default
    before = RuntimeReport(config, None)
    assert before.label == "kernel (gateway)"
    assert "sandbox (bubblewrap) and memory limit do not apply" in before.boundary_notice
    assert settle_sandbox(config) is None and not config.sandbox  # no warning: not ours
    runtime = config_runtime(config)
    assert runtime.remote == URL and not runtime.sandbox and runtime.memory_limit is None
    report = RuntimeReport(config, runtime)
    assert report.label == "kernel (gateway)"
    assert report.sandbox_banner == (
        f"the kernel runs on the Jupyter gateway at {URL}: this host's sandbox does not apply there"
    )
    assert URL in report.boundary_notice and "It is sandboxed" not in report.boundary_notice


def test_a_gateway_that_is_not_an_http_url_is_refused_with_a_warning(tmp_path: Path):
    config = load_config(path=tmp_path / "none.toml", environ={"CAVE_GATEWAY": "gw:8888"})
    assert config.gateway is None
    assert any("http:// or https://" in w for w in config.warnings), config.warnings


def test_a_sandbox_asked_for_with_a_gateway_stops_the_start_saying_why(tmp_path: Path):
    environ = {"CAVE_GATEWAY": URL, "CAVE_SANDBOX": "1"}
    config = load_config(path=tmp_path / "none.toml", environ=environ)
    problem = sandbox_problem(config)
    assert problem is not None and URL in problem and "drop --sandbox" in problem
