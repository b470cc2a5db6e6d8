"""The system prompt and the live namespace description.

The system prompt is short and identical on every call, so provider and
llama.cpp prompt caches hit. What changes (the namespace) opens the newest
message of each request, so the user's words are what the model reads last, and
is never stored in history: the history prefix stays byte-identical from one call
to the next. docs/prompt-tuning.md says how each piece was measured.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from cave_tui.agent.column_runs import with_runs
from cave_tui.runtime.shipped.summary import Column, VarInfo

DEFAULT_INSTRUCTIONS = (
    "You are a data analyst working in a live, persistent IPython session that already holds "
    "the user's data."
)

DEFAULT_SYSTEM_INSTRUCTIONS = """\
Each reply does one of two things:
- Run code: one ```{python_block_identifier} block, nothing after it. It runs at once in the \
session and the next message shows its output or error. Variables persist across blocks and turns.
- Answer: plain text without code, short and direct.

Rules:
- "Namespace (live)" in the latest message lists what the session holds: frames with \
their columns, functions, objects with their methods. Use them by name: they are the user's data, \
complete as described: never re-create, re-load or re-filter them.
- Use column names exactly as listed, and the functions and methods as shown. Print a few \
values when unsure; never guess.
- Store each result under the exact name the user gives. Leave the given objects unchanged unless \
asked; put subsets and derived data in new variables.
- Do just what is asked: no extra filtering, sorting or rounding.
- If code fails, read the error and fix its cause; never send the same code again.{final_answer}"""

# Last, so that it is what the model read most recently before its first reply.
FINAL_ANSWER_INSTRUCTIONS = (
    "\n\nWhen the code does what the user asked, its last line calls final_answer(text), with "
    "a short answer built from the results: that ends your turn."
)

# Added only when the agent has a `max_exec_timeout`.
TIMEOUT_NOTE = (
    "A cell may run for at most {seconds} seconds: give network requests and database "
    "queries their own timeout (e.g. requests.get(url, timeout=10))."
)

DEFAULT_SYSTEM_PROMPT_TEMPLATE = "{instructions}\n\n{system_instructions}{skills}{security}"

SKILLS_HEADER = (
    "\n\nSkills (call activate_skill(name) once to load one's instructions and helpers):"
)

# What the model reads first in the latest message: these names are defined, ready to use.
NAMESPACE_HEADER = "Namespace (live): defined in the session now, ready to use as they are."
NAMESPACE_BUDGET = 6000  # characters for the whole namespace description
ENTRY_BUDGET = 900  # characters for one entry, all its lines
LINE_BUDGET = 400  # characters for one line of an entry
# A frame's columns line when its names and dtypes overflow a line: the names alone, all of
# them while they fit (a column the model never sees is one it guesses at).
COLUMNS_BUDGET = 1200

_QUALIFIED = re.compile(r"\b(?:pandas|pd|numpy|np|typing|builtins|collections\.abc)\.")
_QUOTED_ANNOTATION = re.compile(r"(\b\w+: |-> )'([^']*)'")  # `from __future__ import annotations`


def _clip(text: str, limit: int) -> str:
    """One line within *limit* chars: inner whitespace collapsed, indentation kept."""
    indent = text[: len(text) - len(text.lstrip(" "))]
    text = indent + " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _plain(signature: str) -> str:
    """`pandas.DataFrame` → `DataFrame`; no `-> None` on constructors: fewer tokens, same sense."""
    signature = _QUOTED_ANNOTATION.sub(r"\1\2", signature)
    return _QUALIFIED.sub("", signature).replace(") -> None", ")")


def _note(text: str) -> str:
    return f"  # {text}" if text else ""


def describe_entry(
    row: VarInfo,
    *,
    methods: list[str] | None = None,
    same_columns: tuple[str, list[str]] | None = None,
) -> str:
    """One namespace entry: a head line, then its columns or methods, within ENTRY_BUDGET.

    *methods* (of the row's injected class) are listed under an instance as
    `name.method(...)`, the way the model will call them. *same_columns* is
    (earlier frame, extra columns) when a frame repeats an earlier frame's columns.
    """
    lines: list[str] = []
    if row.kind == "function":
        doc = row.doc.splitlines()[0] if row.doc else ""
        lines.append(f"- {_plain(row.signature)}" + _note(row.description or doc))
    elif row.kind == "type":
        head, _, _ = _plain(row.signature).partition("; methods: ")
        named = head.startswith(row.name)  # dataclass/enum schemas do not start with the name
        lines.append(f"- {head if named else f'{row.name}: {head}'}" + _note(row.description))
        lines += [f"  {_plain(m)}" for m in (methods if methods is not None else row.methods)]
    else:
        shape = row.shape_text(one_dim_as_length=True)
        head = f"- {row.name}: {row.type_name}" + (f" {shape}" if shape else "")
        is_frame = bool(row.columns)
        if row.dtype:
            head += " of " + row.dtype_text(short=True)
        if row.lazy:
            head += f" ({row.lazy_text()})"

        if row.preview and not is_frame and not row.lazy:
            head += f" = {row.preview}"
        if row.relations.key:
            head += f", one row per {row.relations.key}"
        if row.relations.codes:
            head += f" ({row.codes_text()})"
        lines.append(head + _note(row.description))
        if same_columns is not None:
            frame, extra = same_columns
            lines.append(f"  columns: as {frame}" + (", plus " + ", ".join(extra) if extra else ""))
        elif is_frame:
            lines.append("  columns: " + columns_text(row))
        if row.levels:
            lines.append("  values: " + row.levels_text())
        if row.relations.links:
            lines.append("  links: " + row.links_text())
        lines += [f"  {row.name}{_plain(m)}" for m in methods or []]
    clipped = [
        _clip(line, COLUMNS_BUDGET if line.startswith("  columns: ") else LINE_BUDGET)
        for line in lines
    ]
    text = "\n".join(clipped)
    budget = ENTRY_BUDGET + sum(max(len(line) - LINE_BUDGET, 0) for line in clipped)
    return text if len(text) <= budget else text[: budget - 1] + "…"


def columns_text(row: VarInfo) -> str:
    """A frame's columns as the model reads them: "a:int, b:object" while that fits a line;
    else the names alone (runs of numbered names written once: `column_runs`), within
    COLUMNS_BUDGET, and a count of those that do not fit."""
    typed = row.columns_text(short=True)
    if not row.more_columns and len("  columns: " + typed) <= LINE_BUDGET:
        return typed
    total = len(row.columns) + row.more_columns
    shown: list[str] = []
    listed = 0  # columns the entries shown stand for
    used = len("  columns: ") + len(f", … +{total} more")
    for entry, count in with_runs(row.column_names()):
        if used + len(entry) + 2 > COLUMNS_BUDGET:
            break
        shown.append(entry)
        used += len(entry) + 2
        listed += count
    rest = total - listed
    return ", ".join(shown + ([f"… +{rest} more"] if rest else []))


def _same_columns(
    row: VarInfo, frames: list[tuple[str, list[Column]]]
) -> tuple[str, list[str]] | None:
    """(earlier frame, extra columns) when *row*'s columns start with an earlier frame's."""
    if not row.columns or row.more_columns:
        return None
    for name, columns in frames:
        if len(columns) >= 4 and row.columns[: len(columns)] == columns:
            return name, [c.text(short=True) for c in row.columns[len(columns) :]]
    return None


def describe_namespace(rows: Iterable[VarInfo], budget: int = NAMESPACE_BUDGET) -> str:
    """The live namespace as the model sees it, within *budget* characters.

    An instance of a class listed in the namespace shows that class's methods
    under its own name; the class itself is then one line.
    """
    rows = list(rows)
    classes = {r.name: r for r in rows if r.kind == "type"}
    instantiated = {r.type_name for r in rows if r.kind == "variable" and r.type_name in classes}
    frames: list[tuple[str, list[Column]]] = []  # (name, columns) of the frames listed so far
    functions: list[str] = []
    types: list[str] = []
    variables: list[str] = []
    modules: list[str] = []
    for row in rows:
        if row.kind == "module":
            modules.append(row.name if row.name == row.preview else f"{row.name}={row.preview}")
        elif row.kind == "function":
            functions.append(describe_entry(row))
        elif row.kind == "type":
            types.append(describe_entry(row, methods=[] if row.name in instantiated else None))
        else:
            cls = classes.get(row.type_name)
            same = _same_columns(row, frames) if row.type_name == "DataFrame" else None
            variables.append(
                describe_entry(row, methods=cls.methods if cls else None, same_columns=same)
            )
            listed = row.columns and not row.more_columns  # a cut list is never matched
            if row.type_name == "DataFrame" and listed and same is None:
                frames.append((row.name, row.columns))
    sections: list[tuple[str, list[str]]] = [
        ("Functions:", functions),
        ("Types:", types),
        ("Variables:", variables),
    ]
    out: list[str] = [NAMESPACE_HEADER]
    used = len(out[0])
    omitted = 0
    for title, entries in sections:
        if not entries:
            continue
        header_added = False
        for entry in entries:
            if used + len(entry) + len(title) + 2 > budget:
                omitted += 1
                continue
            if not header_added:
                out.append(title)
                used += len(title) + 1
                header_added = True
            out.append(entry)
            used += len(entry) + 1
    if modules:
        line = _clip("Modules: " + ", ".join(modules), 300)
        if used + len(line) <= budget:
            out.append(line)
        else:
            omitted += len(modules)
    if omitted:
        out.append(f"(… {omitted} more names not shown; inspect them with code)")
    if len(out) == 1:
        out.append("(empty)")
    return "\n".join(out)


def legacy_sections(rows: Iterable[VarInfo]) -> dict[str, str]:
    """`{functions}`, `{variables}`, `{types}` for upstream-style custom templates."""
    rows = list(rows)
    return {
        "functions": "\n".join(describe_entry(r) for r in rows if r.kind == "function"),
        "variables": "\n".join(describe_entry(r) for r in rows if r.kind == "variable"),
        "types": "\n".join(describe_entry(r) for r in rows if r.kind == "type"),
    }


class _Defaults(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def render_template(template: str, values: dict[str, Any]) -> str:
    """`str.format_map` that leaves unknown placeholders as they are."""
    return template.format_map(_Defaults(values))


def uses_inline_namespace(template: str) -> bool:
    return any(p in template for p in ("{functions}", "{variables}", "{types}"))
