"""Bad input gets a clear DataIOError naming the file and the problem, and loses nothing."""

from __future__ import annotations

import errno
import io
import multiprocessing
import os
import pickle
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cave_tui.dataio import (
    DataIOError,
    FileExistsConflict,
    InvalidNameError,
    NameConflictError,
    TrustRequiredError,
    check_name,
    dump_namespace,
    inject_file,
    load_dump,
    load_file,
    save_object,
)
from cave_tui.dataio import save as save_module
from cave_tui.runtime.ipython import IPythonRuntime
from cave_tui.runtime.items import Variable


def _npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def _load_error(path: Path, **kwargs) -> str:
    with pytest.raises(DataIOError) as info:
        load_file(path, **kwargs)
    message = str(info.value)
    assert str(path.name) in message, message  # every message names the file
    return message


def test_missing_file_suggests_a_close_name(tmp_path, frame):
    frame.to_parquet(tmp_path / "sales.parquet")
    message = _load_error(tmp_path / "sale.parquet")
    assert "no such file" in message and "did you mean sales.parquet" in message


def test_a_directory_is_not_a_file(tmp_path):
    (tmp_path / "data.parquet").mkdir()
    assert "is a directory" in _load_error(tmp_path / "data.parquet")


def test_empty_file(tmp_path):
    (tmp_path / "e.csv").write_bytes(b"")
    assert "is empty" in _load_error(tmp_path / "e.csv")


def test_truncated_parquet(tmp_path, frame):
    path = tmp_path / "t.parquet"
    frame.to_parquet(path)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    assert "truncated or corrupt" in _load_error(path)


def _scramble_middle(path: Path) -> None:
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 4000] = os.urandom(4000)  # footer intact, pages garbage
    path.write_bytes(bytes(data))


def test_corrupt_parquet_body(tmp_path):
    rng = np.random.default_rng(0)
    words = pd.DataFrame({"w": rng.choice(["alpha", "beta", "gamma"], 200_000)})
    path = tmp_path / "c.parquet"
    words.to_parquet(path, compression="snappy")
    _scramble_middle(path)
    message = _load_error(path)
    assert "Parquet" in message and "corrupt" in message


def test_silent_corruption_of_a_saved_file_is_caught_by_page_checksums(tmp_path):
    floats = pd.DataFrame({"v": np.random.default_rng(0).normal(size=50_000)})
    saved = save_object(floats, tmp_path / "f.parquet")
    _scramble_middle(saved.path)  # random floats decode fine: only the checksum can tell
    assert "checksum" in _load_error(saved.path)


def test_truncated_pickle(tmp_path):
    path = tmp_path / "obj.pkl"
    path.write_bytes(pickle.dumps({"rows": list(range(1000))})[:-50])
    message = _load_error(path, trust=True)
    assert "truncated or corrupt" in message


def test_pickle_needs_trust(tmp_path):
    path = tmp_path / "obj.pkl"
    path.write_bytes(pickle.dumps([1, 2]))
    with pytest.raises(TrustRequiredError, match=r"obj\.pkl.*runs code"):
        load_file(path)
    assert load_file(path, trust=True).value == [1, 2]


