"""`cave acp --kernel`'s start: the SDK is imported while the kernel boots; an SDK that
cannot be imported ends the start with the kernel stopped."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.protocol_start import DEADLINE, no_kernel_left, spawn


def test_an_sdk_that_fails_to_import_stops_the_kernel_started_meanwhile(tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    (broken / "acp").mkdir(parents=True)
    (broken / "acp" / "__init__.py").write_text("raise ImportError('this acp is broken')\n")
    process = spawn(tmp_path, "acp", pythonpath=(broken,))
    try:
        code = process.wait(timeout=DEADLINE)
    finally:
        if process.poll() is None:
            process.kill()
    said = (tmp_path / "stderr.txt").read_text()
    assert code == 2, said
    assert "ImportError: this acp is broken" in said
    assert "Traceback" not in said
    assert no_kernel_left(tmp_path)
