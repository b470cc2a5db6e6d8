"""Which folders a dump may write into, and that it never removes a file it did not write.

A dump writes only into a new or empty folder or a previous cave dump (whose files it alone
replaces: a user's file there stays); the current folder, a folder holding it and the sessions
folder are refused before anything is written; two dumps into one folder never race.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cave_tui.dataio import DataIOError, checkpoint_namespace, dump_namespace, read_dump
from cave_tui.dataio import staging as staging_module
from cave_tui.dataio.dump_lock import DumpBusyError, dump_lock
from cave_tui.runtime.ipython import IPythonRuntime
from cave_tui.runtime.items import Variable

CAVE = str(Path(sys.executable).with_name("cave"))


def _tree(folder: Path) -> dict[str, str]:
    """Every file under *folder* (hidden ones too) with a hash of its bytes."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _web_app(folder: Path) -> Path:
    """A web-app project: a PWA manifest.json, a git repository, public/, sessions/."""
    (folder / "public").mkdir(parents=True)
    (folder / ".git").mkdir()
    (folder / "sessions" / "old").mkdir(parents=True)
    (folder / "manifest.json").write_text('{"name": "app", "start_url": "/", "icons": []}')
    (folder / "public" / "index.html").write_text("<h1>app</h1>")
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (folder / "sessions" / "old" / "meta.json").write_text("{}")
    return folder


def _extension(folder: Path) -> Path:
    """A browser extension: manifest.json with `manifest_version`, and its scripts."""
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text('{"manifest_version": 3, "name": "ext"}')
    (folder / "background.js").write_text("chrome.runtime.onInstalled.addListener(() => {});")
    (folder / "popup.js").write_text("console.log('hi');")
    return folder


def _runtime(**values: object) -> IPythonRuntime:
    return IPythonRuntime(variables=[Variable(k, v) for k, v in values.items()])


@pytest.mark.parametrize("make", [_web_app, _extension])
async def test_a_folder_that_is_not_a_dump_is_refused_and_keeps_every_file(tmp_path, make):
    folder = make(tmp_path / "project")
    before = _tree(folder)
    with pytest.raises(
        DataIOError, match=r"holds other files and is not a cave dump.*manifest\.json"
    ) as caught:
        await dump_namespace(_runtime(x=1), folder)
    assert "nothing was written" in str(caught.value)
    assert _tree(folder) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["project"]  # no staging, no lock


async def test_a_users_file_in_a_dump_folder_stays_and_only_listed_files_go(tmp_path):
    target = tmp_path / "out"
    await dump_namespace(_runtime(a=1, b=[1, 2]), target)
    first = {e["file"] for e in json.loads((target / "manifest.json").read_text())["variables"]}
    (target / "notes.txt").write_text("my notes")
    (target / "plots").mkdir()
    (target / "plots" / "p.png").write_bytes(b"\x89PNG")
    result = await dump_namespace(_runtime(c=3), target)
    assert read_dump(target).values == {"c": 3}
    assert (target / "notes.txt").read_text() == "my notes"
    assert (target / "plots" / "p.png").read_bytes() == b"\x89PNG"
    listed = {e["file"] for e in result.saved}
    assert {p.name for p in target.iterdir()} == listed | {"manifest.json", "notes.txt", "plots"}
    assert not first & {p.name for p in target.iterdir()} - listed  # the old files are gone
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


