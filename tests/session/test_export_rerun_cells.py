"""Issue 18, item 12: what an export makes of each recorded cell, and its loading cells.

A cell that raised is tagged `raises-exception`; a cell that did not run to its end
(refused by a policy, blocked, cut short, never finished) is Markdown in the notebook and
comments in the script; loading cells need no cave and unpickle only what the session
trusted, after its sha256 matches. (tests/reliability/test_notebook_rerun.py runs the
notebooks of real sessions with nbconvert.)
"""

from __future__ import annotations

import json
import pathlib
import pickle
from typing import Any

import pytest

from cave_tui.agent import events as ev
from cave_tui.dataio import dump_namespace
from cave_tui.dataio.load import file_sha256
from cave_tui.runtime import IPythonRuntime, Variable
from cave_tui.session import SessionRecorder, to_notebook, to_script
from cave_tui.session.cell_fate import RAISES_TAG
from cave_tui.session.setup_code import load_code, setup_code
from tests.session.helpers import code, scripted_agent


def _cells(nb: Any, kind: str) -> list[str]:
    return [c.source for c in nb.cells if c.cell_type == kind]


async def _session(tmp_path: pathlib.Path, replies: list[str], **agent_kw: Any) -> pathlib.Path:
    recorder = SessionRecorder.create(tmp_path / "s", agent=scripted_agent(replies, **agent_kw))
    await recorder.run("go")
    await recorder.close()
    return recorder.dir


async def test_a_cell_that_raised_is_tagged_to_run_on(tmp_path):
    folder = await _session(tmp_path, [code("x = 1\n1 / 0"), code("print(x)"), "done"])
    nb = to_notebook(folder)
    first, second = (c for c in nb.cells if c.cell_type == "code")
    assert first.metadata["tags"] == [RAISES_TAG]
    assert "tags" not in second.metadata
    assert f'# %% tags=["{RAISES_TAG}"]\nx = 1\n1 / 0' in to_script(folder)


async def test_a_refused_cell_is_shown_not_run(tmp_path):
    same = "n = 3\nprint(n)"
    folder = await _session(tmp_path, [code(same), code(same), "n is 3"])
    nb = to_notebook(folder)
    assert _cells(nb, "code") == [same]
    assert "The `already_ran` policy refused this code; it did not run:*" in "".join(
        _cells(nb, "markdown")
    )
    script = to_script(folder)
    assert script.count("\nn = 3\n") == 1 and "#     n = 3\n#     print(n)" in script


async def test_a_blocked_cell_is_shown_with_what_blocked_it(tmp_path):
    from cave_tui.security import SecurityChecker

    runtime = IPythonRuntime(security_checker=SecurityChecker.for_policy("standard"))
    from cave_tui.agent import CaveAgent
    from cave_tui.models import ScriptedModel

    agent = CaveAgent(ScriptedModel([code("import subprocess"), "no"]), runtime, display=False)
    recorder = SessionRecorder.create(tmp_path / "s", agent=agent)
    await recorder.run("go")
    await recorder.close()
    nb = to_notebook(recorder.dir)
    assert _cells(nb, "code") == []
    markdown = "\n".join(_cells(nb, "markdown"))
    assert "security policy blocked this code" in markdown
    assert "```python\nimport subprocess\n```" in markdown
    assert "import of 'subprocess' is not allowed" in markdown


async def test_a_timed_out_cell_is_shown_not_run(tmp_path):
    spin = "while True:\n    pass"
    folder = await _session(tmp_path, [code(spin), "it spun"], max_exec_timeout=0.5)
    nb = to_notebook(folder)
    assert _cells(nb, "code") == []
    assert "timed out in the session" in "\n".join(_cells(nb, "markdown"))
    assert "\nwhile True:" not in to_script(folder)


async def test_a_user_cell_that_never_finished_is_shown_not_run(tmp_path):
    recorder = SessionRecorder.create(tmp_path / "s", agent=scripted_agent([]))
    cell = "import time\ntime.sleep(100)"
    recorder.record_user_cell(ev.CodeEvent(content=cell, code=cell, agent=ev.USER_AGENT))
    await recorder.close()  # killed before its outcome came
    nb = to_notebook(recorder.dir)
    assert _cells(nb, "code") == []
    assert "still running when the session was interrupted" in "".join(_cells(nb, "markdown"))


