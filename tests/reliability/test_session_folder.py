"""`cave run` whose session folder is deleted mid-run: re-created, nothing lost, told once."""

from __future__ import annotations

from cave_tui.session import SessionStore, read_session
from tests.reliability.real_cave import cave, code, script


def test_a_session_folder_deleted_mid_run_is_recreated_with_everything(tmp_path):
    replies = [
        code("before = 1\nprint('first')"),
        # cave's own snapshot of the first step may still be writing into the folder (a
        # loaded machine): rmtree then meets a file made meanwhile, so it goes on till gone
        code(
            "import glob, os, shutil\nd = glob.glob('s/*')[0]\n"
            "while os.path.exists(d):\n    shutil.rmtree(d, ignore_errors=True)\n"
            "print('deleted')"
        ),
        code("after = before + 1\nprint('third')"),
        "done",
    ]
    model = script(tmp_path / "m.yaml", replies)
    # The model's code deletes from the folder cave runs in: in process (a root host's
    # kernel runs as nobody, in a folder of its own).
    result = cave(
        "run", "go", "--model", model, "--policy", "trusted", "--sessions-dir", "s",
        "--in-process", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("was deleted while recording") == 1
    data = read_session(SessionStore(tmp_path / "s").resolve("last"))
    outputs = [r["output"] for r in data.records if r["type"] == "execution_output"]
    errors = [r for r in data.records if r["type"] == "execution_error"]
    assert outputs == ["first\n", "deleted\n", "third\n"], errors
    assert data.meta["status"] == "completed" and data.records[-1]["type"] == "closed"
