"""The system prompt and the live namespace description.

The system prompt is short and identical on every call, so provider and
llama.cpp prompt caches hit. What changes (the namespace) goes at the end of the
newest message of each request and is never stored in history: the history
prefix stays byte-identical from one call to the next.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cave_tui.runtime.summary import VarInfo

DEFAULT_INSTRUCTIONS = (
    "You are a data analyst working in a live, persistent IPython session shared with the user."
)

DEFAULT_SYSTEM_INSTRUCTIONS = """\
How to work:
- To act, reply with one ```{python_block_identifier} block. It runs at once in the session; \
the next message shows its output (prints, the last expression's value, or the error).
- State persists across steps and turns. The objects under "Namespace" are live: use them by \
name. Never re-create, re-load or invent data that already exists, and read no files unless asked.
- Look before you assume: print shapes, columns or a few rows rather than guess. Keep output short.
- When the user names a variable for a result, assign the result to exactly that name.
- If code fails, read the error and fix the cause; never resend the same code.
- Never predict output; wait for it.
- When the task is done, reply in plain text with no code block: a short, direct answer."""

DEFAULT_SYSTEM_PROMPT_TEMPLATE = "{instructions}\n\n{system_instructions}{skills}{security}"

SKILLS_HEADER = (
    "\n\nSkills (call activate_skill(name) once to load one's instructions and helpers):"
)

NAMESPACE_BUDGET = 6000  # characters for the whole namespace description
ENTRY_BUDGET = 400  # characters for one entry


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_entry(row: VarInfo) -> str:
    """One line for one namespace entry, within ENTRY_BUDGET."""
    note = f"  # {row.description}" if row.description else ""
    if row.kind == "function":
        doc = row.doc.splitlines()[0] if row.doc else ""
        desc = row.description or doc
        line = f"- {row.signature}" + (f"  # {desc}" if desc else "")
    elif row.kind == "type":
        # Dataclass/enum/pydantic schemas do not start with the class name: add it.
        named = row.signature.startswith(row.name)
        line = f"- {row.signature if named else f'{row.name}: {row.signature}'}" + note
    else:
        shape = f" {row.shape}" if row.shape else ""
        head = f"- {row.name}: {row.type_name}{shape}"
        if row.columns:
            head += "; columns " + ", ".join(row.columns)
        elif row.preview:
            head += f" = {row.preview}"
        line = head + note
    return _clip(line, ENTRY_BUDGET)


def describe_namespace(rows: Iterable[VarInfo], budget: int = NAMESPACE_BUDGET) -> str:
    """The live namespace as the model sees it, within *budget* characters."""
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
            types.append(describe_entry(row))
        else:
            variables.append(describe_entry(row))
    sections: list[tuple[str, list[str]]] = [
        ("Functions:", functions),
        ("Types:", types),
        ("Variables:", variables),
    ]
    out: list[str] = ["Namespace (live):"]
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


class _Defaults(dict):  # type: ignore[type-arg]
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def render_template(template: str, values: dict[str, Any]) -> str:
    """`str.format_map` that leaves unknown placeholders as they are."""
    return template.format_map(_Defaults(values))


def uses_inline_namespace(template: str) -> bool:
    return any(p in template for p in ("{functions}", "{variables}", "{types}"))
