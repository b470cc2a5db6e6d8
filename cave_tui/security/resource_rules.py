"""Resource exhaustion a constant fold can see: `10**10**10`, `'a' * 10**12`, `[0] * 10**12`.

Only literal operands are folded (sizes are estimated before anything big is computed);
a loop that never ends, or a size computed at run time, is beyond any static check.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from cave_tui.security.cell import Cell, call_name
from cave_tui.security.rules import SecurityRule
from cave_tui.security.violations import SecurityViolation

MAX_INT_BITS = 1 << 22  # ~1.26 million decimal digits; ordinary code never gets near
EXACT_BITS = 1 << 12  # wider ints are tracked by size only, never computed by the checker
MAX_ITEMS = 1 << 28  # ~268 million items: a list or array of this size is GBs already

# Calls that build a sequence or array as long as their (folded) argument says.
_MATERIALISERS = frozenset({"list", "tuple", "set", "frozenset", "sorted", "bytearray", "bytes"})
_ALLOCATORS = frozenset({"zeros", "ones", "empty", "full", "arange", "repeat", "tile"})
_PADDERS = frozenset({"ljust", "rjust", "center", "zfill"})
_SIZE_KEYWORDS = frozenset({"size", "shape", "periods"})


class TooBig(Exception):
    """A folded constant would exhaust memory or CPU; the message says how big."""


@dataclass(frozen=True)
class Seq:
    """A sequence (or range) of known length."""

    length: int


@dataclass(frozen=True)
class Wide:
    """An integer too wide to compute exactly here, known by its approximate bit length."""

    bits: int


Folded = int | Wide | Seq | None


def _bits(value: int) -> int:
    return max(abs(value).bit_length(), 1)


def _items(n: int, what: str) -> Seq:
    if n > MAX_ITEMS:
        raise TooBig(f"{what} of about {n:.1e} items")
    return Seq(max(n, 0))


def fold(node: ast.AST, depth: int = 0) -> Folded:
    """The int value or sequence length of a literal expression; TooBig when it is huge."""
    if depth > 50:
        return None
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool) or not isinstance(value, int | str | bytes):
            return None
        return value if isinstance(value, int) else Seq(len(value))
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return Seq(len(node.elts))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = fold(node.operand, depth + 1)
        if isinstance(inner, int):
            return -inner if isinstance(node.op, ast.USub) else inner
        return None
    if isinstance(node, ast.BinOp):
        return _binop(node, depth)
    if isinstance(node, ast.Call):
        return _call(node, depth)
    return None


def _int_result(bits: int, op: ast.operator, left: int | Wide, right: int | Wide) -> int | Wide:
    """The exact value when small; a `Wide` estimate when large; TooBig past the limit."""
    if bits > MAX_INT_BITS:
        raise TooBig(f"an integer of about {bits:.1e} bits")
    if bits > EXACT_BITS or not (isinstance(left, int) and isinstance(right, int)):
        return Wide(bits)
    if isinstance(op, ast.Pow):
        return int(left**right)
    if isinstance(op, ast.Mult):
        return left * right
    return left << right


def _binop(node: ast.BinOp, depth: int) -> Folded:
    left = fold(node.left, depth + 1)
    right = fold(node.right, depth + 1)
    op = node.op
    if isinstance(left, int | Wide) and isinstance(right, int | Wide):
        lbits = left.bits if isinstance(left, Wide) else _bits(left)
        rbits = right.bits if isinstance(right, Wide) else _bits(right)
        if isinstance(op, ast.Pow):
            if isinstance(left, int) and abs(left) <= 1:
                return None
            if isinstance(right, Wide):
                raise TooBig("an integer with a huge exponent")
            if right < 0:
                return None
            return _int_result(right * (lbits - 1), op, left, right)
        if isinstance(op, ast.Mult):
            return _int_result(lbits + rbits, op, left, right)
        if isinstance(op, ast.LShift):
            if isinstance(right, Wide):
                raise TooBig("an integer shifted by a huge amount")
            if right < 0:
                return None
            return _int_result(right + lbits, op, left, right)
        if isinstance(op, ast.Add | ast.Sub):
            if isinstance(left, int) and isinstance(right, int):
                return left + right if isinstance(op, ast.Add) else left - right
            return Wide(max(lbits, rbits) + 1)
        return None
    if isinstance(op, ast.Mult):
        if isinstance(left, Seq) and isinstance(right, int | Wide):
            return _items(_as_count(right) * left.length, "a repeated sequence")
        if isinstance(left, int | Wide) and isinstance(right, Seq):
            return _items(_as_count(left) * right.length, "a repeated sequence")
    if isinstance(op, ast.Add) and isinstance(left, Seq) and isinstance(right, Seq):
        return Seq(left.length + right.length)
    return None


def _as_count(value: int | Wide) -> int:
    return 1 << min(value.bits, 128) if isinstance(value, Wide) else value


def _count(node: ast.AST | None, depth: int) -> int | None:
    """An element count: an int, or the product of a tuple/list of ints (a shape)."""
    if node is None:
        return None
    if isinstance(node, ast.Tuple | ast.List):
        total = 1
        for elt in node.elts:
            value = fold(elt, depth + 1)
            if not isinstance(value, int | Wide):
                return None
            total *= max(_as_count(value), 0)
        return total
    value = fold(node, depth + 1)
    return _as_count(value) if isinstance(value, int | Wide) else None


def _call(node: ast.Call, depth: int) -> Folded:
    name = call_name(node.func)
    first = node.args[0] if node.args else None
    if name == "range" and node.args and len(node.args) <= 3:
        values = [fold(a, depth + 1) for a in node.args]
        if not all(isinstance(v, int | Wide) for v in values):
            return None
        ints = [_as_count(v) for v in values if isinstance(v, int | Wide)]
        start, stop, step = (0, ints[0], 1) if len(ints) == 1 else (*ints[:2], 1)
        if len(ints) == 3:
            step = ints[2] or 1
        return Seq(max((stop - start) // step, 0))  # a range is lazy: not TooBig yet
    if name in _MATERIALISERS and first is not None:
        inner = fold(first, depth + 1)
        if isinstance(inner, int | Wide) and name in ("bytes", "bytearray"):
            return _items(_as_count(inner), f"{name}()")
        if isinstance(inner, Seq):
            return _items(inner.length, f"{name}()")
        return None
    if name in _PADDERS and first is not None:
        width = fold(first, depth + 1)
        if isinstance(width, int | Wide):
            return _items(_as_count(width), f"a padded string ({name})")
    if name in _ALLOCATORS:
        count = _count(first, depth)
        if count is not None:
            _items(count, f"an array from {name}()")
    for keyword in node.keywords:
        if keyword.arg in _SIZE_KEYWORDS:
            count = _count(keyword.value, depth)
            if count is not None:
                _items(count, f"{keyword.arg}=")
    return None


class ConstantSizeRule(SecurityRule):
    """Literal arithmetic and allocations whose size alone would exhaust the machine.

    `10**10**10`, `'a' * 10**12`, `[0] * 10**12`, `list(range(10**12))`,
    `np.zeros((10**6, 10**6))` and comprehensions over such ranges. Sizes are estimated
    before anything is computed, so the check itself stays cheap.
    """

    node_types = (ast.BinOp, ast.Call, ast.ListComp, ast.SetComp, ast.DictComp)

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        found: dict[int, tuple[ast.AST, str]] = {}
        for node in [*cell.nodes(ast.BinOp), *cell.nodes(ast.Call)]:
            try:
                fold(node)
            except TooBig as exc:
                found[id(node)] = (node, str(exc))
        inner = {id(sub) for top, _ in found.values() for sub in ast.walk(top) if sub is not top}
        for key, (top, what) in found.items():
            if key not in inner:  # report the outermost expression only
                yield self._violation(cell, top, what)
        for comp in cell.nodes(ast.ListComp, ast.SetComp, ast.DictComp):
            for generator in comp.generators:
                try:
                    size = fold(generator.iter)
                    if isinstance(size, Seq):
                        _items(size.length, "a comprehension")
                except TooBig as exc:
                    yield self._violation(cell, comp, str(exc))

    def _violation(self, cell: Cell, node: ast.AST, what: str) -> SecurityViolation:
        return cell.violation(
            self.name,
            node,
            f"this literal expression builds {what}, which would exhaust memory or CPU; "
            "use smaller sizes (or floats / math.log10 for magnitudes)",
        )
