"""Bounded-cost detail of one namespace object, for the inspector's detail view and `/show`.

A frame gets its head as a table, its dtypes and `describe()` (on a sample when it
is large); anything else gets a bounded repr. Every piece has a size limit, so
showing a 10-million-row frame costs about as much as showing a small one.
It runs where the object lives: in process, or inside the kernel (shipped as source,
as `_cave_detail`), which sends back only these strings, never the object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cave_tui.runtime.shipped.summary import bounded_repr, summarize  # kernel: _cave_summary

HEAD_ROWS = 20
MAX_COLUMNS = 40
CELL_CHARS = 40
DESCRIBE_SAMPLE = 100_000
ITEMS = 100
TEXT_CHARS = 6_000


@dataclass
class Detail:
    """What the detail view shows. `table` rows are strings, already cut to size."""

    name: str
    type_name: str
    shape: str = ""
    size_bytes: int | None = None
    is_frame: bool = False
    columns: list[str] = field(default_factory=list)
    head: list[list[str]] = field(default_factory=list)
    dtypes: list[tuple[str, str]] = field(default_factory=list)
    describe_columns: list[str] = field(default_factory=list)
    describe: list[list[str]] = field(default_factory=list)
    text: str = ""
    notes: list[str] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Detail:
        """A detail sent by the kernel (JSON): only known fields, as strings."""

        def rows(value: Any) -> list[list[str]]:
            return [[str(cell) for cell in row] for row in (value or [])]

        size = data.get("size_bytes")
        return cls(
            name=str(data.get("name", "")),
            type_name=str(data.get("type_name", "")),
            shape=str(data.get("shape", "")),
            size_bytes=int(size) if isinstance(size, int) else None,
            is_frame=bool(data.get("is_frame")),
            columns=[str(c) for c in data.get("columns") or []],
            head=rows(data.get("head")),
            dtypes=[(str(c), str(t)) for c, t in data.get("dtypes") or []],
            describe_columns=[str(c) for c in data.get("describe_columns") or []],
            describe=rows(data.get("describe")),
            text=str(data.get("text", "")),
            notes=[str(n) for n in data.get("notes") or []],
        )

    def to_markdown(self) -> str:
        """A plain-text rendering (used by `/show` in the REPL and in tests)."""
        lines = [f"**{self.name}**: {self.type_name} {self.shape}".rstrip()]
        if self.size_bytes is not None:
            lines.append(f"size: {human_bytes(self.size_bytes)}")
        if self.is_frame:
            lines += ["", _md_table(["", *self.columns], self.head)]
            lines += ["", "dtypes: " + ", ".join(f"{c}: {t}" for c, t in self.dtypes)]
            if self.describe:
                lines += ["", _md_table(["", *self.describe_columns], self.describe)]
        else:
            lines += ["", "```", self.text, "```"]
        lines += [f"_{note}_" for note in self.notes]
        return "\n".join(lines)


def human_bytes(size: int | None) -> str:
    if size is None:
        return ""
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"  # pragma: no cover


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    text = bounded_repr(value, CELL_CHARS) if not isinstance(value, str) else value
    text = text.replace("\n", " ")
    return text if len(text) <= CELL_CHARS else text[: CELL_CHARS - 1] + "…"


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(out)


def is_frame(obj: Any) -> bool:
    module = type(obj).__module__ or ""
    return module.startswith("pandas") and type(obj).__name__ in ("DataFrame", "Series")


def object_detail(name: str, obj: Any) -> Detail:
    """Describe *obj* with bounded cost (see module doc)."""
    info = summarize(name, obj)
    detail = Detail(
        name=name,
        type_name=info.type_name if info.kind == "variable" else info.kind,
        shape=info.shape_text(),
        size_bytes=info.size_bytes,
    )
    if info.lazy:  # a lazy frame: its schema, never its rows (they would be computed)
        detail.dtypes = [(c.name, c.dtype) for c in info.columns]
        detail.text = info.lazy_text()
    elif is_frame(obj):
        _frame_detail(detail, obj)
    elif info.kind in ("function", "type"):
        detail.text = "\n\n".join(p for p in (info.signature, info.doc) if p)
    else:
        detail.text = pretty_bounded(obj)
    return detail


def _frame_detail(detail: Detail, obj: Any) -> None:
    frame = obj.to_frame() if type(obj).__name__ == "Series" else obj
    detail.is_frame = True
    columns = list(frame.columns)
    if len(columns) > MAX_COLUMNS:
        detail.notes.append(f"showing {MAX_COLUMNS} of {len(columns)} columns")
        frame = frame.iloc[:, :MAX_COLUMNS]
        columns = columns[:MAX_COLUMNS]
    detail.columns = [str(c) for c in columns]
    head = frame.head(HEAD_ROWS)
    detail.head = [
        [_cell(index), *(_cell(v) for v in row)]
        for index, row in zip(head.index, head.itertuples(index=False, name=None), strict=False)
    ]
    if len(frame) > HEAD_ROWS:
        detail.notes.append(f"first {HEAD_ROWS} of {len(frame):,} rows")
    detail.dtypes = [(str(c), str(t)) for c, t in zip(columns, frame.dtypes, strict=False)]
    sample = frame
    if len(frame) > DESCRIBE_SAMPLE:
        sample = frame.sample(n=DESCRIBE_SAMPLE, random_state=0)
        detail.notes.append(f"describe() of a random sample of {DESCRIBE_SAMPLE:,} rows")
    try:
        described = sample.describe()
    except Exception as exc:  # e.g. a frame with no columns
        detail.notes.append(f"describe() failed: {type(exc).__name__}: {exc}")
        return
    detail.describe_columns = [str(c) for c in described.columns]
    detail.describe = [
        [str(index), *(_cell(v) for v in row)]
        for index, row in zip(
            described.index, described.itertuples(index=False, name=None), strict=False
        )
    ]


def pretty_bounded(obj: Any, chars: int = TEXT_CHARS) -> str:
    """One item per line for containers (at most ITEMS), a cut repr otherwise."""
    if isinstance(obj, dict):
        lines = [f"{bounded_repr(k, 60)}: {bounded_repr(v, 200)}" for k, v in _take(obj.items())]
        more = len(obj) - len(lines)
    elif isinstance(obj, list | tuple | set | frozenset):
        lines = [bounded_repr(item, 200) for item in _take(obj)]
        more = len(obj) - len(lines)
    else:
        module = type(obj).__module__ or ""
        text = repr(obj) if module.startswith("numpy") else bounded_repr(obj, chars)
        return text[:chars]
    if more > 0:
        lines.append(f"… {more:,} more")
    text = "\n".join(lines)
    return text if len(text) <= chars else text[: chars - 1] + "…"


def _take(items: Any) -> list[Any]:
    out = []
    for i, item in enumerate(items):
        if i >= ITEMS:
            break
        out.append(item)
    return out