def test_object_npy_needs_trust(tmp_path):
    path = tmp_path / "objs.npy"
    np.save(path, np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    with pytest.raises(TrustRequiredError):
        load_file(path)
    assert load_file(path, trust=True).value[0] == {"a": 1}


def test_truncated_npy(tmp_path):
    path = tmp_path / "a.npy"
    np.save(path, np.arange(1000.0))
    path.write_bytes(path.read_bytes()[:-100])
    assert "truncated" in _load_error(path)


@pytest.mark.parametrize(
    "name, writer, says",
    [
        ("csv_in_disguise.parquet", lambda p: p.write_text("a,b\n1,2\n"), "look like text"),
        (
            "parquet_in_disguise.csv",
            lambda p: pd.DataFrame({"a": [1]}).to_parquet(p),
            "look like Parquet",
        ),
        ("text.npy", lambda p: p.write_text("hello"), "look like text"),
        ("arr.pkl", lambda p: p.write_bytes(_npy_bytes(np.arange(3))), "NumPy"),
        ("zip.npz", lambda p: shutil.make_archive(str(p)[:-4], "zip", p.parent), "archive"),
    ],
)
def test_wrong_extension_vs_magic_bytes(tmp_path, name, writer, says):
    path = tmp_path / name
    writer(path)
    if name == "zip.npz":
        os.replace(str(path)[:-4] + ".zip", path)
    message = _load_error(path, trust=True)
    assert "the extension says" in message and says in message


def test_unknown_extension_is_identified_by_magic_or_refused(tmp_path, frame):
    frame.to_parquet(tmp_path / "data.bin")
    assert load_file(tmp_path / "data.bin").format == "parquet"
    (tmp_path / "notes.txt").write_text("just text")
    assert "unknown extension" in _load_error(tmp_path / "notes.txt")


def test_invalid_json_names_line_and_column(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"a": 1,\n "b": }')
    assert "line 2" in _load_error(path)
    lines = tmp_path / "bad.jsonl"
    lines.write_text('{"a": 1}\n{"a": \n')
    assert "line 2" in _load_error(lines)


@pytest.mark.parametrize(
    "name, error",
    [
        ("2fast", InvalidNameError),
        ("my-var", InvalidNameError),
        ("class", InvalidNameError),
        ("_hidden", InvalidNameError),
        ("", InvalidNameError),
        ("list", NameConflictError),
        ("print", NameConflictError),
        ("df", NameConflictError),
    ],
)
def test_invalid_and_reserved_names(name, error):
    with pytest.raises(error) as info:
        check_name(name, existing=["df"])
    assert repr(name) in str(info.value)
    if error is NameConflictError:
        assert info.value.kind == ("variable" if name == "df" else "builtin")
        assert check_name(name, existing=["df"], allow_shadow=True) == name


async def test_inject_conflict_keeps_the_existing_variable(tmp_path, frame):
    runtime = IPythonRuntime(variables=[Variable("sales", 42)])
    frame.to_parquet(tmp_path / "sales.parquet")
    with pytest.raises(NameConflictError) as info:
        await inject_file(runtime, tmp_path / "sales.parquet")
    assert info.value.kind == "variable"
    assert await runtime.retrieve("sales") == 42  # nothing lost
    await inject_file(runtime, tmp_path / "sales.parquet", allow_shadow=True)
    pd.testing.assert_frame_equal(await runtime.retrieve("sales"), frame)
    with pytest.raises(DataIOError, match="no such file"):
        await inject_file(runtime, tmp_path / "missing.csv")
    assert (await runtime.execute("print(len(sales))")).output.strip() == "6"  # still running


def test_save_never_overwrites_without_consent(tmp_path, frame):
    path = tmp_path / "out.parquet"
    save_object(frame, path)
    before = path.read_bytes()
    with pytest.raises(FileExistsConflict, match="already exists"):
        save_object(frame.head(1), path)
    assert path.read_bytes() == before
    save_object(frame.head(1), path, overwrite=True)
    assert len(load_file(path).value) == 1


def test_save_to_a_format_that_does_not_fit(tmp_path):
    with pytest.raises(DataIOError, match=r"cannot save a object as Parquet"):
        save_object(object(), tmp_path / "x.parquet")
    with pytest.raises(DataIOError, match="unknown extension"):
        save_object([1], tmp_path / "x.weird")
    assert list(tmp_path.iterdir()) == []  # no temporary files left behind


def _leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.startswith(".")]


def test_full_disk_mid_write_keeps_the_previous_file(tmp_path, frame, monkeypatch):
    path = tmp_path / "result.parquet"
    save_object(frame, path)
    before = path.read_bytes()
    real = save_module.WRITERS["parquet"]

    def fills_the_disk(obj, tmp, **options):
        real(obj, tmp, **options)  # a real, complete write…
        with open(tmp, "r+b") as f:
            f.truncate(100)  # …of which only part reached the disk
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setitem(save_module.WRITERS, "parquet", fills_the_disk)
    with pytest.raises(DataIOError) as info:
        save_object(frame.head(2), path, overwrite=True)
    assert "disk is full" in str(info.value) and "result.parquet" in str(info.value)
    assert path.read_bytes() == before
    assert _leftovers(tmp_path) == []


def test_full_disk_inside_pyarrow(tmp_path, frame, monkeypatch):
    def enospc(self, path, *args, **kwargs):
        Path(path).write_bytes(b"PAR1partial")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", enospc)
    with pytest.raises(DataIOError, match="disk is full"):
        save_object(frame, tmp_path / "x.parquet")
    assert list(tmp_path.iterdir()) == []


