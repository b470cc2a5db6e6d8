"""Moving values between the host and a kernel without trusting the kernel's bytes.

Every value travels as `(codec, meta, buffers)`: a codec name, a small JSON dict,
and binary buffers that ride in Jupyter message buffers (never base64 in source).

* Frames, series, Arrow tables and numeric arrays: Arrow IPC, both ways.
* Host to kernel, anything else: dill (the kernel may trust the host).
* Kernel to host: JSON for plain data (exact types only, size-capped), else a
  pickle read by `SafeUnpickler`, whose `find_class` resolves only a short
  allow-list of value types; anything else is refused with a `TransferError`
  that names the type and the options. dill only with `trust_kernel=True`.
* Containers holding frames or arrays (a dict of sheets, an npz's arrays): the
  same safe pickle, with each frame/array leaf replaced by a persistent id that
  points at its own Arrow buffer (`pickle.arrow`).

This module imports only the standard library at module level: the kernel runs
the same file (shipped as source), so both ends encode the same way.

Over 400 lines: host and kernel must run this one file (`_cave_transport`) to encode alike.
"""

from __future__ import annotations

import io
import json
import math
import pickle
import re
import sys
from typing import Any

JSON_LIMIT = 64 * 1024 * 1024
ARROW_CODECS = ("arrow.frame", "arrow.series", "arrow.table", "arrow.batch", "arrow.tensor")
_DTYPE = re.compile(r"^[<>|=]?[biufcmM]\d{1,2}(\[[A-Za-z0-9]+\])?$")


class TransferError(TypeError):
    """A value cannot cross between the kernel and the host (the message says why).

    `detail` is the short why, for lists of what was not saved (the message adds the ways
    around it)."""

    detail: str = ""


class UnsafeObjectError(TransferError):
    """A kernel pickle asked for something outside the safe allow-list."""


class DecodeLimitExceeded(TransferError):
    """Decoding a kernel value would take more memory or time than the host allows; the
    message names the limit and how to raise it."""


# -- numbers whose construction or later use can explode --------------------------------

MAX_DIGITS = 4300  # Python's default int_max_str_digits, for every kind of number
_NUMBER_CHARS = 2 * MAX_DIGITS + 64  # text of a number, sign, point and exponent


def _too_big(what: str) -> DecodeLimitExceeded:
    return DecodeLimitExceeded(
        f"{what}: over the limit of {MAX_DIGITS:,} digits for a number from the kernel "
        "(fixed; retrieve str() of it, or a float, instead)"
    )


def _checked_int(value: int) -> int:
    if value.bit_length() > MAX_DIGITS * 4:  # 4 bits > log2(10): a generous digit bound
        raise _too_big(f"an int of {value.bit_length():,} bits")
    return value


def _checked_decimal_text(text: str) -> Any:
    """*text* as a Decimal whose digits and exponent are bounded (Decimal parses it lazily)."""
    import decimal

    if len(text) > _NUMBER_CHARS:
        raise _too_big(f"a number of {len(text):,} characters")
    try:
        value = decimal.Decimal(text)
    except (decimal.InvalidOperation, ValueError):
        raise UnsafeObjectError(f"number text {text[:40]!r}") from None
    if value.is_finite():
        exponent = value.as_tuple().exponent
        if isinstance(exponent, int) and abs(exponent) > MAX_DIGITS:
            raise _too_big(f"{text[:40]!r} (exponent {exponent:,})")
    return value


def json_int() -> Any:
    """JSON's int parser: Python's own while `sys.set_int_max_str_digits` bounds it, else
    the bounded one."""
    return None if 0 < sys.get_int_max_str_digits() <= MAX_DIGITS else _bounded_int


def _number_args(kind: str, args: tuple[Any, ...], most: int) -> None:
    if not 1 <= len(args) <= most:
        raise UnsafeObjectError(f"{kind} with {len(args)} arguments")
    for arg in args:
        if type(arg) is int:
            _checked_int(arg)
        elif type(arg) is not str:
            raise UnsafeObjectError(f"{kind}({type(arg).__name__})")


