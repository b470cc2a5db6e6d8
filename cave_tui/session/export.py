"""Export a session as a Jupyter notebook (nbformat) or a Python script (percent cells).

Conversation turns become Markdown cells, each cell that ran a code cell with the
recorded output (stdout and its figures as `image/png`, or the error; a cell that raised
is tagged `raises-exception`).
A cell that did not run to its end in the session (cut short, blocked, refused, skipped)
is shown as Markdown, never run. Injected and loaded data becomes a code cell that
loads it from its source without cave (`setup_code`), so the notebook runs on its own.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

from cave_tui.agent.final_answer import FINAL_NAME
from cave_tui.dataio.atomic import atomic_write_text
from cave_tui.session.cell_fate import RAISES_TAG, CellFate, Fate, cell_fate
from cave_tui.session.figures import figure_path, read_figure
from cave_tui.session.notebook_format import nbformat
from cave_tui.session.reader import (
    PolicyChange,
    RecordedStep,
    RecordedTurn,
    SessionData,
    SetupItem,
    StepRun,
    UserCell,
    read_session,
    recorded_turns,
)
from cave_tui.session.setup_code import FINAL_ANSWER_CODE, FINAL_ANSWER_NOTE, setup_code

__all__ = ["export_session", "setup_code", "to_notebook", "to_script"]

EDITED_NOTE = "*The user edited the model's code before it ran; this is what ran.*"
USER_CELL_NOTE = "**User** ran their own code (a `!` cell):"
INTERRUPTED_NOTE = "*(interrupted before it finished)*"


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


def _unsupported(turn: RecordedTurn) -> str:
    """The mark of an answer no successful cell of its turn supports ("" for the others)."""
    from cave_tui.agent.events import UNSUPPORTED_MARK, AnswerSupport

    record = turn.answer or {}
    return UNSUPPORTED_MARK if record.get("support") == AnswerSupport.NONE else ""


def _figure_outputs(outcome: dict[str, Any], folder: Path) -> list[Any]:
    """The cell's saved figures as `image/png` display outputs (a missing file is left out)."""
    new_output = nbformat().v4.new_output
    outputs = []
    names = outcome.get("figure_files")
    for name in names if isinstance(names, list) else []:
        path = figure_path(folder, name)
        png = read_figure(path) if path is not None else None
        if png is not None:
            data = {"image/png": base64.b64encode(png).decode("ascii")}
            outputs.append(new_output("display_data", data=data))
    return outputs


def _outputs(outcome: dict[str, Any] | None, folder: Path) -> list[Any]:
    new_output = nbformat().v4.new_output
    if outcome is None:
        return []
    outputs = []
    text = str(outcome.get("output") or "")
    if text:
        outputs.append(new_output("stream", name="stdout", text=text))
    outputs += _figure_outputs(outcome, folder)
    if outcome.get("type") == "execution_error":
        error = str(outcome.get("error") or "")
        last = error.strip().splitlines()[-1] if error.strip() else ""
        ename = str(outcome.get("error_type") or "Error")
        evalue = last.split(": ", 1)[1] if ": " in last else last
        outputs.append(
            new_output("error", ename=ename, evalue=evalue, traceback=error.splitlines())
        )
    return outputs


