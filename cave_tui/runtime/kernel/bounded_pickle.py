"""The host's reader of kernel pickles: counts what it *builds*, not what it received.

A small pickle can build far more than its size: memo references (`GET`) put one object in
many places, and a later walk (a repr, a copy, a hash) pays for every place; a list holding
itself doubles that with each reference. `BoundedUnpickler` runs the opcodes itself (no C
loop it cannot stop) and charges a `DecodeBudget` for every object it creates, and for the
whole expanded size of a memoised object each time it is used again, so a pickle whose
expansion passes the decode limit is refused before it is built. Globals resolve through
`transport.SAFE_GLOBALS` as in `SafeUnpickler`; the builtin types among them are never
called with kernel-chosen arguments: each is rebuilt by an explicit, bounded construction
(`pickle_calls`).

Over 400 lines: one short method per pickle opcode (protocols 0 to 5), which a reader needs.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any, Protocol

from cave_tui.runtime.kernel.pickle_calls import (
    BUILTINS,
    CALLABLE,
    EXPLICIT,
    EXPLICIT_TYPES,
    SCALARS,
    SEQUENCES,
    call_name,
    is_argument,
    is_mutable_collection,
    is_value,
    resolve,
)
from cave_tui.runtime.shipped.transport import (
    _NUMBER_CHARS,
    SAFE_GLOBALS,
    UnsafeObjectError,
    _bounded_int,
    _checked_int,
    _pandas_offset,
    _too_big,
)

SLOT = 8  # a reference in a container
HASHED = 40  # an entry of a dict or set (its slot in the table, with the table's slack)
OBJECT = 64  # an object's header, about (a float, an empty list, a small tuple)
TICK_EVERY = 4096  # opcodes between two looks at the clock


class Budget(Protocol):
    """What the reader asks of a `decode_limits.DecodeBudget`."""

    def built(self, what: str, size: int) -> None: ...

    def room(self) -> int: ...

    def tick(self) -> None: ...


_DICT_MODULES = ("builtins", "collections")
_WHAT = "the objects the pickle builds"
_FIXED: dict[int, tuple[Callable[[bytes, int], tuple[Any, ...]], int]] = {
    0x4A: (struct.Struct("<i").unpack_from, 4),  # BININT
    0x4D: (struct.Struct("<H").unpack_from, 2),  # BININT2
    0x47: (struct.Struct(">d").unpack_from, 8),  # BINFLOAT
}
_SIZES: dict[type, int] = {list: 56, dict: 64, set: 216, frozenset: 216}  # CPython's, empty
_EMPTY: dict[int, tuple[Callable[[], Any], int]] = {
    0x5D: (list, _SIZES[list]),
    0x7D: (dict, _SIZES[dict]),
    0x8F: (set, _SIZES[set]),
}


def _scalar_weight(value: Any) -> int:
    kind = type(value)
    if kind in (str, bytes, bytearray):
        return OBJECT + len(value)
    if kind is int:
        return OBJECT + value.bit_length() // 8
    return OBJECT


class BoundedUnpickler:
    """Reads one pickle (protocol 0 to 5, no out-of-band buffers) into allow-listed values,
    charging *budget* for everything built; Arrow *leaves* by persistent id."""

    def __init__(self, data: bytes, leaves: list[Any] | None, budget: Budget) -> None:
        self.data = data
        self.pos = 0
        self.leaves = leaves
        self.budget = budget
        self.room = budget.room()
        self.used = 0
        self.stack: list[Any] = []
        self.weights: list[int] = []
        self.marks: list[int] = []
        self.memo: dict[int, tuple[Any, int]] = {}
        self.grown: dict[int, int] = {}  # id -> expanded weight of a container being filled
        self.keep: list[Any] = []  # containers stay alive, so their ids stay theirs
        self.ops: dict[int, Callable[[], None]] = {
            op: getattr(self, "op_" + name) for op, name in _OPCODES.items()
        }

    # -- reading ----------------------------------------------------------------------

    def _read(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise UnsafeObjectError("a truncated pickle")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def _unpack(self, fmt: str) -> int:
        size = struct.calcsize(fmt)
        value: int = struct.unpack(fmt, self._read(size))[0]
        return value

    def _line(self) -> bytes:
        end = self.data.find(b"\n", self.pos, self.pos + _NUMBER_CHARS + 2)
        if end < 0:
            raise UnsafeObjectError("a text opcode without its end of line (or too long)")
        return self._read(end + 1 - self.pos)[:-1]

    def charge(self, size: int) -> None:
        """*size* more bytes built: refused (by the budget) past the room it had."""
        self.used += size
        if self.used > self.room:
            self.budget.built(_WHAT, self.used)

    def load(self) -> Any:
        """The value; the budget is charged for all of it (hot opcodes are inlined)."""
        data, stack, weights, grown, keep = self.data, self.stack, self.weights, self.grown, []
        memo, marks, ops = self.memo, self.marks, self.ops
        end = len(data)
        room = self.room
        count = 0
        pos = self.pos
        try:
            while True:
                if pos >= end:
                    raise UnsafeObjectError("a truncated pickle")
                code = data[pos]
                pos += 1
                count += 1
                if count & (TICK_EVERY - 1) == 0:
                    self.budget.tick()
                if code == 0x94:  # MEMOIZE
                    if not stack:
                        raise UnsafeObjectError("a malformed pickle (stack underflow)")
                    memo[len(memo)] = (stack[-1], weights[-1])
                elif code in _EMPTY:  # EMPTY_LIST, EMPTY_DICT, EMPTY_SET
                    make, size = _EMPTY[code]
                    value = make()
                    keep.append(value)
                    grown[id(value)] = size
                    stack.append(value)
                    weights.append(size)
                    self.used += size
                elif code == 0x28:  # MARK
                    marks.append(len(stack))
                elif code == 0x4B:  # BININT1
                    if pos + 1 > end:
                        raise UnsafeObjectError("a truncated pickle")
                    stack.append(data[pos])
                    weights.append(OBJECT)
                    pos += 1
                    self.used += OBJECT
                elif code == 0x8C:  # SHORT_BINUNICODE
                    if pos + 1 > end:
                        raise UnsafeObjectError("a truncated pickle")
                    size = data[pos]
                    if pos + 1 + size > end:
                        raise UnsafeObjectError("a truncated pickle")
                    stack.append(str(data[pos + 1 : pos + 1 + size], "utf-8", "surrogatepass"))
                    weights.append(OBJECT + size)
                    pos += 1 + size
                    self.used += OBJECT + size
                elif code == 0x68:  # BINGET
                    if pos + 1 > end or data[pos] not in memo:
                        raise UnsafeObjectError("a malformed pickle (memo)")
                    value, weight = memo[data[pos]]
                    weight = grown.get(id(value), weight)
                    stack.append(value)
                    weights.append(weight)
                    pos += 1
                    self.used += weight  # used again: counted again
                elif code == 0x86 or code == 0x85:  # TUPLE2, TUPLE1
                    n = code - 0x84
                    if len(stack) < n or (marks and len(stack) - n < marks[-1]):
                        raise UnsafeObjectError("a malformed pickle (stack underflow)")
                    items = stack[-n:]
                    weight = OBJECT + SLOT * n
                    for item, w in zip(items, weights[-n:], strict=True):
                        weight += grown.get(id(item), w)
                    del stack[-n:], weights[-n:]
                    stack.append(tuple(items))
                    weights.append(weight)
                    self.used += OBJECT + SLOT * n
                elif code in _FIXED:  # BININT, BININT2, BINFLOAT
                    read, size = _FIXED[code]
                    if pos + size > end:
                        raise UnsafeObjectError("a truncated pickle")
                    stack.append(read(data, pos)[0])
                    pos += size
                    weights.append(OBJECT)
                    self.used += OBJECT
                elif code == 0x2E:  # STOP
                    if len(stack) != 1 or marks:
                        raise UnsafeObjectError("a malformed pickle")
                    self.budget.built(_WHAT, self.used)
                    return stack[0]
                else:
                    op = ops.get(code)
                    if op is None:
                        raise UnsafeObjectError(f"pickle opcode {bytes([code])!r}")
                    self.pos = pos
                    op()
                    pos = self.pos
                if self.used > room:
                    self.budget.built(_WHAT, self.used)
        finally:
            self.keep.extend(keep)

    # -- the stack and its weights --------------------------------------------------------

    def _push(self, value: Any, weight: int, charge: int | None = None) -> None:
        """Push *value*; the budget pays *charge* (default: all of *weight*)."""
        self.charge(weight if charge is None else charge)
        self.stack.append(value)
        self.weights.append(weight)

    def _new_container(self, value: Any) -> None:
        size = _SIZES.get(type(value), OBJECT)
        self.keep.append(value)
        self.grown[id(value)] = size
        self._push(value, size)

    def _weight_at(self, index: int) -> int:
        value = self.stack[index]
        return self.grown.get(id(value), self.weights[index])

    def _pop(self) -> tuple[Any, int]:
        if not self.stack or (self.marks and len(self.stack) <= self.marks[-1]):
            raise UnsafeObjectError("a malformed pickle (stack underflow)")
        weight = self._weight_at(-1)
        self.weights.pop()
        return self.stack.pop(), weight

    def _pop_mark(self) -> tuple[list[Any], int]:
        if not self.marks:
            raise UnsafeObjectError("a malformed pickle (no mark)")
        at = self.marks.pop()
        items = self.stack[at:]
        grown = self.grown
        weight = sum(grown.get(id(v), w) for v, w in zip(items, self.weights[at:], strict=True))
        del self.stack[at:], self.weights[at:]
        return items, weight

    def _grow(self, container: Any, slots: int, weight: int, slot: int = SLOT) -> None:
        """*container* gains *slots* entries of *slot* bytes, worth *weight* (already paid)."""
        self.charge(slots * slot)
        key = id(container)
        self.grown[key] = self.grown.get(key, OBJECT) + slots * slot + weight

    def _top(self) -> Any:
        if not self.stack or (self.marks and len(self.stack) <= self.marks[-1]):
            raise UnsafeObjectError("a malformed pickle (stack underflow)")
        return self.stack[-1]

    # -- scalars ---------------------------------------------------------------------------

    def _scalar(self, value: Any) -> None:
        self._push(value, _scalar_weight(value))

    def op_NONE(self) -> None:
        self._scalar(None)

    def op_NEWTRUE(self) -> None:
        self._scalar(True)

    def op_NEWFALSE(self) -> None:
        self._scalar(False)

    def op_BININT(self) -> None:
        self._scalar(self._unpack("<i"))

    def op_BININT1(self) -> None:
        self._scalar(self._read(1)[0])

    def op_BININT2(self) -> None:
        self._scalar(self._unpack("<H"))

    def _long(self, size: int) -> None:
        if size > _NUMBER_CHARS:
            raise _too_big(f"an int of {size:,} bytes")
        self._scalar(_checked_int(int.from_bytes(self._read(size), "little", signed=True)))

    def op_LONG1(self) -> None:
        self._long(self._read(1)[0])

    def op_LONG4(self) -> None:
        self._long(self._unpack("<i"))

    def op_INT(self) -> None:
        line = self._line()
        if line in (b"00", b"01"):
            self._scalar(line == b"01")
        else:
            self._scalar(_bounded_int(line))

    def op_LONG(self) -> None:
        self._scalar(_bounded_int(self._line().rstrip(b"L")))

    def op_BINFLOAT(self) -> None:
        self._scalar(struct.unpack(">d", self._read(8))[0])

    def op_FLOAT(self) -> None:
        self._scalar(float(self._line()))

    def _text(self, size: int, kind: str) -> None:
        raw = self._read(size)
        self.charge(size)  # before it is copied
        if kind == "str":
            self._push(str(raw, "utf-8", "surrogatepass"), OBJECT + size, OBJECT)
        elif kind == "bytes":
            self._push(bytes(raw), OBJECT + size, OBJECT)
        else:
            value = bytearray(raw)
            self._new_container(value)
            self.grown[id(value)] = OBJECT + size

    def op_SHORT_BINUNICODE(self) -> None:
        self._text(self._read(1)[0], "str")

    def op_BINUNICODE(self) -> None:
        self._text(self._unpack("<I"), "str")

    def op_BINUNICODE8(self) -> None:
        self._text(self._unpack("<Q"), "str")

    def op_SHORT_BINBYTES(self) -> None:
        self._text(self._read(1)[0], "bytes")

    def op_BINBYTES(self) -> None:
        self._text(self._unpack("<I"), "bytes")

    def op_BINBYTES8(self) -> None:
        self._text(self._unpack("<Q"), "bytes")

    def op_BYTEARRAY8(self) -> None:
        self._text(self._unpack("<Q"), "bytearray")

    def op_UNICODE(self) -> None:
        start = self.pos
        end = self.data.find(b"\n", start) - start
        if end < 0:
            raise UnsafeObjectError("a malformed pickle")
        self.charge(end)
        text = str(self._read(end + 1)[:-1], "raw-unicode-escape")
        self._push(text, OBJECT + end, OBJECT)

    # -- containers -------------------------------------------------------------------------

    def op_MARK(self) -> None:
        self.marks.append(len(self.stack))

    def op_EMPTY_LIST(self) -> None:
        self._new_container([])

    def op_EMPTY_DICT(self) -> None:
        self._new_container({})

    def op_EMPTY_SET(self) -> None:
        self._new_container(set())

    def op_EMPTY_TUPLE(self) -> None:
        self._push((), OBJECT)

    def _tuple(self, items: list[Any], weight: int) -> None:
        size = OBJECT + SLOT * len(items)
        self._push(tuple(items), size + weight, size)

    def op_TUPLE(self) -> None:
        self._tuple(*self._pop_mark())

    def _tuple_n(self, n: int) -> None:
        items, weight = [], 0
        for _ in range(n):
            value, w = self._pop()
            items.append(value)
            weight += w
        items.reverse()
        self._tuple(items, weight)

    def op_TUPLE1(self) -> None:
        self._tuple_n(1)

    def op_TUPLE2(self) -> None:
        self._tuple_n(2)

    def op_TUPLE3(self) -> None:
        self._tuple_n(3)

    def op_LIST(self) -> None:
        items, weight = self._pop_mark()
        value: list[Any] = []
        self._new_container(value)
        self._grow(value, len(items), weight)
        value.extend(items)

    def op_DICT(self) -> None:
        items, weight = self._pop_mark()
        value: dict[Any, Any] = {}
        self._new_container(value)
        self._set_items(value, items, weight)

    def op_FROZENSET(self) -> None:
        items, weight = self._pop_mark()
        size = _SIZES[frozenset] + HASHED * len(items)
        self.charge(size)  # before the table is built
        self._push(frozenset(items), size + weight, 0)

    def _append(self, items: list[Any], weight: int) -> None:
        target = self._top()
        if type(target) is list or is_mutable_collection(target):
            self._grow(target, len(items), weight)
            target.extend(items)
        else:
            raise UnsafeObjectError(f"appending to a {type(target).__name__}")

    def op_APPEND(self) -> None:
        value, weight = self._pop()
        self._append([value], weight)

    def op_APPENDS(self) -> None:
        self._append(*self._pop_mark())

    def _set_items(self, target: Any, items: list[Any], weight: int) -> None:
        if not isinstance(target, dict) or type(target).__module__ not in _DICT_MODULES:
            raise UnsafeObjectError(f"setting items of a {type(target).__name__}")
        if len(items) % 2:
            raise UnsafeObjectError("a malformed pickle (odd SETITEMS)")
        self._grow(target, len(items) // 2, weight, HASHED)
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]

    def op_SETITEM(self) -> None:
        value, w1 = self._pop()
        key, w2 = self._pop()
        self._set_items(self._top(), [key, value], w1 + w2)

    def op_SETITEMS(self) -> None:
        items, weight = self._pop_mark()
        self._set_items(self._top(), items, weight)

    def op_ADDITEMS(self) -> None:
        items, weight = self._pop_mark()
        target = self._top()
        if type(target) is not set:
            raise UnsafeObjectError(f"adding items to a {type(target).__name__}")
        self._grow(target, len(items), weight, HASHED)
        target.update(items)

    # -- the stack, the memo ------------------------------------------------------------------

    def op_POP(self) -> None:
        self._pop()

    def op_POP_MARK(self) -> None:
        self._pop_mark()

    def op_DUP(self) -> None:
        value = self._top()
        self._push(value, self._weight_at(-1))

    def _put(self, index: int) -> None:
        self.memo[index] = (self._top(), self.weights[-1])

    def _get(self, index: int) -> None:
        if index not in self.memo:
            raise UnsafeObjectError("a malformed pickle (memo)")
        value, weight = self.memo[index]
        self._push(value, self.grown.get(id(value), weight))  # used again: counted again

    def op_MEMOIZE(self) -> None:
        self._put(len(self.memo))

    def op_BINPUT(self) -> None:
        self._put(self._read(1)[0])

    def op_LONG_BINPUT(self) -> None:
        self._put(self._unpack("<I"))

    def op_PUT(self) -> None:
        self._put(int(self._line()))

    def op_BINGET(self) -> None:
        self._get(self._read(1)[0])

    def op_LONG_BINGET(self) -> None:
        self._get(self._unpack("<I"))

    def op_GET(self) -> None:
        self._get(int(self._line()))

    def op_PROTO(self) -> None:
        if self._read(1)[0] > 5:
            raise UnsafeObjectError("a pickle protocol above 5")

    def op_FRAME(self) -> None:
        self._read(8)

    def op_BINPERSID(self) -> None:
        pid, _ = self._pop()
        if self.leaves is None or type(pid) is not int or not 0 <= pid < len(self.leaves):
            raise UnsafeObjectError("persistent ids")
        self._push(self.leaves[pid], OBJECT)  # the leaf's own size was counted as Arrow

    # -- globals and calls --------------------------------------------------------------------

    def _global(self, module: str, name: str) -> None:
        self.budget.tick()
        key = (module, name)
        if key in SAFE_GLOBALS:
            found = SAFE_GLOBALS[key]
            if found is None:
                found = BUILTINS.get(key) or resolve(module, name)
        else:
            found = _pandas_offset(module, name)
            if found is None:
                raise UnsafeObjectError(f"{module}.{name}")
        self._push(found, OBJECT)

    def op_GLOBAL(self) -> None:
        module = self._line().decode("utf-8", "replace")
        name = self._line().decode("utf-8", "replace")
        self._global(module, name)

    def op_STACK_GLOBAL(self) -> None:
        name, _ = self._pop()
        module, _ = self._pop()
        if type(module) is not str or type(name) is not str:
            raise UnsafeObjectError("a malformed pickle (STACK_GLOBAL)")
        self._global(module, name)

    def _call(self, func: Any, args: tuple[Any, ...], weight: int) -> None:
        """An allow-listed constructor on built arguments; the result is charged its entries
        (a copied container: before the copy is made)."""
        self.budget.tick()
        build = EXPLICIT.get(func)
        for arg in args:
            if type(arg) in (*SEQUENCES, dict):
                self.charge(HASHED * len(arg))  # the most a copy's entry can cost
        if build is not None:
            value = build(args)
        elif func in CALLABLE:
            for arg in args:
                if not is_argument(arg):
                    raise UnsafeObjectError(f"{call_name(func)}({type(arg).__name__})")
            value = func(*args)
        else:
            raise UnsafeObjectError(f"calling {call_name(func)}")
        if isinstance(value, (list, dict, set, bytearray)) or is_mutable_collection(value):
            self._new_container(value)
            key = id(value)
            self.grown[key] = self.grown[key] + weight
        else:
            size = OBJECT + SLOT * len(args)
            self._push(value, size + weight, size)

    def op_REDUCE(self) -> None:
        args, weight = self._pop()
        func, _ = self._pop()
        if type(args) is not tuple:
            raise UnsafeObjectError("a malformed pickle (REDUCE)")
        self._call(func, args, weight)

    def op_NEWOBJ(self) -> None:
        args, weight = self._pop()
        cls, _ = self._pop()
        if type(args) is not tuple or not isinstance(cls, type):
            raise UnsafeObjectError("a malformed pickle (NEWOBJ)")
        if cls in EXPLICIT_TYPES:
            self._call(cls, (), 0)
        elif cls in CALLABLE:
            for arg in args:
                if type(arg) not in SCALARS:
                    raise UnsafeObjectError(f"{cls.__name__}.__new__({type(arg).__name__})")
            self._push(cls.__new__(cls, *args), OBJECT + weight, OBJECT)
        else:
            raise UnsafeObjectError(f"creating a {call_name(cls)}")

    def op_BUILD(self) -> None:
        state, weight = self._pop()
        target = self._top()
        if not is_value(target) or type(target) in EXPLICIT_TYPES:
            raise UnsafeObjectError(f"setting the state of a {type(target).__name__}")
        setstate = getattr(type(target), "__setstate__", None)
        self.charge(weight)
        if setstate is not None:
            setstate(target, state)
        elif type(state) is dict and all(type(k) is str for k in state):
            target.__dict__.update(state)
        else:
            raise UnsafeObjectError(f"the state of a {type(target).__name__}")


_OPCODES: dict[int, str] = {
    ord(code): name
    for code, name in {
        "N": "NONE", "\x88": "NEWTRUE", "\x89": "NEWFALSE", "J": "BININT", "K": "BININT1",
        "M": "BININT2", "\x8a": "LONG1", "\x8b": "LONG4", "I": "INT", "L": "LONG",
        "G": "BINFLOAT", "F": "FLOAT", "\x8c": "SHORT_BINUNICODE", "X": "BINUNICODE",
        "\x8d": "BINUNICODE8", "C": "SHORT_BINBYTES", "B": "BINBYTES", "\x8e": "BINBYTES8",
        "\x96": "BYTEARRAY8", "V": "UNICODE", "(": "MARK", "]": "EMPTY_LIST", "}": "EMPTY_DICT",
        "\x8f": "EMPTY_SET", ")": "EMPTY_TUPLE", "t": "TUPLE", "\x85": "TUPLE1",
        "\x86": "TUPLE2", "\x87": "TUPLE3", "l": "LIST", "d": "DICT", "\x91": "FROZENSET",
        "a": "APPEND", "e": "APPENDS", "s": "SETITEM", "u": "SETITEMS", "\x90": "ADDITEMS",
        "0": "POP", "1": "POP_MARK", "2": "DUP", "\x94": "MEMOIZE", "q": "BINPUT",
        "r": "LONG_BINPUT", "p": "PUT", "h": "BINGET", "j": "LONG_BINGET", "g": "GET",
        "\x80": "PROTO", "\x95": "FRAME", "Q": "BINPERSID", "c": "GLOBAL",
        "\x93": "STACK_GLOBAL", "R": "REDUCE", "\x81": "NEWOBJ", "b": "BUILD",
    }.items()
}  # fmt: skip


def bounded_loads(data: bytes | memoryview, leaves: list[Any] | None, budget: Budget) -> Any:
    """The value pickled in *data*, built within *budget* (`DecodeLimitExceeded` past it)."""
    return BoundedUnpickler(bytes(data), leaves, budget).load()