def _bounded_fraction(*args: Any) -> Any:
    """`Fraction(str)`/`Fraction(int, int)` whose size is bounded (`Fraction('1e8000000')`
    would compute a 8-million-digit integer in C, holding the GIL for seconds)."""
    import fractions

    _number_args("Fraction", args, 2)
    if len(args) == 1 and type(args[0]) is str:
        for part in args[0].split("/", 1):
            _checked_decimal_text(part.strip())
    return fractions.Fraction(*args)


def _bounded_decimal(*args: Any) -> Any:
    """`Decimal(str)`/`Decimal(int)` with bounded digits and exponent (`int(Decimal('1e8000000'))`
    later would explode)."""
    _number_args("Decimal", args, 1)
    if type(args[0]) is str:
        return _checked_decimal_text(args[0])
    import decimal

    return decimal.Decimal(args[0])


def _bounded_int(*args: Any) -> int:
    """`int(x[, base])` on bounded text (whatever `sys.set_int_max_str_digits` says)."""
    if args and type(args[0]) in (str, bytes, bytearray) and len(args[0]) > _NUMBER_CHARS:
        raise _too_big(f"an int of {len(args[0]):,} characters")
    return _checked_int(int(*args))


# -- the restricted unpickler (kernel -> host) -----------------------------------


def _no_size(kind: type) -> Any:
    """`bytes(n)`/`bytearray(n)` allocate n bytes: a crafted pickle may not do that."""

    def build(*args: Any) -> Any:
        if args and isinstance(args[0], int):
            raise UnsafeObjectError(f"{kind.__name__}(<int>) is not allowed")
        return kind(*args)

    build.__name__ = kind.__name__
    return build


def _safe_getattr(obj: Any, name: str) -> Any:
    # zoneinfo pickles as getattr(ZoneInfo, "_unpickle"); nothing else may use getattr.
    import zoneinfo

    if obj is zoneinfo.ZoneInfo and name == "_unpickle":
        return zoneinfo.ZoneInfo._unpickle  # type: ignore[attr-defined]  # private, stable
    raise UnsafeObjectError(f"getattr({getattr(obj, '__name__', type(obj).__name__)}, {name!r})")


SAFE_GLOBALS: dict[tuple[str, str], Any] = {
    ("builtins", "complex"): None,
    ("builtins", "slice"): None,
    ("builtins", "getattr"): _safe_getattr,
    ("builtins", "bytes"): _no_size(bytes),
    ("builtins", "bytearray"): _no_size(bytearray),
    # Factories (defaultdict(list)) and constructors; none can amplify its input
    # because no lazy iterable (range, itertools) is on this list.
    **{("builtins", t.__name__): None
       for t in (list, set, frozenset, tuple, dict, float, str, bool)},
    ("builtins", "int"): _bounded_int,
    **{("datetime", n): None for n in ("datetime", "date", "time", "timedelta", "timezone")},
    ("decimal", "Decimal"): _bounded_decimal,
    ("fractions", "Fraction"): _bounded_fraction,
    ("uuid", "UUID"): None,
    ("uuid", "SafeUUID"): None,
    ("zoneinfo", "ZoneInfo"): None,
    **{("pathlib", n): None for n in (
        "PurePath", "PurePosixPath", "PureWindowsPath", "Path", "PosixPath", "WindowsPath")},
    **{("collections", n): None for n in ("OrderedDict", "deque", "Counter", "defaultdict")},
    ("pandas._libs.tslibs.timestamps", "_unpickle_timestamp"): None,
    ("pandas._libs.tslibs.timedeltas", "_timedelta_unpickle"): None,
    ("pandas._libs.tslibs.nattype", "_nat_unpickle"): None,
    ("pandas", "Interval"): None,
    ("pandas", "Period"): None,
}  # fmt: skip
# Readable names for docs and error messages.
SAFE_TYPE_NAMES = (
    "None, bool, int, float, str, bytes, list, tuple, dict, set, frozenset, complex, "
    "datetime (datetime, date, time, timedelta, timezone), zoneinfo.ZoneInfo, Decimal, "
    "Fraction, UUID, pathlib paths, OrderedDict, deque, Counter, defaultdict, "
    "pandas Timestamp, Timedelta, NaT, Period, Interval"
)


