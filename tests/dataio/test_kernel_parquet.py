"""`/inject` of a parquet file into the kernel: the kernel reads the file itself when it can,
takes its bytes from the host when it cannot, and refuses a file that changed or is corrupt."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import pytest_asyncio

from cave_tui.dataio import DataIOError, inject_file
from cave_tui.dataio.load import load_file
from cave_tui.runtime import Variable
from cave_tui.runtime.items import ParquetFile
from cave_tui.runtime.kernel import IPyKernelRuntime, injection
from cave_tui.runtime.kernel.errors import InjectionError

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel():
    runtime = IPyKernelRuntime()
    await runtime.start()
    yield runtime
    await runtime.stop()


@pytest.fixture
def fallbacks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names whose bytes the host had to send (the kernel could not read the file)."""
    sent: list[str] = []
    real = injection.fallback_payload

    def counted(item, payload):
        out = real(item, payload)
        if out is not None:
            sent.append(item.name)
        return out

    monkeypatch.setattr("cave_tui.runtime.kernel.supervisor.fallback_payload", counted)
    return sent


def sales(rows: int = 5_000) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame(
        {
            "region": pd.Series(rng.choice(["north", "south"], rows), dtype="str"),
            "amount": rng.normal(100, 20, rows),
            "when": pd.date_range("2024-01-01", periods=rows, freq="min"),
        }
    )


@pytest.fixture
def shared_file():
    """Writes a parquet file the kernel's user may read (a root host runs kernels as nobody,
    and pytest's own temporary folders are private)."""
    folder = Path(tempfile.mkdtemp(prefix="cave-shared-"))
    folder.chmod(0o755)

    def write(frame: pd.DataFrame) -> Path:
        path = folder / "sales.parquet"
        frame.to_parquet(path)
        path.chmod(0o644)
        return path

    yield write
    shutil.rmtree(folder)


async def test_the_kernel_reads_a_file_it_can_see(kernel, fallbacks, shared_file):
    frame = sales()
    injection_ = await inject_file(kernel, shared_file(frame), "sales")
    assert injection_.type_name == "DataFrame" and "5,000×3" in injection_.description
    pd.testing.assert_frame_equal(await kernel.retrieve("sales"), frame)
    assert fallbacks == []


async def test_the_host_sends_the_bytes_of_a_file_the_kernel_cannot_read(
    kernel, fallbacks, tmp_path
):
    frame = sales(300)
    path = tmp_path / "private.parquet"
    frame.to_parquet(path)
    path.chmod(0o600)
    if os.geteuid() != 0:  # the kernel runs as this user: hide the file from it another way
        return await _hidden_by_a_changed_path(kernel, fallbacks, frame, path)
    await inject_file(kernel, path, "private")
    pd.testing.assert_frame_equal(await kernel.retrieve("private"), frame)
    assert fallbacks == ["private"]


async def _hidden_by_a_changed_path(kernel, fallbacks, frame, path):
    checked = load_file(path, parquet_as_file=True, compute_sha256=False).value
    moved = ParquetFile(str(path) + ".gone", checked.size, checked.mtime_ns)
    with pytest.raises(InjectionError):
        await kernel.ainject(Variable("private", moved))
    assert fallbacks == []  # the fallback read failed too: nothing sent, nothing bound


async def test_a_file_that_changed_after_the_check_is_refused(kernel, shared_file):
    path = shared_file(sales(100))
    checked = load_file(path, parquet_as_file=True, compute_sha256=False).value
    sales(200).to_parquet(path)  # rewritten between the host's check and the kernel's read
    with pytest.raises(InjectionError, match="changed since it was injected"):
        await kernel.ainject(Variable("stale", checked))
    assert "stale" not in await kernel.names()


async def test_a_corrupt_body_is_a_clear_error_and_the_kernel_goes_on(kernel, shared_file):
    words = pd.DataFrame({"w": np.random.default_rng(0).choice(["a", "bb", "ccc"], 100_000)})
    path = shared_file(words)
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 4000] = os.urandom(4000)  # the footer intact, the pages garbage
    path.write_bytes(bytes(data))
    with pytest.raises(DataIOError, match="could not read it as Parquet") as caught:
        await inject_file(kernel, path, "words")
    assert str(path) in str(caught.value)
    assert (await kernel.execute("print(1 + 1)")).output == "2\n"
