"""Issue 18, item 12: every exported notebook of a real session runs again with
`jupyter nbconvert --execute` to the outputs the session recorded.

The sessions are recorded for real: one by the recorder driving a scripted agent on the
in-process runtime (an injected parquet file, printed and displayed output, an error, a
cell refused by a policy, one blocked by the security policy, one that timed out, two
turns), one by `cave run --kernel` (a `--load` start with trusted pickles, an `--inject`,
a cell that kills its kernel, then `--resume` for a second turn). One nbconvert runs both
notebooks (one kernel start each); cells the session recorded as failed must raise again,
every other code cell must print what the session printed.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml

from cave_tui.agent import CaveAgent
from cave_tui.dataio import dump_namespace, inject_file
from cave_tui.models import ScriptedModel
from cave_tui.runtime import IPythonRuntime, Variable
from cave_tui.security import SecurityChecker
from cave_tui.session import SessionRecorder, SessionStore, export_session
from cave_tui.session.cell_fate import RAISES_TAG
from cave_tui.session.replay import normalize_output

CAVE = str(Path(sys.executable).with_name("cave"))
JUPYTER = str(Path(sys.executable).with_name("jupyter"))


def _code(src: str) -> str:
    return f"```python\n{src}\n```"


def _cave(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CAVE, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def _script(path: Path, replies: list[str]) -> str:
    path.write_text(yaml.safe_dump(replies))
    return f"scripted:{path}"


def _executed(*notebooks: Path) -> list[Any]:
    """*notebooks* run top to bottom by one nbconvert (a fresh kernel each); it fails on an
    error outside a `raises-exception` cell."""
    done = subprocess.run(
        [JUPYTER, "nbconvert", "--to", "notebook", "--execute", "--output-dir", "run",
         "--ExecutePreprocessor.timeout=120", *map(str, notebooks)],
        capture_output=True, text=True, timeout=180, cwd=notebooks[0].parent,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    import nbformat  # here: it imports jsonschema, seconds of every worker's collection

    return [nbformat.read(nb.parent / "run" / nb.name, as_version=4) for nb in notebooks]


def _printed(cell: Any) -> str:
    """What a code cell printed and displayed, as the session's runtimes capture it."""
    parts = []
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream":
            parts.append(output["text"])
        elif output["output_type"] in ("execute_result", "display_data"):
            parts.append(output["data"].get("text/plain", "") + "\n")
    return normalize_output("".join(parts))


def _error(cell: Any) -> str | None:
    errors = [o for o in cell.get("outputs", []) if o["output_type"] == "error"]
    return errors[-1]["ename"] if errors else None


def _check_rerun(exported: Any, executed: Any) -> list[str]:
    """Cell by cell: code cells that ran print the same; failed ones raise the same error.
    Returns the sources of the code cells compared."""
    assert len(exported.cells) == len(executed.cells)
    compared = []
    for before, after in zip(exported.cells, executed.cells, strict=True):
        if before.cell_type != "code" or before.execution_count is None:
            continue  # Markdown, or a loading cell (it has no recorded output)
        if RAISES_TAG in before.metadata.get("tags", []):
            assert _error(after) == _error(before), (before.source, after.outputs)
        else:
            assert _error(after) is None, (before.source, after.outputs)
            assert _printed(after) == _printed(before), before.source
        compared.append(before.source)
    return compared


def _markdown(nb: Any) -> str:
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def _code_sources(nb: Any) -> str:
    return "\n".join(c.source for c in nb.cells if c.cell_type == "code")


# -- a session recorded in process: every kind of cell ----------------------------------------
REFUSED = "ready = True\nprint('ready', ready)"
BLOCKED = "import subprocess\nsubprocess.run(['true'])"
TIMED_OUT = "spins = 0\nwhile True:\n    spins += 1"
IN_PROCESS_TURNS = [
    [
        _code("big = sales[sales.amount > 2]\nprint(len(big), 'big sales')\nbig"),
        _code(REFUSED),
        _code(REFUSED),  # the same cell again: AlreadyRan refuses it
        _code("ratio = 1 / (len(big) - 2)"),  # ZeroDivisionError
        _code(BLOCKED),
        _code(TIMED_OUT),
        _code("display(sales.describe())\nfinal_answer(f'{big.amount.sum():.2f}')"),
    ],
    [
        _code("doubled = big.assign(amount=big.amount * 2)\nprint(doubled.amount.tolist())"),
        "`doubled` holds the big sales, doubled.",
    ],
]