async def test_full_disk_during_a_dump_keeps_the_previous_dump(tmp_path, frame, monkeypatch):
    runtime = IPythonRuntime(variables=[Variable("a", frame), Variable("b", [1, 2])])
    await dump_namespace(runtime, tmp_path / "dump")
    before = {p.name: p.read_bytes() for p in (tmp_path / "dump").iterdir()}
    runtime.inject(Variable("a", frame.head(1)))

    def enospc(obj, tmp, **options):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setitem(save_module.WRITERS, "json", enospc)
    with pytest.raises(DataIOError, match=r"disk is full.*previous dump is intact"):
        await dump_namespace(runtime, tmp_path / "dump")
    after = {p.name: p.read_bytes() for p in (tmp_path / "dump").iterdir()}
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dump"]  # no staging folder left
    restored = IPythonRuntime()
    await load_dump(restored, tmp_path / "dump")
    pd.testing.assert_frame_equal(await restored.retrieve("a"), frame)


def _in_child(fn, *args):
    """Run *fn* in a forked child (modules already imported) and return its result."""
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()

    def target():
        try:
            queue.put(("ok", fn(*args)))
        except BaseException as exc:
            queue.put(("error", f"{type(exc).__name__}: {exc}"))

    proc = ctx.Process(target=target)
    proc.start()
    proc.join(30)
    return queue.get(timeout=5)


def _save_as_nobody(obj, path, overwrite):
    if os.geteuid() == 0:  # root ignores folder permissions: drop to nobody first
        os.setgid(65534)
        os.setuid(65534)
    saved = save_object(obj, path, overwrite=overwrite)
    return str(saved.path)


def test_read_only_folder(frame):
    save_object(frame, tmp_path_probe := Path(tempfile.mkdtemp(dir="/tmp")) / "warm.parquet")
    base = tmp_path_probe.parent
    try:
        os.chmod(base, 0o755)
        folder = base / "ro"
        folder.mkdir()
        keep = folder / "keep.parquet"
        save_object(frame, keep)
        before = keep.read_bytes()
        os.chmod(folder, 0o555)
        kind, message = _in_child(_save_as_nobody, frame, folder / "new.parquet", False)
        assert kind == "error" and "DataIOError" in message
        assert (
            "permission denied" in message and "read-only" in message and "new.parquet" in message
        )
        kind, message = _in_child(_save_as_nobody, frame.head(1), keep, True)
        assert kind == "error" and "permission denied" in message
        assert keep.read_bytes() == before
        assert sorted(p.name for p in folder.iterdir()) == ["keep.parquet"]
    finally:
        os.chmod(base / "ro", 0o755) if (base / "ro").exists() else None
        shutil.rmtree(base, ignore_errors=True)


def _save_with_file_size_limit(obj, path):
    import resource
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # get EFBIG instead of being killed
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
    return str(save_object(obj, path, overwrite=True).path)


def test_a_real_failed_write_leaves_the_old_file(tmp_path):
    big = pd.DataFrame({"v": np.random.default_rng(1).normal(size=20_000)})
    path = tmp_path / "big.parquet"
    save_object(big.head(10), path)
    before = path.read_bytes()
    kind, message = _in_child(_save_with_file_size_limit, big, path)
    assert kind == "error" and "DataIOError" in message and "big.parquet" in message
    assert path.read_bytes() == before
    assert _leftovers(tmp_path) == []


async def test_load_dump_refuses_pickles_without_trust(tmp_path):
    runtime = IPythonRuntime(variables=[Variable("pair", (1, 2)), Variable("n", 3)])
    await dump_namespace(runtime, tmp_path / "d")
    target = IPythonRuntime()
    with pytest.raises(TrustRequiredError, match="pair"):
        await load_dump(target, tmp_path / "d")
    assert await target.names() == []  # all or nothing


async def test_load_dump_detects_a_changed_file(tmp_path):
    runtime = IPythonRuntime(variables=[Variable("n", [1, 2, 3])])
    await dump_namespace(runtime, tmp_path / "d")
    (tmp_path / "d" / "n.json").write_text("[1, 2, 4]")
    with pytest.raises(DataIOError, match=r"n\.json does not match its sha256"):
        await load_dump(IPythonRuntime(), tmp_path / "d")


async def test_dump_refuses_a_folder_that_is_not_a_dump(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.tex").write_text("precious")
    with pytest.raises(DataIOError, match="not a cave dump"):
        await dump_namespace(IPythonRuntime(variables=[Variable("n", 1)]), tmp_path / "mine")
    assert (tmp_path / "mine" / "thesis.tex").read_text() == "precious"
