"""Nothing runs from a file that was not trusted: the real `cave run`, `cave --plain` and
the kernel runtime against tampered snapshots, forged dumps and malformed manifests.

Every payload is a pickle whose unpickling writes a marker file with the process id; the
tests assert on that file.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.helpers.dumps import entry_for, payload, rehash, replace_with_payload, write_manifest
from tests.reliability.real_cave import CAVE, code, script


def _cave(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "400"}  # `--plain` wraps at the console's width
    return subprocess.run(
        [CAVE, *args], cwd=cwd, capture_output=True, text=True, timeout=120, input=stdin, env=env
    )


def _snapshot(sessions: Path) -> Path:
    [folder] = [p for p in sessions.iterdir() if p.is_dir()]
    return folder / "namespace"


def _manifest_names(folder: Path) -> list[str]:
    manifest = json.loads((folder / "manifest.json").read_text())
    return sorted(e["name"] for e in manifest["variables"])


def test_a_tampered_snapshot_pickle_never_runs_on_resume(isolated_dirs):
    tmp = isolated_dirs
    marker = tmp / "payload-ran"
    first = script(tmp / "m1.yaml", [code("pair = (1, 'x' * 400)\nn = 5"), "done"])
    assert _cave("run", "make", "--model", first, "--sessions-dir", "s", cwd=tmp).returncode == 0
    snapshot = _snapshot(tmp / "s")
    replace_with_payload(snapshot, "pair", marker)  # the same size: only the sha256 differs
    check = script(tmp / "m2.yaml", [code("print(n)"), "ok"])

    shutil.copytree(tmp / "s", tmp / "tampered")
    # The manifest still describes the original: held back before a byte is unpickled,
    # named with the reason; everything else resumes.
    result = _cave("run", "go", "--model", check, "--sessions-dir", "s", "--resume", cwd=tmp)
    assert not marker.exists()
    assert result.returncode == 0, result.stderr
    assert "not restored: pair (" in result.stderr
    assert "pair.1.pkl does not match its sha256 (variable pair)" in result.stderr
    assert "Traceback" not in result.stderr and "5\n" in result.stdout

    # A forger who also rewrites the manifest's size and sha256: the seal no longer
    # matches, so the pickle is held back; everything else resumes.
    shutil.rmtree(tmp / "s")
    shutil.copytree(tmp / "tampered", tmp / "s")
    rehash(snapshot, "pair")
    result = _cave("run", "go", "--model", check, "--sessions-dir", "s", "--resume", cwd=tmp)
    assert not marker.exists()
    assert result.returncode == 0, result.stderr
    assert "not restored: pair (pickled, and not trusted" in result.stderr
    assert "--trust" in result.stderr and "5\n" in result.stdout
    assert _manifest_names(snapshot) == ["n", "pair"]  # kept for a resume with --trust
    # Resumed again: still held, still not run.
    result = _cave("run", "go", "--model", check, "--sessions-dir", "s", "--resume", cwd=tmp)
    assert result.returncode == 0 and not marker.exists()


def test_own_snapshot_pickles_resume_without_trust(isolated_dirs):
    tmp = isolated_dirs
    first = script(tmp / "m1.yaml", [code("pair = (1, 2)"), "done"])
    assert _cave("run", "make", "--model", first, "--sessions-dir", "s", cwd=tmp).returncode == 0
    check = script(tmp / "m2.yaml", [code("print(pair)"), "ok"])
    result = _cave("run", "go", "--model", check, "--sessions-dir", "s", "--resume", cwd=tmp)
    assert result.returncode == 0, result.stderr
    assert "(1, 2)\n" in result.stdout and "not restored" not in result.stderr


def _payload_dump(folder: Path, marker: Path, **override: object) -> Path:
    folder.mkdir()
    (folder / "cfg.pkl").write_bytes(payload(marker))
    (folder / "n.json").write_text("3")
    entries = [
        entry_for(folder, "cfg", "cfg.pkl", "pickle", **override),
        entry_for(folder, "n", "n.json", "json"),
    ]
    return write_manifest(folder, entries)


def test_load_needs_trust_and_trust_never_covers_a_wrong_hash(isolated_dirs):
    tmp = isolated_dirs
    marker = tmp / "payload-ran"
    model = script(tmp / "m.yaml", [code("print(n)"), "ok"])
    _payload_dump(tmp / "d", marker)
    result = _cave("run", "t", "--model", model, "--load", "d", cwd=tmp)
    assert result.returncode == 2
    assert "pickled objects (cfg)" in result.stderr and "--trust" in result.stderr
    assert not marker.exists()

    _payload_dump(tmp / "w", marker, sha256="0" * 64)
    result = _cave("run", "t", "--model", model, "--load", "w", "--trust", cwd=tmp)
    assert result.returncode == 2
    assert "cfg.pkl does not match its sha256" in result.stderr
    assert "Traceback" not in result.stderr
    assert not marker.exists()


def test_a_malformed_manifest_stops_the_start_with_every_problem(isolated_dirs):
    tmp = isolated_dirs
    d = tmp / "d"
    d.mkdir()
    (d / "n.json").write_text("3")
    ok = entry_for(d, "n", "n.json", "json")
    entries = [
        ok,
        {**ok, "name": "__builtins__"},
        {**ok, "name": "len"},
        {**ok, "name": "up", "file": "../../etc.json"},
        {**ok, "name": "abs_", "file": "/etc/passwd"},
        {"name": "nofile"},
    ]
    write_manifest(d, entries)
    ran = tmp / "turn-ran"
    model = script(tmp / "m.yaml", [code(f"open({str(ran)!r}, 'w')"), "ok"])
    result = _cave("run", "t", "--model", model, "--load", "d", "--policy", "trusted", cwd=tmp)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "(8 problems; nothing was loaded)" in result.stderr
    for text in ("(__builtins__).name", "(len).name", "(up).file", "(abs_).file", "(nofile).file"):
        assert text in result.stderr
    assert not ran.exists()  # the turn never started


def test_plain_load_refuses_a_broken_session_and_asks_before_unsealed_pickles(isolated_dirs):
    tmp = isolated_dirs
    marker = tmp / "payload-ran"
    first = script(tmp / "m1.yaml", [code("pair = (1, 'x' * 400)\nn = 5"), "done"])
    for title in ("broken", "forged"):
        made = _cave("run", title, "--model", first, "--sessions-dir", title, cwd=tmp)
        assert made.returncode == 0
    broken, forged = _snapshot(tmp / "broken"), _snapshot(tmp / "forged")
    manifest = json.loads((broken / "manifest.json").read_text())
    manifest["variables"][0]["file"] = "../../../elsewhere.json"
    (broken / "manifest.json").write_text(json.dumps(manifest))
    replace_with_payload(forged, "pair", marker)
    rehash(forged, "pair")
    lines = "\n".join(
        [
            f"/load {broken.parent}",
            "!print('alive', 'n' in dir())",
            f"/load {forged.parent}",
            "y",  # replace the current conversation
            "n",  # but do not load the pickles nobody vouches for
            "!print('loaded', n, 'pair' in dir())",
            "/quit",
        ]
    )
    model = script(tmp / "m2.yaml", ["unused"])
    result = _cave("--plain", "--model", model, "--sessions-dir", "s", cwd=tmp, stdin=lines)
    assert not marker.exists()
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert f"cannot load {broken.parent.name}" in out
    assert "'../../../elsewhere.json' is not a file name inside the dump folder" in out
    assert "Traceback" not in out + result.stderr
    assert "alive False" in out  # the REPL went on, nothing was injected
    assert "holds code not trusted to run here (pair)" in out
    assert "loaded 5 False" in out and "not restored: pair" in out
    assert not marker.exists()


def test_kernel_unpickles_a_trusted_dump_inside_the_kernel(isolated_dirs):
    tmp = isolated_dirs
    # The kernel runs as `nobody` when the tests run as root: the marker's folder is open.
    shared = Path(tempfile.mkdtemp(prefix="cave-trust-"))
    os.chmod(shared, 0o777)
    marker = shared / "payload-ran"
    _payload_dump(tmp / "d", marker)
    model = script(tmp / "m.yaml", [code("print(n, cfg)"), "ok"])
    proc = subprocess.Popen(
        [CAVE, "run", "t", "--model", model, "--load", "d", "--trust", "--kernel"],
        cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "3 None\n" in out
    try:
        assert marker.exists()  # trusted: it ran, but in the kernel's process, not in cave's
        assert int(marker.read_text()) != proc.pid
    finally:
        shutil.rmtree(shared, ignore_errors=True)