async def _record_in_process(tmp_path: Path) -> Path:
    tmp_path.mkdir()
    sales = pd.DataFrame({"item": ["a", "b", "c", "d"], "amount": [1.5, 2.5, 3.0, 0.5]})
    sales.to_parquet(tmp_path / "sales.parquet")
    runtime = IPythonRuntime(security_checker=SecurityChecker.for_policy("standard"))
    replies = [reply for turn in IN_PROCESS_TURNS for reply in turn]
    # the endless cell stops at the limit; the others must finish within it on a loaded machine
    agent = CaveAgent(ScriptedModel(replies), runtime, max_exec_timeout=3, display=False)
    recorder = SessionRecorder.create(tmp_path / "sessions", agent=agent)
    await runtime.start()
    recorder.record_injection(
        await inject_file(runtime, tmp_path / "sales.parquet", "sales", wait_for_sha256=True)
    )
    assert await recorder.run("which sales are big?") == "completed"
    assert await recorder.run("double them") == "completed"
    await recorder.close()
    await runtime.stop()
    return recorder.dir


def _check_in_process(exported: Any) -> None:
    markdown, code = _markdown(exported), _code_sources(exported)
    for shown in (BLOCKED, TIMED_OUT):  # never run again: shown as Markdown
        assert shown in markdown and shown not in code
    assert code.count(REFUSED) == 1 and markdown.count(REFUSED) == 1
    assert "`already_ran` policy refused" in markdown
    failed = [c for c in exported.cells if RAISES_TAG in c.metadata.get("tags", [])]
    assert [c.source for c in failed] == ["ratio = 1 / (len(big) - 2)"]


# -- a session of `cave run --kernel`: --load, --inject, a killed kernel, --resume ------------
async def _write_dump(folder: Path) -> None:
    runtime = IPythonRuntime(
        variables=[
            Variable("prices", pd.DataFrame({"price": [2.0, 3.5, 4.5]}), "prices"),
            Variable("meta", {"unit": "EUR", "tags": {"x", "y"}}, "a set: pickled"),
            Variable("weights", np.arange(4.0), "an array"),
        ]
    )
    await runtime.start()
    await dump_namespace(runtime, folder)
    await runtime.stop()


def _record_kernel_session(tmp_path: Path) -> Path:
    tmp_path.mkdir()
    asyncio.run(_write_dump(tmp_path / "dump"))
    manifest = json.loads((tmp_path / "dump" / "manifest.json").read_text())
    assert {e["name"]: e["format"] for e in manifest["variables"]}["meta"] == "pickle"
    pd.DataFrame({"qty": [1, 2, 3]}).to_parquet(tmp_path / "orders.parquet")
    first = _script(
        tmp_path / "one.yaml",
        [
            _code("total = float(prices.price.sum())\nprint(meta['unit'], total)\norders.head(2)"),
            _code("import os\nos.kill(os.getpid(), 9)"),  # the kernel dies: cut short
            _code("print(sorted(meta['tags']), weights.sum())\nfinal_answer(f'{total:.1f}')"),
        ],
    )
    common = ["--policy", "trusted", "--sessions-dir", "s"]
    done = _cave(
        "run", "total?", "--model", first, "--load", "dump", "--trust",
        "--inject", "orders.parquet", "--kernel", *common, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    second = _script(
        tmp_path / "two.yaml",
        [_code("display(orders.describe())\nprint(total * 2)"), "Twice the total."],
    )
    # Resumed (in process, the quicker runtime): the namespace comes from the snapshot.
    done = _cave("run", "twice?", "--model", second, "--resume", "last", *common, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return SessionStore(tmp_path / "s").resolve("last")


@pytest.fixture(scope="module")
def notebooks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, Any]]:
    """Both sessions, exported, and their notebooks run again: {name: (exported, executed)}."""
    tmp_path = tmp_path_factory.mktemp("notebooks")
    folders = {
        "in_process": asyncio.run(_record_in_process(tmp_path / "a")),
        "kernel": _record_kernel_session(tmp_path / "b"),
    }
    paths = {name: export_session(folder, tmp_path / f"{name}.ipynb")
             for name, folder in folders.items()}  # fmt: skip
    executed = _executed(*paths.values())
    import nbformat

    return {
        name: (nbformat.read(path, as_version=4), run)
        for (name, path), run in zip(paths.items(), executed, strict=True)
    }


def test_an_in_process_session_reruns_as_a_notebook(notebooks):
    exported, executed = notebooks["in_process"]
    _check_in_process(exported)
    compared = _check_rerun(exported, executed)
    assert len(compared) == 5  # big, ready, ratio, describe + final_answer, doubled


def test_a_kernel_session_started_with_load_and_resumed_reruns_as_a_notebook(notebooks):
    exported, executed = notebooks["kernel"]
    assert "cave_tui" not in _code_sources(exported)  # the loading cell needs no cave
    assert "os.kill(os.getpid(), 9)" in _markdown(exported)
    assert "os.kill" not in _code_sources(exported)
    compared = _check_rerun(exported, executed)
    assert len(compared) == 3
