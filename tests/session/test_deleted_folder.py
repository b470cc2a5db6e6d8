"""A session folder deleted while recording is re-created with everything recorded so far."""

from __future__ import annotations

import json

from cave_tui.runtime.items import Variable
from cave_tui.session import SessionRecorder, read_session, resume_session
from tests.session.helpers import code, scripted_agent


async def test_deleting_the_session_folder_mid_turn_loses_nothing(tmp_path):
    agent = scripted_agent(
        [
            code("before = 1\nprint('first')"),
            # A background snapshot may be writing into the folder: finish the deletion if it raced.
            code(
                "import shutil, time\n"
                "for _ in range(100):  # once: a retry only finishes a deletion that raced\n"
                "    try:\n"
                "        shutil.rmtree(folder)\n"
                "        break\n"
                "    except FileNotFoundError:\n"
                "        break\n"
                "    except OSError:  # a file written meanwhile: 'Directory not empty'\n"
                "        time.sleep(0.05)\n"
                "print('deleted')"
            ),
            code("after = before + 1\nprint('third')"),
            "Done.",
        ]
    )
    recorder = SessionRecorder.create(tmp_path, agent=agent)
    told: list[str] = []
    recorder.on_warning = told.append
    agent.runtime.inject(Variable("folder", str(recorder.dir)))
    await recorder.run("go")
    await recorder.close()

    assert recorder.dir.is_dir()
    data = read_session(recorder.dir)
    outputs = [r["output"] for r in data.records if r["type"] == "execution_output"]
    assert outputs == ["first\n", "deleted\n", "third\n"]  # before and after the deletion
    assert [r["seq"] for r in data.records] == list(range(1, len(data.records) + 1))
    assert data.records[0]["type"] == "session" and data.records[-1]["type"] == "closed"
    (said,) = [t for t in told if "was deleted while recording" in t]  # told once
    assert any(r["type"] == "notice" and r["content"] == said for r in data.records)
    meta = json.loads((recorder.dir / "meta.json").read_text())
    assert meta["status"] == "closed" and meta["turns"] == 1
    manifest = json.loads((recorder.dir / "namespace" / "manifest.json").read_text())
    assert {"before", "after"} <= {e["name"] for e in manifest["variables"]}

    again = scripted_agent(["ok"])
    resumed = await resume_session(recorder.dir, again)
    assert {"before", "after"} <= set(resumed.restored)
    assert await again.runtime.retrieve("after") == 2
    await resumed.recorder.close()
