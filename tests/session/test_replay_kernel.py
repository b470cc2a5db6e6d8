"""Issue 31.5: replay runs a session in the runtime it ran in, in its working folder. A
session recorded in a real kernel (a relative read, a displayed value, a user's `!` cell) replays
into a kernel with 0 divergences through `cave replay ID --headless --check` (a real
subprocess started elsewhere, with the suite's CAVE_KERNEL=0), and its meta says so."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cave_tui.app.config import Config
from cave_tui.app.replay_runtime import SessionRuntime, replay_flags
from cave_tui.app.services import AppServices
from cave_tui.app.startup import DataOptions, install
from cave_tui.models import ScriptedModel
from cave_tui.session import SessionStore, read_session
from tests.session.helpers import code

CAVE = str(Path(sys.executable).with_name("cave"))
READ = "import pandas as pd\nprices = pd.read_csv('prices.csv')\nprint(prices.price.sum())"
# A value shown as the kernel shows it (its display hook, not print). A matplotlib figure
# diverged the same way in the issue; importing matplotlib twice costs ~9 s here, so a frame.
SHOWN = "prices.describe().loc[['count', 'max']]"
# The user's own cell: `standard` refuses `import subprocess` in the model's cells (in an
# unsandboxed kernel), never in the user's (issue 31.4), recording or replaying.
USER_CELL = "import subprocess\nprint(len(open('prices.csv').read().splitlines()))"


async def _record(workdir: Path, sessions: Path, *, sandbox: bool) -> Path:
    services = AppServices(
        Config(kernel=True, sandbox=sandbox, guard="standard"),
        model=ScriptedModel([code(READ), code(SHOWN), "Summed."]),
    )
    install(services, DataOptions(sessions_dir=sessions))
    await services.start()
    try:
        async for _ in services.run_python(USER_CELL):
            pass
        async for _ in services.stream("sum the prices and describe them"):
            pass
    finally:
        await services.shutdown()
    return SessionStore(sessions).resolve("last")


# The app's default is the sandboxed kernel (where bubblewrap works: here, as the suite's
# sandbox tests need it); the suite itself runs kernels unsandboxed.
@pytest.mark.parametrize(("sandbox", "label"), [(False, "kernel"), (True, "kernel (sandbox)")])
async def test_a_kernel_session_replays_in_a_kernel_without_divergence(
    tmp_path, monkeypatch, sandbox, label
):
    workdir = tmp_path / "work"
    workdir.mkdir()
    (workdir / "prices.csv").write_text("item,price\na,1.5\nb,2.5\nc,4\n")
    monkeypatch.chdir(workdir)
    folder = await _record(workdir, tmp_path / "sessions", sandbox=sandbox)
    data = read_session(folder)
    meta = (data.meta["runtime"], data.meta["kernel"], data.meta["sandbox"])
    assert meta == (label, True, sandbox)
    assert data.meta["cwd"] == str(workdir)
    outputs = [r.get("output", "") for r in data.records if r["type"] == "execution_output"]
    assert outputs[:2] == ["4\n", "8.0\n"]  # the user's cell and the relative read
    assert "max" in outputs[2] and "4.0" in outputs[2]

    elsewhere = tmp_path / "elsewhere"  # relative reads must resolve where they were recorded
    elsewhere.mkdir()
    sessions = str(tmp_path / "sessions")
    args = [CAVE, "replay", folder.name, "--headless", "--check", "--sessions-dir", sessions]
    done = subprocess.run(args, cwd=elsewhere, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    report = " ".join(done.stdout.split())
    assert "matches the recording: 1 turns, 2 steps, 1 user cells, 3 outputs compared" in report
    assert f"replaying in {label}, in {workdir}" in " ".join(done.stderr.split())


def test_the_command_line_overrides_the_sessions_runtime(tmp_path):
    meta = {"runtime": "kernel (sandbox)", "policy": "strict", "cwd": str(tmp_path)}
    ran = SessionRuntime.from_meta(meta)  # a session recorded before `kernel`/`sandbox`
    assert (ran.kernel, ran.sandbox, ran.policy) == (True, True, "strict")
    flags, notices = replay_flags(meta)
    assert flags == {"kernel": True, "sandbox": True, "guard": "strict", "workdir": str(tmp_path)}
    assert notices == []
    flags, _ = replay_flags(meta, kernel=False)  # --in-process
    assert (flags["kernel"], flags["sandbox"]) == (False, False)
    flags, _ = replay_flags(meta, sandbox=False)  # --no-sandbox
    assert (flags["kernel"], flags["sandbox"]) == (True, False)
    flags, notices = replay_flags({"runtime": "ipython", "cwd": str(tmp_path / "gone")})
    assert (flags["kernel"], flags["sandbox"], flags["guard"]) == (False, False, "trusted")
    assert "workdir" not in flags and "is gone" in notices[0]
