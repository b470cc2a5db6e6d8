"""Export a session as a Jupyter notebook (nbformat) or a Python script (percent cells).

Conversation turns become Markdown cells, each executed cell a code cell with the
recorded output (stdout, or the error). Injected data becomes a code cell that
loads it from its source, so the exported notebook runs on its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cave_tui.dataio.atomic import atomic_write_text
from cave_tui.session.reader import (
    RecordedStep,
    RecordedTurn,
    SessionData,
    SetupItem,
    StepRun,
    UserCell,
    read_session,
    recorded_turns,
)

EDITED_NOTE = "*The user edited the model's code before it ran; this is what ran.*"
SKIPPED_NOTE = "*The user skipped this code; it did not run:*"
USER_CELL_NOTE = "**User** ran their own code (a `!` cell):"
INTERRUPTED_NOTE = "*(interrupted before it finished)*"

LOADERS = {
    "parquet": "pd.read_parquet({path!r})",
    "feather": "pd.read_feather({path!r})",
    "csv": "pd.read_csv({path!r})",
    "tsv": "pd.read_csv({path!r}, sep='\\t')",
    "json": "json.load(open({path!r}))",
    "jsonl": "pd.read_json({path!r}, lines=True)",
    "npy": "np.load({path!r})",
    "npz": "dict(np.load({path!r}))",
    "pickle": "pickle.load(open({path!r}, 'rb'))",
    "dill": "dill.load(open({path!r}, 'rb'))",
    "excel": "pd.read_excel({path!r})",
}
IMPORTS = {
    "parquet": "import pandas as pd",
    "feather": "import pandas as pd",
    "csv": "import pandas as pd",
    "tsv": "import pandas as pd",
    "jsonl": "import pandas as pd",
    "excel": "import pandas as pd",
    "json": "import json",
    "npy": "import numpy as np",
    "npz": "import numpy as np",
    "pickle": "import pickle",
    "dill": "import dill",
}


def setup_code(record: dict[str, Any]) -> tuple[str, str]:
    """(markdown note, code) reproducing one injection or load."""
    if record.get("type") == "load":
        path = record.get("path")
        code = (
            "from cave_tui.dataio import read_dump\n"
            f"globals().update(read_dump({path!r}, trust=True).values)"
        )
        return f"*Namespace loaded from the dump `{path}`.*", code
    name = record["name"]
    source = record.get("source") or {}
    if source.get("kind") == "package":
        module, attr = source.get("module"), source.get("attr")
        code = f"from {module} import {attr}" + (f" as {name}" if attr != name else "")
        version = f" {source['version']}" if source.get("version") else ""
        return (
            f"*`{name}`: `{module}.{attr}` from the `{source.get('package')}{version}` package.*",
            code,
        )
    fmt = source.get("format", "")
    path = source.get("path", "")
    loader = LOADERS.get(fmt, "pickle.load(open({path!r}, 'rb'))").format(path=path)
    code = f"{IMPORTS.get(fmt, 'import pickle')}\n{name} = {loader}"
    sha = source.get("sha256") or ""
    return f"*`{name}` loaded from `{path}` ({fmt}, sha256 `{sha[:12]}…`).*", code


def _prose(reply: str) -> str:
    from cave_tui.agent.extraction import prose_of

    return prose_of(reply)


def _answer(turn: RecordedTurn) -> str:
    """A final_answer() answer (a prose answer is already the last step's reply)."""
    from cave_tui.agent.events import AnswerSource

    record = turn.answer or {}
    if record.get("source") != AnswerSource.FINAL_ANSWER:
        return ""
    return str(record.get("content") or "")


def _outputs(outcome: dict[str, Any] | None) -> list[Any]:
    from nbformat.v4 import new_output

    if outcome is None:
        return []
    outputs = []
    text = str(outcome.get("output") or "")
    if text:
        outputs.append(new_output("stream", name="stdout", text=text))
    kind = outcome.get("type")
    if kind == "execution_error":
        error = str(outcome.get("error") or "")
        last = error.strip().splitlines()[-1] if error.strip() else ""
        ename = str(outcome.get("error_type") or "Error")
        evalue = last.split(": ", 1)[1] if ": " in last else last
        outputs.append(
            new_output("error", ename=ename, evalue=evalue, traceback=error.splitlines())
        )
    elif kind == "security_error":
        outputs.append(
            new_output(
                "error",
                ename="SecurityError",
                evalue="blocked by the security policy; the code did not run",
                traceback=str(outcome.get("content", "")).splitlines(),
            )
        )
    return outputs


def _user_cell_note(cell: UserCell) -> str:
    return USER_CELL_NOTE + ("" if cell.outcome is not None else f" {INTERRUPTED_NOTE}")


def _skipped_markdown(step: RecordedStep) -> str:
    return f"{SKIPPED_NOTE}\n\n```python\n{(step.code or '').rstrip()}\n```"


def _header(data: SessionData) -> str:
    meta = data.meta
    lines = [f"# cave session {data.id}"]
    if meta.get("title"):
        lines.append(f"\n{meta['title']}")
    facts = []
    for key, label in (("model", "model"), ("created", "recorded"), ("made_by", "made by")):
        if meta.get(key):
            facts.append(f"{label}: {meta[key]}")
    if facts:
        lines.append("\n" + " · ".join(facts))
    return "\n".join(lines)


def to_notebook(session: str | Path | SessionData) -> Any:
    """The session as an nbformat v4 notebook (validated)."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    data = session if isinstance(session, SessionData) else read_session(session)
    turns, trailing = recorded_turns(data)
    cells = [new_markdown_cell(_header(data))]
    count = 0

    def add_code(code: str, outcome: dict[str, Any] | None, metadata: dict[str, Any]) -> None:
        nonlocal count
        count += 1
        outputs = _outputs(outcome)
        cell = new_code_cell(
            code.rstrip("\n"), execution_count=count, outputs=outputs, metadata=metadata
        )
        cells.append(cell)

    def add_setup(items: list[SetupItem]) -> None:
        for item in items:
            if isinstance(item, UserCell):
                cells.append(new_markdown_cell(_user_cell_note(item)))
                add_code(item.code, item.outcome, {"cave": {"by": "user"}, "tags": ["user"]})
                continue
            note, code = setup_code(item)
            cells.append(new_markdown_cell(note))
            cells.append(new_code_cell(code))

    for turn in turns:
        add_setup(turn.setup)
        cells.append(new_markdown_cell(f"**User:** {turn.task}"))
        for step in turn.ordered:
            prose = _prose(step.reply) if step.reply else ""
            if prose:
                cells.append(new_markdown_cell(f"**cave:** {prose}"))
            if step.code and step.run is StepRun.SKIPPED:
                cells.append(new_markdown_cell(_skipped_markdown(step)))
            elif step.code:
                metadata: dict[str, Any] = {}
                if step.run is StepRun.EDITED:
                    cells.append(new_markdown_cell(EDITED_NOTE))
                    metadata = {"cave": {"edited": True, "model_code": step.proposed}}
                add_code(step.code, step.outcome, metadata)
            if step.error is not None:
                cells.append(new_markdown_cell(f"*Model error:* {step.error.get('content', '')}"))
        answer = _answer(turn)
        if answer:
            cells.append(new_markdown_cell(f"**cave:** {answer}"))
        if turn.status not in (None, "completed"):
            cells.append(new_markdown_cell(f"*Turn ended: {turn.status}.*"))
    add_setup(trailing)
    nb = new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "cave": {"session": data.id, **{k: data.meta.get(k) for k in ("model", "made_by")}},
        },
    )
    nbformat.validate(nb)
    return nb


def _comment(text: str) -> str:
    return "\n".join(f"# {line}".rstrip() for line in text.splitlines())


def _indent(code: str) -> str:
    return "\n".join(f"    {line}" for line in code.rstrip().splitlines())


def _script_cell(code: str, outcome: dict[str, Any] | None, max_output_lines: int) -> str:
    """A `# %%` cell with its recorded output as comments (cut to *max_output_lines*)."""
    block = f"# %%\n{code.rstrip()}"
    outcome = outcome or {}
    shown = str(outcome.get("output") or "")
    if outcome.get("type") == "execution_error":
        shown += str(outcome.get("error") or "")
    if outcome.get("type") == "security_error":
        shown += "blocked by the security policy; the code did not run"
    lines = shown.rstrip().splitlines()
    if len(lines) > max_output_lines:
        hidden = len(lines) - max_output_lines
        lines = [*lines[:max_output_lines], f"… {hidden} more lines"]
    if lines:
        block += "\n# Output:\n" + _comment("\n".join(lines))
    return block


def to_script(session: str | Path | SessionData, *, max_output_lines: int = 40) -> str:
    """The session as a Python script with `# %%` cells; outputs follow as comments."""
    data = session if isinstance(session, SessionData) else read_session(session)
    turns, trailing = recorded_turns(data)
    parts = [_comment(_header(data).replace("# ", "", 1))]

    def add_setup(items: list[SetupItem]) -> None:
        for item in items:
            if isinstance(item, UserCell):
                note = _user_cell_note(item).replace("**", "")
                parts.append(f"# %% [markdown]\n{_comment(note)}")
                parts.append(_script_cell(item.code, item.outcome, max_output_lines))
                continue
            note, code = setup_code(item)
            parts.append(f"# %% [markdown]\n{_comment(note)}\n\n# %%\n{code}")

    for turn in turns:
        add_setup(turn.setup)
        parts.append(f"# %% [markdown]\n{_comment('User: ' + turn.task)}")
        for step in turn.ordered:
            prose = _prose(step.reply) if step.reply else ""
            if prose:
                parts.append(f"# %% [markdown]\n{_comment('cave: ' + prose)}")
            if step.code and step.run is StepRun.SKIPPED:
                note = f"{SKIPPED_NOTE}\n\n{_indent(step.code)}"
                parts.append(f"# %% [markdown]\n{_comment(note)}")
            elif step.code:
                if step.run is StepRun.EDITED:
                    parts.append(f"# %% [markdown]\n{_comment(EDITED_NOTE)}")
                parts.append(_script_cell(step.code, step.outcome, max_output_lines))
        answer = _answer(turn)
        if answer:
            parts.append(f"# %% [markdown]\n{_comment('cave: ' + answer)}")
    add_setup(trailing)
    return "\n\n".join(parts) + "\n"


def export_session(session: str | Path | SessionData, path: str | Path) -> Path:
    """Write *session* to *path* (`.ipynb` or `.py`, chosen by the suffix), atomically."""
    import nbformat

    target = Path(path).expanduser()
    suffix = target.suffix.lower()
    if suffix == ".ipynb":
        text = nbformat.writes(to_notebook(session))
    elif suffix == ".py":
        text = to_script(session)
    else:
        from cave_tui.session.store import SessionError

        raise SessionError(f"cannot export to {target.name}: use a .ipynb or .py file name")
    from cave_tui.dataio.errors import DataIOError, describe_os_error

    try:
        atomic_write_text(target, text)
    except OSError as exc:
        raise DataIOError(describe_os_error(exc, "write", target), path=target) from None
    return target