def _pandas_offset(module: str, name: str) -> Any:
    """Period pickles name its frequency's offset class (MonthEnd, Day, ...)."""
    if module != "pandas._libs.tslibs.offsets":
        return None
    import pandas._libs.tslibs.offsets as offsets

    cls = getattr(offsets, name, None)
    if isinstance(cls, type) and issubclass(cls, offsets.BaseOffset):
        return cls
    return None


class SafeUnpickler(pickle.Unpickler):
    """`pickle.Unpickler` whose `find_class` resolves only `SAFE_GLOBALS` (and asks the host's
    decode *budget*, if any, whether time is up)."""

    def find_class(self, module: str, name: str) -> Any:
        if self.budget is not None:
            self.budget.tick()
        key = (module, name)
        if key in SAFE_GLOBALS:
            replacement = SAFE_GLOBALS[key]
            return replacement if replacement is not None else super().find_class(module, name)
        offset = _pandas_offset(module, name)
        if offset is not None:
            return offset
        raise UnsafeObjectError(f"{module}.{name}")

    def __init__(self, file: Any, leaves: list[Any] | None = None, budget: Any = None) -> None:
        super().__init__(file)
        self.leaves = leaves
        self.budget = budget

    def persistent_load(self, pid: Any) -> Any:
        if self.budget is not None:
            self.budget.tick()
        if self.leaves is None or type(pid) is not int or not 0 <= pid < len(self.leaves):
            raise UnsafeObjectError("persistent ids")
        return self.leaves[pid]


def safe_loads(
    data: bytes | memoryview, leaves: list[Any] | None = None, budget: Any = None
) -> Any:
    """Unpickle kernel bytes, resolving only allow-listed globals (and Arrow *leaves* by id)."""
    return SafeUnpickler(io.BytesIO(bytes(data)), leaves, budget).load()


class _ArrowLeafPickler(pickle.Pickler):
    """Pickles a container, sending each frame/array leaf out as its own Arrow payload."""

    def __init__(self, file: Any, parts: list[tuple[str, dict[str, Any], list[Any]]]) -> None:
        super().__init__(file, protocol=5)
        self.parts = parts

    def persistent_id(self, obj: Any) -> Any:
        if type(obj) in (str, int, float, bool, bytes) or obj is None:
            return None
        packed = encode_arrow(obj)
        if packed is None:
            return None
        self.parts.append(packed)
        return len(self.parts) - 1


# -- plain data (JSON) ------------------------------------------------------------------


def is_json_exact(obj: Any, budget: int = 1_000_000) -> bool:
    """True if JSON carries *obj* unchanged (no tuples, no non-str keys); bounded walk."""
    stack = [obj]
    seen = 0
    while stack:
        item = stack.pop()
        seen += 1
        if seen > budget:
            return False
        kind = type(item)
        if item is None or kind in (bool, int, str):
            continue
        if kind is float:
            continue
        if kind is list:
            stack.extend(item)
        elif kind is dict:
            if not all(type(k) is str for k in item):
                return False
            stack.extend(item.values())
        else:
            return False
    return True


def to_plain(obj: Any, depth: int = 0) -> Any:
    """NumPy scalars become Python scalars, inside containers too (bounded depth)."""
    module = type(obj).__module__ or ""
    if module == "numpy" and hasattr(obj, "item") and getattr(obj, "shape", None) == ():
        return obj.item()
    if depth > 20:
        return obj
    kind = type(obj)
    if kind is list:
        return [to_plain(x, depth + 1) for x in obj]
    if kind is tuple:
        return tuple(to_plain(x, depth + 1) for x in obj)
    if kind is dict:
        return {to_plain(k, depth + 1): to_plain(v, depth + 1) for k, v in obj.items()}
    if kind is set:
        return {to_plain(x, depth + 1) for x in obj}
    if kind is frozenset:
        return frozenset(to_plain(x, depth + 1) for x in obj)
    return obj