def _fence(text: str, lang: str = "") -> str:
    """*text* in a Markdown code fence longer than any run of backticks inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


def _recorded_text(outcome: dict[str, Any] | None) -> str:
    """What the session showed for a cell that is not run again: output, error, violations."""
    if outcome is None:
        return ""
    if outcome.get("type") == "security_error":
        rules = [f"- {v.get('message', v.get('rule', ''))}" for v in outcome.get("violations", [])]
        return "\n".join(rules) or str(outcome.get("content") or "")
    text = str(outcome.get("output") or "")
    error = str(outcome.get("error") or "").strip()
    return (text.rstrip("\n") + "\n" + error).strip() if error else text.strip()


def _shown(code: str, fate: Fate, outcome: dict[str, Any] | None) -> str:
    """The Markdown standing for a cell that is not run again: why, the code, what it showed."""
    note = f"*{fate.reason[:1].upper()}{fate.reason[1:]}:*"
    text = f"{note}\n\n{_fence(code, 'python')}"
    recorded = _recorded_text(outcome)
    if recorded:
        text += f"\n\nIn the session:\n\n{_fence(recorded, 'text')}"
    return text


def _user_cell_note(cell: UserCell) -> str:
    return USER_CELL_NOTE + ("" if cell.outcome is not None else f" {INTERRUPTED_NOTE}")


def _policy_note(change: PolicyChange) -> str:
    return f"*The user set the security policy to `{change.policy}`.*"


def _step_fate(step: RecordedStep) -> Fate:
    return cell_fate(step.outcome, step.run, step.refused_by)


def _calls_final_answer(code: str, fate: Fate) -> bool:
    return fate.runs and FINAL_NAME in code


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
    """The session as an nbformat v4 notebook (validated) that runs again top to bottom."""
    nbf = nbformat()
    new_code_cell, new_markdown_cell = nbf.v4.new_code_cell, nbf.v4.new_markdown_cell
    new_notebook = nbf.v4.new_notebook

    data = session if isinstance(session, SessionData) else read_session(session)
    turns, trailing = recorded_turns(data)
    cells = [new_markdown_cell(_header(data))]
    count = 0
    needs_final_answer = False

    def add_cell(
        code: str, outcome: dict[str, Any] | None, fate: Fate, metadata: dict[str, Any]
    ) -> None:
        nonlocal count, needs_final_answer
        if not fate.runs:
            cells.append(new_markdown_cell(_shown(code, fate, outcome)))
            return
        needs_final_answer = needs_final_answer or _calls_final_answer(code, fate)
        if fate.kind is CellFate.RAISED:
            metadata = {**metadata, "tags": [*metadata.get("tags", []), RAISES_TAG]}
        count += 1
        cell = new_code_cell(
            code.rstrip("\n"),
            execution_count=count,
            outputs=_outputs(outcome, data.dir),
            metadata=metadata,
        )
        cells.append(cell)

    def add_setup(items: list[SetupItem]) -> None:
        for item in items:
            if isinstance(item, PolicyChange):
                cells.append(new_markdown_cell(_policy_note(item)))
                continue
            if isinstance(item, UserCell):
                cells.append(new_markdown_cell(_user_cell_note(item)))
                metadata = {"cave": {"by": "user"}, "tags": ["user"]}
                add_cell(item.code, item.outcome, cell_fate(item.outcome), metadata)
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
            if step.code:
                fate = _step_fate(step)
                metadata: dict[str, Any] = {}
                if step.run is StepRun.EDITED:
                    cells.append(new_markdown_cell(EDITED_NOTE))
                    metadata = {"cave": {"edited": True, "model_code": step.proposed}}
                add_cell(step.code, step.outcome, fate, metadata)
            if step.error is not None:
                cells.append(new_markdown_cell(f"*Model error:* {step.error.get('content', '')}"))
        answer = _answer(turn)
        if answer:
            cells.append(new_markdown_cell(f"**cave:** {answer}"))
        if mark := _unsupported(turn):
            cells.append(new_markdown_cell(f"*{mark}*"))
        if turn.status not in (None, "completed"):
            cells.append(new_markdown_cell(f"*Turn ended: {turn.status}.*"))
    add_setup(trailing)
    if needs_final_answer:
        cells[1:1] = [new_markdown_cell(FINAL_ANSWER_NOTE), new_code_cell(FINAL_ANSWER_CODE)]
    nb = new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "cave": {"session": data.id, **{k: data.meta.get(k) for k in ("model", "made_by")}},
        },
    )
    nbf.validate(nb)
    return nb


def _comment(text: str) -> str:
    return "\n".join(f"# {line}".rstrip() for line in text.splitlines())


def _indent(code: str) -> str:
    return "\n".join(f"    {line}" for line in code.rstrip().splitlines())


def _script_cell(
    code: str, outcome: dict[str, Any] | None, max_output_lines: int, fate: Fate
) -> str:
    """A `# %%` cell with its recorded output as comments (cut to *max_output_lines*)."""
    tags = f' tags=["{RAISES_TAG}"]' if fate.kind is CellFate.RAISED else ""
    block = f"# %%{tags}\n{code.rstrip()}"
    outcome = outcome or {}
    shown = str(outcome.get("output") or "")
    if outcome.get("type") == "execution_error":
        shown += str(outcome.get("error") or "")
    lines = shown.rstrip().splitlines()
    if len(lines) > max_output_lines:
        hidden = len(lines) - max_output_lines
        lines = [*lines[:max_output_lines], f"… {hidden} more lines"]
    if lines:
        block += "\n# Output:\n" + _comment("\n".join(lines))
    return block


def _script_shown(code: str, fate: Fate, outcome: dict[str, Any] | None) -> str:
    """A Markdown cell (comments) standing for a cell that is not run again."""
    note = f"{fate.reason[:1].upper()}{fate.reason[1:]}:\n\n{_indent(code)}"
    recorded = _recorded_text(outcome)
    if recorded:
        note += f"\n\nIn the session:\n\n{_indent(recorded)}"
    return f"# %% [markdown]\n{_comment(note)}"


def to_script(session: str | Path | SessionData, *, max_output_lines: int = 40) -> str:
    """The session as a Python script with `# %%` cells; outputs follow as comments.

    Cells follow the notebook's rules: one that raised is tagged `raises-exception`, one
    that did not run to its end is a Markdown cell of comments.
    """
    data = session if isinstance(session, SessionData) else read_session(session)
    turns, trailing = recorded_turns(data)
    parts = [_comment(_header(data).replace("# ", "", 1))]
    needs_final_answer = False

    def add_cell(code: str, outcome: dict[str, Any] | None, fate: Fate) -> None:
        nonlocal needs_final_answer
        if not fate.runs:
            parts.append(_script_shown(code, fate, outcome))
            return
        needs_final_answer = needs_final_answer or _calls_final_answer(code, fate)
        parts.append(_script_cell(code, outcome, max_output_lines, fate))

    def add_setup(items: list[SetupItem]) -> None:
        for item in items:
            if isinstance(item, PolicyChange):
                parts.append(f"# %% [markdown]\n{_comment(_policy_note(item))}")
                continue
            if isinstance(item, UserCell):
                note = _user_cell_note(item).replace("**", "")
                parts.append(f"# %% [markdown]\n{_comment(note)}")
                add_cell(item.code, item.outcome, cell_fate(item.outcome))
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
            if step.code:
                fate = _step_fate(step)
                if step.run is StepRun.EDITED and fate.runs:
                    parts.append(f"# %% [markdown]\n{_comment(EDITED_NOTE)}")
                add_cell(step.code, step.outcome, fate)
        answer = _answer(turn)
        if answer:
            parts.append(f"# %% [markdown]\n{_comment('cave: ' + answer)}")
        if mark := _unsupported(turn):
            parts.append(f"# %% [markdown]\n{_comment(mark)}")
    add_setup(trailing)
    if needs_final_answer:
        stub = f"# %% [markdown]\n{_comment(FINAL_ANSWER_NOTE)}\n\n# %%\n{FINAL_ANSWER_CODE}"
        parts.insert(1, stub)
    return "\n\n".join(parts) + "\n"


def export_session(session: str | Path | SessionData, path: str | Path) -> Path:
    """Write *session* to *path* (`.ipynb` or `.py`, chosen by the suffix), atomically."""
    target = Path(path).expanduser()
    suffix = target.suffix.lower()
    if suffix == ".ipynb":
        text = nbformat().writes(to_notebook(session))
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