def test_the_notebook_defines_final_answer_only_when_a_cell_calls_it(tmp_path):
    import asyncio

    folder = asyncio.run(_session(tmp_path, [code("final_answer(6 * 7)")]))
    nb = to_notebook(folder)
    namespace: dict[str, Any] = {}
    for source in _cells(nb, "code"):
        exec(source, namespace)  # the stub runs the cell without printing anything
    assert "def final_answer(" in to_script(folder)
    plain = asyncio.run(_session(tmp_path / "b", [code("print(1)"), "1"]))
    assert "final_answer" not in "".join(_cells(to_notebook(plain), "code"))


# -- loading cells --------------------------------------------------------------------------
class _Payload:
    """Unpickling it touches a marker file: proof that a pickle's code ran."""

    def __init__(self, marker: pathlib.Path) -> None:
        self.marker = marker

    def __reduce__(self) -> Any:
        return (pathlib.Path.touch, (self.marker,))


async def _dump_with_pickle(folder: pathlib.Path) -> None:
    runtime = IPythonRuntime(
        variables=[Variable("cfg", {"tags": {"a"}}, "pickled"), Variable("k", [1, 2], "json")]
    )
    await runtime.start()
    await dump_namespace(runtime, folder)
    await runtime.stop()


def _swap_pickle(folder: pathlib.Path, payload: bytes, *, update_manifest: bool) -> None:
    manifest_path = folder / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    entry = next(e for e in manifest["variables"] if e["format"] == "pickle")
    (folder / entry["file"]).write_bytes(payload)
    if update_manifest:
        import hashlib

        entry["sha256"] = hashlib.sha256(payload).hexdigest()
        entry["bytes"] = len(payload)
        manifest_path.write_text(json.dumps(manifest))


async def test_the_load_cell_restores_a_dump_without_cave(tmp_path):
    await _dump_with_pickle(tmp_path / "d")
    sha = file_sha256(tmp_path / "d" / "manifest.json")
    record = {"type": "load", "path": str(tmp_path / "d"), "manifest_sha256": sha}
    _, source = setup_code({**record, "trusted": True})
    assert "cave_tui" not in source
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    assert namespace["cfg"] == {"tags": {"a"}} and namespace["k"] == [1, 2]
    assert "_cave_restore" not in namespace
    _, untrusted = setup_code(record)  # a recording that does not say it trusted them
    with pytest.raises(RuntimeError, match="did not trust"):
        exec(untrusted, {})


async def test_the_load_cell_never_unpickles_what_the_session_did_not_load(tmp_path):
    await _dump_with_pickle(tmp_path / "d")
    sha = file_sha256(tmp_path / "d" / "manifest.json")
    marker = tmp_path / "ran"
    # The pickle replaced after the session: its sha256 no longer matches the manifest.
    _swap_pickle(tmp_path / "d", pickle.dumps(_Payload(marker)), update_manifest=False)
    with pytest.raises(RuntimeError, match="does not match its sha256"):
        exec(load_code(str(tmp_path / "d"), sha, True), {})
    # ... and with the manifest rewritten to match: the manifest's own hash differs.
    _swap_pickle(tmp_path / "d", pickle.dumps(_Payload(marker)), update_manifest=True)
    with pytest.raises(RuntimeError, match="changed since the session loaded it"):
        exec(load_code(str(tmp_path / "d"), sha, True), {})
    # A session that did not trust pickles: its notebook refuses them whatever the hashes.
    new_sha = file_sha256(tmp_path / "d" / "manifest.json")
    with pytest.raises(RuntimeError, match="did not trust"):
        exec(load_code(str(tmp_path / "d"), new_sha, False), {})
    assert not marker.exists()