# -- Arrow ----------------------------------------------------------------------------


def _ipc_stream(table: Any) -> Any:
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def _read_ipc(buffer: Any, validate: bool) -> Any:
    import pyarrow as pa

    table = pa.ipc.open_stream(pa.py_buffer(buffer)).read_all()
    if validate:
        table.validate(full=True)  # malformed offsets must fail here, not crash later
    return table


def _tensor(array: Any) -> tuple[dict[str, Any], Any] | None:
    import numpy as np
    import pyarrow as pa

    dtype = array.dtype
    if dtype.hasobject or dtype.kind not in "biufcmM" or dtype.fields is not None:
        return None
    base = np.ascontiguousarray(array)
    if not base.dtype.isnative:
        base = base.astype(base.dtype.newbyteorder("="))
    flat = base.reshape(-1)
    if dtype.kind == "b":
        flat = flat.view(np.uint8)
    elif dtype.kind in "mM":
        flat = flat.view(np.int64)
    elif dtype.kind == "c":
        flat = flat.view(flat.real.dtype)
    sink = pa.BufferOutputStream()
    pa.ipc.write_tensor(pa.Tensor.from_numpy(flat), sink)
    meta = {"dtype": base.dtype.str, "shape": [int(s) for s in array.shape]}
    return meta, sink.getvalue()


def _untensor(meta: dict[str, Any], buffer: Any, budget: Any = None) -> Any:
    """The array a tensor message holds, its header checked before anything is copied: one
    contiguous dimension (no stride 0, no overlap), its bytes present in the message, its
    element count the one *meta*'s shape says, and the copy within *budget*."""
    import numpy as np
    import pyarrow as pa

    text = str(meta.get("dtype", ""))
    if not _DTYPE.match(text):
        raise TransferError(f"refusing array dtype {text!r}")
    dtype = np.dtype(text)
    if dtype.hasobject or dtype.kind not in "biufcmM":
        raise TransferError(f"refusing array dtype {text!r}")
    shape = tuple(int(s) for s in meta.get("shape", []))
    if len(shape) > 64 or any(s < 0 for s in shape):
        raise TransferError("malformed array shape")
    present = memoryview(buffer).nbytes
    try:
        tensor = pa.ipc.read_tensor(pa.BufferReader(pa.py_buffer(buffer)))  # headers only
    except (pa.ArrowException, ValueError, TypeError) as exc:
        raise TransferError(f"malformed array payload: {exc}") from None
    width = tensor.type.bit_width // 8
    if tensor.ndim != 1 or width < 1 or tuple(tensor.strides) != (width,):
        raise TransferError(
            f"malformed array payload (shape {tensor.shape}, strides {tensor.strides})"
        )
    nbytes = tensor.size * width
    if nbytes > present:
        raise TransferError(f"array payload claims {nbytes:,} bytes but carries {present:,}")
    if nbytes != math.prod(shape) * dtype.itemsize:
        raise TransferError("array payload does not match its shape")
    if budget is not None:
        budget.built("the array", nbytes)
    data = tensor.to_numpy().view(np.uint8)  # contiguous: a view of the message
    return data.view(dtype).reshape(shape).copy()