async def test_a_dump_inside_a_mount_point_removes_only_what_its_manifest_listed(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(staging_module, "is_mount_point", lambda path: True)
    target = tmp_path / "vol"
    await dump_namespace(_runtime(a=1), target)
    (target / "mine.csv").write_text("k,v\n1,2\n")
    await dump_namespace(_runtime(a=2), target)
    assert read_dump(target).values == {"a": 2}
    assert (target / "mine.csv").read_text() == "k,v\n1,2\n"


async def test_the_current_folder_its_parents_and_the_sessions_folder_are_refused(
    tmp_path, monkeypatch
):
    project = tmp_path / "project"
    (project / "sessions" / "s1").mkdir(parents=True)
    monkeypatch.chdir(project)
    before = _tree(tmp_path)
    cases = {
        ".": "it is the current folder",
        str(tmp_path): "it holds the current folder",
        "sessions": "it is the sessions folder",
        "sessions/s1": "inside the sessions folder",
    }
    for where, why in cases.items():
        with pytest.raises(DataIOError, match=why):
            await dump_namespace(_runtime(x=1), where, sessions=project / "sessions")
    elsewhere = tmp_path / "other"
    (elsewhere / "sessions").mkdir(parents=True)
    with pytest.raises(DataIOError, match="it holds the sessions folder"):
        await dump_namespace(_runtime(x=1), elsewhere, sessions=elsewhere / "sessions")
    assert _tree(tmp_path) == before  # nothing written anywhere (no lock file, no staging)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other", "project"]


async def test_a_second_dump_into_a_folder_being_written_is_refused(tmp_path):
    target = tmp_path / "out"
    await dump_namespace(_runtime(a=1), target)
    busy = pytest.raises(DumpBusyError, match=r"process \d+ is writing a dump there now")
    with dump_lock(target), busy:  # a dump under way (in another process: test_dump_staging)
        await dump_namespace(_runtime(a=2), target, sync=False)
    assert read_dump(target).values == {"a": 1}
    await dump_namespace(_runtime(a=3), target, sync=False)  # once it is done: fine
    assert read_dump(target).values == {"a": 3}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


async def test_a_snapshot_never_removes_a_file_it_did_not_write(tmp_path):
    folder = tmp_path / "namespace"
    runtime = _runtime(a=1)
    await checkpoint_namespace(runtime, folder, sync=False)
    (folder / "README.txt").write_text("mine")
    (folder / "a.7.pkl").write_bytes(b"left by a killed snapshot")  # cave's own name
    await runtime.execute("a = 2")
    await checkpoint_namespace(runtime, folder, changed={"a"}, sync=False)
    assert (folder / "README.txt").read_text() == "mine"
    assert not (folder / "a.7.pkl").exists()
    assert read_dump(folder).values == {"a": 2}


# -- through `cave run` --------------------------------------------------------------------------
def _cave(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CAVE, *args, "--in-process"], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def _model(path: Path) -> str:
    path.write_text(yaml.safe_dump(["```python\nx = 1\ny = [2, 3]\n```", "done"]))
    return f"scripted:{path}"


def test_cave_run_dump_dot_in_a_web_app_exits_3_and_keeps_every_file(tmp_path):
    app = _web_app(tmp_path / "app")
    before = _tree(app)
    run = _cave("run", "t", "--model", _model(tmp_path / "m.yaml"), "--dump", ".", cwd=app)
    assert run.returncode == 3, run.stderr
    said = " ".join(run.stderr.split())
    assert "cannot dump into" in said and "it is the current folder" in said
    assert "Traceback" not in run.stderr
    assert _tree(app) == before


def test_cave_run_refuses_an_extension_folder_by_dump_and_by_slash_dump(tmp_path):
    ext = _extension(tmp_path / "ext")
    before = _tree(ext)
    model = _model(tmp_path / "m.yaml")
    run = _cave("run", "t", "--model", model, "--dump", "ext", cwd=tmp_path)
    assert run.returncode == 3, run.stderr
    assert "holds other files and is not a cave dump" in " ".join(run.stderr.split())
    assert "Traceback" not in run.stderr
    run = _cave("run", "/dump ext", "--yes", cwd=tmp_path)  # --yes: it must not even ask
    assert run.returncode == 2, run.stderr
    said = " ".join((run.stdout + run.stderr).split())  # the message is wrapped to a width
    assert "Replace it?" not in said and "holds other files and is not a cave dump" in said
    assert _tree(ext) == before


def test_cave_run_dump_keeps_a_users_file_in_the_dump_folder(tmp_path):
    model = _model(tmp_path / "m.yaml")
    run = _cave("run", "t", "--model", model, "--dump", "out", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    (tmp_path / "out" / "notes.md").write_text("# what these numbers are")
    run = _cave("run", "/dump out", "--yes", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "out" / "notes.md").read_text() == "# what these numbers are"
    run = _cave("run", "t", "--model", model, "--dump", "out", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "out" / "notes.md").read_text() == "# what these numbers are"
    assert read_dump(tmp_path / "out").values == {"x": 1, "y": [2, 3]}