async def test_the_load_cell_runs_a_version_2_dumps_definitions_after_its_values(tmp_path, capsys):
    runtime = IPythonRuntime()
    await runtime.start()
    await runtime.execute(
        "import math\nrate = 3\n"
        "def scaled(v, k=rate):\n    return v * k\n"
        "class Box:\n    size = rate + 1\n"
        "    def area(self):\n        return math.floor(self.size)\n"
        "twice = lambda v: scaled(v, 2)\n"
    )
    await dump_namespace(runtime, tmp_path / "d")
    await runtime.stop()
    manifest_path = tmp_path / "d" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    assert manifest["version"] == 2
    assert [d["name"] for d in manifest["definitions"]] == ["scaled", "Box", "twice"]
    sha = file_sha256(manifest_path)
    namespace: dict[str, Any] = {}
    exec(load_code(str(tmp_path / "d"), sha, False), namespace)
    assert namespace["scaled"](2) == 6 and namespace["Box"]().area() == 4
    assert namespace["twice"](5) == 10 and namespace["rate"] == 3
    assert "_cave_restore" not in namespace and "_cave_name" not in namespace
    # A definition that fails is named; the others still run.
    manifest["definitions"][0]["source"] = "raise ValueError('gone')\n"
    manifest_path.write_text(json.dumps(manifest))
    namespace = {}
    exec(load_code(str(tmp_path / "d"), None, False), namespace)
    assert "scaled not restored" in capsys.readouterr().out and "scaled" not in namespace
    assert namespace["Box"]().area() == 4
    # Names are checked before anything is read or run; a newer dump is refused.
    manifest["definitions"][1]["name"] = "_box"
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(RuntimeError, match="'_box' is not a name to restore"):
        exec(load_code(str(tmp_path / "d"), None, False), {})
    manifest_path.write_text(json.dumps({**manifest, "version": 3}))
    with pytest.raises(RuntimeError, match=r"not a cave dump this notebook reads \(version 3\)"):
        exec(load_code(str(tmp_path / "d"), None, False), {})


def test_an_injected_pickle_is_unpickled_only_if_unchanged(tmp_path):
    path = tmp_path / "obj.pkl"
    path.write_bytes(pickle.dumps({"k": 7}))
    record = {
        "name": "obj",
        "source": {"kind": "file", "path": str(path), "format": "pickle",
                   "sha256": file_sha256(path), "trusted": True},
    }  # fmt: skip
    namespace: dict[str, Any] = {}
    exec(setup_code(record)[1], namespace)
    assert namespace["obj"] == {"k": 7}
    marker = tmp_path / "ran"
    path.write_bytes(pickle.dumps(_Payload(marker)))
    with pytest.raises(RuntimeError, match="changed since the session"):
        exec(setup_code(record)[1], {})
    assert not marker.exists()


def test_loading_cells_read_each_format_as_cave_did(tmp_path):
    import numpy as np
    import pandas as pd

    from cave_tui.dataio import load_file

    frame = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    files = {
        "csv": tmp_path / "f.csv",
        "tsv": tmp_path / "f.tsv",
        "json": tmp_path / "f.json",
        "jsonl": tmp_path / "f.jsonl",
        "npy": tmp_path / "f.npy",
        "npz": tmp_path / "f.npz",
        "feather": tmp_path / "f.feather",
    }
    frame.to_csv(files["csv"], index=False)
    frame.to_csv(files["tsv"], index=False, sep="\t")
    files["json"].write_text(json.dumps({"k": [1, 2]}))
    files["jsonl"].write_text('{"a": 1}\n{"a": 2}\n')
    np.save(files["npy"], np.arange(3))
    np.savez(files["npz"], one=np.arange(2))
    frame.to_feather(files["feather"])
    for fmt, path in files.items():
        source = {"kind": "file", "path": str(path), "format": fmt}
        namespace: dict[str, Any] = {}
        exec(setup_code({"name": "v", "source": source})[1], namespace)
        expected = load_file(path).value
        got = namespace["v"]
        if isinstance(expected, pd.DataFrame):
            pd.testing.assert_frame_equal(got, expected)
        elif isinstance(expected, dict) and fmt == "npz":
            assert got.keys() == expected.keys()
        elif isinstance(expected, np.ndarray):
            assert (got == expected).all()
        else:
            assert got == expected