def encode_arrow(value: Any) -> tuple[str, dict[str, Any], list[Any]] | None:
    """Arrow IPC for frames, series, Arrow tables/batches and fixed-width arrays; else None.

    Raises `TransferError` for a frame Arrow cannot hold (mixed-object columns).
    """
    module = type(value).__module__ or ""
    name = type(value).__name__
    if module.startswith("pandas") and name in ("DataFrame", "Series"):
        import pyarrow as pa

        meta: dict[str, Any] = {}
        frame = value
        if name == "Series":
            meta["name"] = value.name if _jsonable_label(value.name) else str(value.name)
            frame = value.to_frame(name="__series__")
        try:
            table = pa.Table.from_pandas(frame, preserve_index=None)
        except (pa.ArrowException, TypeError, ValueError) as exc:
            raise TransferError(
                f"Arrow cannot hold this {name}: {exc}".rstrip(".")
                + " (a column mixes Python object types?)"
            ) from None
        codec = "arrow.series" if name == "Series" else "arrow.frame"
        return codec, meta, [_ipc_stream(table)]
    if module.startswith("pyarrow") and name in ("Table", "RecordBatch"):
        import pyarrow as pa

        table = value if name == "Table" else pa.Table.from_batches([value])
        return ("arrow.table" if name == "Table" else "arrow.batch"), {}, [_ipc_stream(table)]
    if module == "numpy" and name == "ndarray":
        packed = _tensor(value)
        if packed is None:
            return None
        meta, buffer = packed
        return "arrow.tensor", meta, [buffer]
    return None


def _jsonable_label(label: Any) -> bool:
    return label is None or type(label) in (str, int, float, bool)


def decode_arrow(
    codec: str,
    meta: dict[str, Any],
    buffers: list[Any],
    *,
    validate: bool = True,
    budget: Any = None,
) -> Any:
    """Arrow payload -> value; *validate* (the host's default) checks every offset; the host's
    *budget* sizes the stream before it is read and the frame before it is built."""
    if not buffers:
        raise TransferError("missing payload")
    if codec == "arrow.tensor":
        return _untensor(meta, buffers[0], budget)
    if budget is not None:
        budget.arrow_stream(buffers[0])
    table = _read_ipc(buffers[0], validate)
    if codec == "arrow.table":
        return table
    if codec == "arrow.batch":
        batches = table.combine_chunks().to_batches()
        if batches:
            return batches[0]
        import pyarrow as pa

        return pa.RecordBatch.from_pylist([], schema=table.schema)
    if budget is not None:
        budget.frame(table)
    frame = table.to_pandas()
    if codec == "arrow.series":
        series = frame.iloc[:, 0]
        series.name = meta.get("name")
        return series
    return frame


# -- whole values ---------------------------------------------------------------------------


def encode_for_kernel(value: Any) -> tuple[str, dict[str, Any], list[Any]]:
    """Host -> kernel: Arrow where it fits, dill for the rest (functions, classes, ...)."""
    try:
        packed = encode_arrow(value)
    except TransferError:
        packed = None  # a frame Arrow cannot hold still travels, by dill
    if packed is not None:
        return packed
    import dill

    try:
        return "dill", {}, [dill.dumps(value, recurse=True)]
    except Exception as exc:
        raise TransferError(f"{type(exc).__name__}: {exc}") from None


def decode_in_kernel(codec: str, meta: dict[str, Any], buffers: list[Any]) -> Any:
    """Kernel side: the host (or a checkpoint the kernel made) is trusted."""
    if codec in ARROW_CODECS:
        return decode_arrow(codec, meta, buffers, validate=False)
    if codec == "json":
        return json.loads(bytes(buffers[0]))
    if codec == "module":
        import importlib

        return importlib.import_module(meta["module"])
    if codec in ("dill", "pickle.safe"):
        import dill

        return dill.loads(bytes(buffers[0]))
    if codec == "pickle.arrow":
        return safe_loads(buffers[0], decode_leaves(meta, buffers, validate=False))
    if codec in ("parquet", "parquet.file"):  # a file the host injects, as `read_table`
        return _read_parquet(codec, meta, buffers)
    if codec == "lazy.scan":  # `/inject PATH --lazy`: a lazy frame over the files, here
        from cave_tui.runtime.shipped.lazy import ScanEngine, scan  # kernel: _cave_lazy

        return scan(str(meta["path"]), str(meta["format"]), ScanEngine(meta["engine"]))
    raise TransferError(f"unknown codec {codec!r}")


