"""`cave acp --kernel`'s start: the SDK is imported while the kernel boots; an SDK that
cannot be imported ends the start with the kernel stopped."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.protocol_start import no_kernel_left, start_with_a_broken_sdk


def test_an_sdk_that_fails_to_import_stops_the_kernel_started_meanwhile(tmp_path: Path) -> None:
    code, said = start_with_a_broken_sdk(tmp_path, "acp")
    assert code == 2, said
    assert "ImportError: this acp is broken" in said
    assert "Traceback" not in said
    assert no_kernel_left(tmp_path)