def _read_parquet(codec: str, meta: dict[str, Any], buffers: list[Any]) -> Any:
    """Kernel side: the injected parquet file's frame, from its bytes or (`parquet.file`)
    from the file itself, refused unless it is still as the host checked it."""
    import os

    import pyarrow as pa
    import pyarrow.parquet as pq

    if codec == "parquet":
        source: Any = pa.BufferReader(buffers[0])
        return pq.read_table(source, page_checksum_verification=True).to_pandas()
    try:
        with open(meta["path"], "rb") as f:
            st = os.fstat(f.fileno())
            if (st.st_size, st.st_mtime_ns) != (meta["size"], meta["mtime_ns"]):
                raise TransferError("the file changed since the host checked it")
            return pq.read_table(f, page_checksum_verification=True).to_pandas()
    except OSError as exc:
        raise TransferError(f"cannot read the file here ({type(exc).__name__})") from None


def decode_leaves(
    meta: dict[str, Any], buffers: list[Any], *, validate: bool, budget: Any = None
) -> list[Any]:
    """The Arrow leaves of a `pickle.arrow` payload, in persistent-id order."""
    leaves: list[Any] = []
    index = 1
    for entry in meta.get("leaves") or []:
        if not (isinstance(entry, list) and len(entry) == 3):
            raise TransferError("malformed leaf table from the kernel")
        codec, leaf_meta, count = entry
        if codec not in ARROW_CODECS or type(count) is not int or count < 1:
            raise TransferError(f"bad leaf codec {codec!r} from the kernel")
        if index + count > len(buffers):
            raise TransferError("missing leaf payload")
        leaves.append(
            decode_arrow(
                codec,
                leaf_meta or {},
                buffers[index : index + count],
                validate=validate,
                budget=budget,
            )
        )
        index += count
    return leaves


def encode_for_host(
    value: Any, *, trusted: bool = False, limit: int = JSON_LIMIT
) -> tuple[str, dict[str, Any], list[Any]]:
    """Kernel -> host: Arrow, else exact JSON, else an allow-listed pickle (dill if trusted)."""
    packed = encode_arrow(value)
    if packed is not None:
        return packed
    plain = to_plain(value)
    if is_json_exact(plain):
        data = json.dumps(plain, ensure_ascii=False).encode()
        if len(data) > limit:
            raise TransferError(
                f"{len(data):,} bytes as JSON, over the {limit:,}-byte limit for plain data; "
                "put it in a DataFrame or a NumPy array (Arrow has no such limit)"
            )
        return "json", {}, [data]
    if trusted:
        import dill

        try:
            return "dill", {}, [dill.dumps(value, recurse=True)]
        except Exception as exc:
            raise TransferError(f"dill cannot serialise it: {type(exc).__name__}: {exc}") from None
    parts: list[tuple[str, dict[str, Any], list[Any]]] = []
    buffer = io.BytesIO()
    try:
        _ArrowLeafPickler(buffer, parts).dump(plain)
    except TransferError:
        raise
    except Exception as exc:
        raise TransferError(f"it cannot be pickled: {type(exc).__name__}: {exc}") from None
    data = buffer.getvalue()
    if len(data) > limit:
        raise TransferError(f"{len(data):,} bytes pickled, over the {limit:,}-byte limit")
    safe_loads(data, [None] * len(parts))  # fail here, in the kernel, naming the bad type
    if not parts:
        return "pickle.safe", {}, [data]
    meta = {"leaves": [[codec, leaf_meta, len(bufs)] for codec, leaf_meta, bufs in parts]}
    return "pickle.arrow", meta, [data, *(b for _, _, bufs in parts for b in bufs)]


def describe_type(value: Any) -> str:
    kind = type(value)
    module = kind.__module__
    return (
        kind.__qualname__ if module in ("builtins", "__main__") else f"{module}.{kind.__qualname__}"
    )
