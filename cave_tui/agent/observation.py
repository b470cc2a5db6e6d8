"""Observation shaping: what the model reads after a cell ran.

Output over the limit keeps its head and tail with a marker saying how much
was elided (upstream dropped it all, tracebacks included). An error always
keeps its exception line: the output is cut first, then the traceback's middle.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Iterable, Mapping

from cave_tui.agent.column_runs import named_in, run_groups, wide_form_note
from cave_tui.agent.missing_library import NO_MODULE, module_hint, undefined_hint
from cave_tui.agent.pandas_hints import (
    column_as_value,
    merge_into_new,
    merge_suffixes,
    other_kind_attribute,
    positional_key,
    reduced_too_far,
    tuple_columns,
)
from cave_tui.agent.unpack_hints import unpack_hint
from cave_tui.runtime.base import ExecutionResult
from cave_tui.runtime.capture import DROPPED_MARKER_RE
from cave_tui.runtime.shipped.summary import VarInfo

HEAD_SHARE = 0.6
OBSERVATION_LIMIT = 5000  # characters of a cell's output the model reads (`max_exec_output`)


def cut_middle(text: str, limit: int, dropped: int = 0) -> str:
    """*text* within about *limit* chars: head + marker + tail.

    *dropped* counts characters the runtime already left out of *text* (its own marker
    stands for them): when that marker falls in the cut, the new marker counts them too,
    so it always tells how much of what the cell printed is not shown.
    """
    if limit <= 0 or len(text) <= limit:
        return text
    head = int(limit * HEAD_SHARE)
    tail = limit - head
    head_text = text[:head]
    # Prefer to cut at line boundaries when one is near.
    nl = head_text.rfind("\n")
    if nl > head * 0.8:
        head_text = head_text[:nl]
    tail_text = text[-tail:] if tail > 0 else ""
    nl = tail_text.find("\n")
    if 0 <= nl < tail * 0.2:
        tail_text = tail_text[nl + 1 :]
    middle = text[len(head_text) : len(text) - len(tail_text)]
    elided = len(middle)
    markers = DROPPED_MARKER_RE.findall(middle) if dropped > 0 else []
    if markers:  # the runtime's marker is cut: count what it stood for instead of it
        elided += dropped - sum(len(m) for m in markers)
    marker = f"\n[… {elided:,} characters elided …]\n"
    return head_text + marker + tail_text


def _changed_note(result: ExecutionResult) -> str:
    parts = []
    if result.changed:
        parts.append("changed: " + ", ".join(result.changed[:20]))
    if result.deleted:
        parts.append("deleted: " + ", ".join(result.deleted[:20]))
    return f"[{'; '.join(parts)}]" if parts else ""


def figures_note(result: ExecutionResult) -> str:
    """One line per figure the cell displayed (what it shows, never its pixels): the model
    learns the user sees it in the log, saved with the session. A failed cell's figures
    (drawn before it raised) are shown and told too."""
    lines = [f"[figure shown to the user: {note}]" for note in result.figure_notes]
    if result.figures_dropped:
        lines.append(f"[{result.figures_dropped} more figure(s) not shown: over the size limits]")
    return "\n".join(lines)


def shape_result(
    result: ExecutionResult, limit: int, hints: Iterable[str] = (), persisted: str | None = None
) -> str:
    """The observation message for one cell; *hints* follow an error; then its figures.
    *persisted*: the marker of its output kept in the namespace, shown instead of the
    output's head and tail (agent/persisted_output.py)."""
    notice = f"[runtime: {result.notice}]\n" if result.notice else ""
    changed = "\n".join(n for n in (_changed_note(result), figures_note(result)) if n)
    if result.blocked:
        lines = ["Blocked by the security policy; the code did not run:"]
        for v in result.security_violations:
            lines.append(f"- {v}")
        lines.append("Rewrite the code without it.")
        return notice + "\n".join(lines)
    output = result.output.rstrip("\n")
    if result.success:
        dropped = result.output_truncated_chars
        shown = persisted if persisted is not None else cut_middle(output, limit, dropped)
        body = "Output:\n" + shown if output else "Ran OK, no output."
        return notice + body + (f"\n{changed}" if changed else "")
    error = compact_traceback((result.error_text or "error").rstrip("\n"))
    error_budget = max(limit // 2, 400)
    error_text = error if len(error) <= error_budget else _cut_traceback(error, error_budget)
    out_budget = max(limit - len(error_text), 0)
    body = ""
    if output:
        cut = cut_middle(output, out_budget, result.output_truncated_chars)
        body = "Output:\n" + (persisted if persisted is not None else cut) + "\n"
    body += "Error:\n" + error_text
    body += "".join(f"\nHint: {hint}" for hint in hints)
    return notice + body + (f"\n{changed}" if changed else "")


_FRAME = re.compile(r"^  File (?P<file>.+?), line (?P<line>\d+)(?:, in (?P<func>.+))?$")
_SITE = re.compile(r"[/\\](?:site|dist)-packages[/\\](?P<pkg>[A-Za-z0-9_]+)")
_STDLIB = re.compile(r"[/\\]lib[/\\]python3[.\d]*[/\\]|^<frozen ")


def _library(path: str) -> str | None:
    """The package a frame's file belongs to, when it is library code the model cannot change."""
    match = _SITE.search(path)
    if match:
        return match["pkg"]
    return "the standard library" if _STDLIB.search(path) else None


def compact_traceback(error: str) -> str:
    """A traceback as the model needs it: the failing lines of its own code, then the error.

    Runs of frames inside installed libraries or the standard library (long paths,
    internals the model cannot change) become one `… inside pandas` line; a cell
    frame becomes `cell line N: code`. Text that is not a traceback is returned as is.
    """
    lines = error.splitlines()
    if not lines or not lines[0].startswith("Traceback"):
        return error
    out = ["Traceback:"]
    inside: str | None = None
    i = 1
    while i < len(lines):
        line = lines[i]
        match = _FRAME.match(line)
        if match is None:
            if line.startswith("  [") and "frames omitted" in line:
                i += 1
                continue
            break  # the exception text starts here
        code = ""
        if i + 1 < len(lines) and lines[i + 1].startswith("    "):
            code = lines[i + 1].strip()
            i += 1
        i += 1
        path, func = match["file"], match["func"] or ""
        package = _library(path)
        if package is not None:
            if package != inside:
                out.append(f"  … inside {package}")
                inside = package
            continue
        inside = None
        where = "cell" if path == "<cell>" else path.replace("\\", "/").rsplit("/", 1)[-1]
        func = "" if func in ("", "<module>") else f" in {func}"
        out.append(f"  {where} line {match['line']}{func}" + (f": {code}" if code else ""))
    return "\n".join([*out, *lines[i:]])


# -- hints for common classes of mistakes -------------------------------------------------------

PRECEDENCE_HINT = (
    "`&` and `|` bind tighter than comparisons: wrap each comparison in parentheses, "
    "e.g. (df['a'] == 1) | (df['b'] == 2)."
)
BOOL_OP_HINT = "Combine conditions on columns with `&`, `|`, `~` (and parentheses), not and/or/not."
UNMATCHED_HINT = (
    "The line closes a bracket it never opened: count its brackets. Several conditions in one "
    "filter: df[(df['a'] == x) & (df['b'] > 5)]."
)
FILE_HINT = "The data is already loaded: use the variables listed in the Namespace, not files."
_KEY = re.compile(r"""^KeyError: (?P<q>['"])(?P<key>.+)(?P=q)$""")
_MISSING_KEYS = re.compile(
    r"None of \[(?:Index\(\[)?(?P<keys>[^\]]*)\]|\[(?P<listed>[^\]]*)\] not in index"
)
_MISSING_FILE = re.compile(r"No such file or directory: '(?P<path>[^']+)'")
# A file path as a request writes it: `/tmp/x/data.csv`, `data/sales.parquet`, `notes.txt`.
_REQUEST_PATH = re.compile(r"""(?<![\w/.~-])[~\w./-]*[\w-]\.[A-Za-z][\w]{0,7}(?![\w/])""")
_FORMAT_MANY = re.compile(r"unsupported format string passed to (?:Series|DataFrame)\.__format__")
FORMAT_MANY_HINT = (
    "A Series or frame holds many values and cannot be formatted as one number. If one number "
    "was asked for, reduce it first (.sum(), .mean(), .max(), ...) and store that."
)
_CELL_LINE = re.compile(r"^  File <cell>, line \d+.*\n    (?P<code>.+)$", re.MULTILINE)
_COLUMN_NOT_FOUND = re.compile(r"^Column not found: ")
_NO_ATTRIBUTE = re.compile(r"'(?P<kind>\w+)' object has no attribute '(?P<name>[^']+)'")


def _has_unparenthesised_mask(code: str) -> bool:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(
                isinstance(o, ast.BinOp) and isinstance(o.op, ast.BitOr | ast.BitAnd)
                for o in operands
            ):
                return True
    return False


def _has_bool_op(code: str) -> bool:
    try:
        return any(isinstance(n, ast.BoolOp | ast.UnaryOp) for n in ast.walk(ast.parse(code)))
    except SyntaxError:
        return False


def _close(name: str, columns: Iterable[str]) -> str:
    """Up to three column names close to *name*, compared without case."""
    lowered: dict[str, str] = {}
    for column in columns:
        lowered.setdefault(column.lower(), column)
    matches = difflib.get_close_matches(name.lower(), list(lowered), n=3, cutoff=0.7)
    return ", ".join(lowered[m] for m in matches if lowered[m] != name)


def error_kind(result: ExecutionResult) -> str:
    """The failed cell's exception name: its `error_type`, else read from the error's last
    line (`KeyError: 'x'` -> `KeyError`)."""
    error = (result.error_text or "").rstrip()
    return result.error_type or (error.splitlines()[-1] if error else "").partition(":")[0]


def _file_name(path: str) -> str:
    """The last part of *path*, either slash: `data.csv` of `/tmp/data.csv`."""
    return re.split(r"[/\\]", path)[-1]


def requested_path(missing: str, request: str) -> str | None:
    """The path *request* writes for the file *missing* names (the same file name, written
    otherwise: `tmp/x.csv` for `/tmp/x.csv`, or in another folder), or None."""
    for found in _REQUEST_PATH.finditer(request):
        path = found[0].rstrip(".")
        if path != missing and _file_name(path) == _file_name(missing):
            return path
    return None


def error_hints(
    code: str,
    result: ExecutionResult,
    frames: Mapping[str, Mapping[str, str]] | None = None,
    levels: Mapping[str, Mapping[str, list[str]]] | None = None,
    keys: Mapping[str, str] | None = None,
    request: str = "",
) -> list[str]:
    """Short hints for mistakes small models make again and again, found from the error.

    *frames* are the namespace's frames: name → column → dtype; *levels* their
    categorical columns' values (frame_levels); *keys* the lookup frames' key columns;
    *request* the user's words (a file they name is read from where they say it is).
    Each hint names the cause and the fix in one line; nothing is said when the error
    does not match a known class.
    """
    frames = frames or {}
    lookup_keys = keys or {}
    error = (result.error_text or "").rstrip()
    last = error.splitlines()[-1] if error else ""
    kind = error_kind(result)
    hints: list[str] = []
    if kind in ("TypeError", "ValueError") and _has_unparenthesised_mask(code):
        hints.append(PRECEDENCE_HINT)
    elif kind == "ValueError" and "truth value" in last and _has_bool_op(code):
        hints.append(BOOL_OP_HINT)
    if kind == "TypeError" and _FORMAT_MANY.search(last):
        hints.append(FORMAT_MANY_HINT)
    if kind == "SyntaxError" and "unmatched" in last:
        hints.append(UNMATCHED_HINT)
    if kind == "ModuleNotFoundError" and (module := NO_MODULE.search(last)):
        hints.append(module_hint(module["module"], code))
    if kind == "NameError" and (hint := undefined_hint(last)) is not None:
        hints.append(hint)
    if kind in ("FileNotFoundError", "IsADirectoryError"):
        missing_file = _MISSING_FILE.search(last)
        path = missing_file["path"] if missing_file else ""
        stem = _file_name(path).split(".")[0]
        named = requested_path(path, request) if path else None
        if named is not None:
            hints.append(
                f"There is no file {path!r}: the request gives it as {named!r}. Read it from "
                "exactly that path."
            )
        elif stem and stem in frames:
            hints.append(
                f"No file is needed: `{stem}` is already defined and holds that data. Remove "
                f"the line that reads the file and use `{stem}` as it is."
            )
        elif frames:  # with no frame in the namespace, nothing is loaded: no such hint
            hints.append(FILE_HINT)
    lines = _CELL_LINE.findall(error)
    failing_line = lines[-1] if lines else code
    from_pandas = "pandas" in error  # the traceback passed through pandas' code
    by_position = positional_key(failing_line, last, frames) if kind == "KeyError" else ""
    if by_position and from_pandas:
        return [*hints, by_position]  # a position taken for a label: no column is missing
    if kind == "ValueError" and (unpacking := unpack_hint(failing_line, code, last)):
        hints.append(unpacking)
    if kind in ("ValueError", "KeyError") and (several := tuple_columns(failing_line, code, last)):
        return [*hints, several]  # not a missing column: the tuple is no column's name
    every = [c for cols in frames.values() for c in cols]
    missing: list[str] = []
    column_error = kind == "AttributeError"  # the label was used as a column, not a row
    if kind == "KeyError":
        listed = _MISSING_KEYS.search(last)
        key_match = _KEY.match(last)
        if listed:
            missing += re.findall(r"'([^']+)'", listed["keys"] or listed["listed"])
            column_error = True
        elif key_match:
            name = _COLUMN_NOT_FOUND.sub("", key_match["key"])
            column_error = (
                bool(_COLUMN_NOT_FOUND.match(key_match["key"]))
                or _subscripted(name, failing_line, frames)
                or _named_as_column(name, failing_line)
            )
            missing.append(name)
    elif kind == "AttributeError":
        attr = _NO_ATTRIBUTE.search(last)
        if attr and (other := other_kind_attribute(attr["kind"], attr["name"])):
            hints.append(other)  # a pandas method of another type, not a column
        elif attr and ("DataFrame" in last or "Series" in last):
            missing.append(attr["name"])
        elif reduced := reduced_too_far(failing_line, last):
            hints.append(reduced)
    used = {f: frames[f] for f in _frames_used(failing_line, frames)}
    for name in missing[:3]:
        if suffixed := merge_suffixes(name, failing_line, used):
            hints.append(suffixed)
            continue
        if as_column := column_as_value(name, failing_line, used):
            hints.append(as_column)
            continue
        owners = [f for f, cols in frames.items() if name in cols]
        if owners:
            hints.append(_owner_hint(name, owners[0], used, frames, failing_line))
            continue
        if name in every:
            continue
        close = _close(name, every)
        if close and len(used) == 1:  # the frame's own columns, the closest first
            (where,) = used
            own = _closest_first(name, frames[where], request)
            wide = wide_form_note(name, where, list(frames[where]), request)
            hints.append(f"There is no column {name!r} in {where}; its columns: {own}.{wide}")
        elif close:
            hints.append(f"There is no column {name!r}; close names: {close}.")
        elif column_error:
            hints.append(_join_hint(name, failing_line, frames, request))
        elif kind == "KeyError" and every:
            hints.append(_row_hint(name, failing_line, frames, levels or {}, lookup_keys))
    return hints


def frame_columns(rows: Iterable[VarInfo]) -> dict[str, dict[str, str]]:
    """The frames of a namespace summary: name → column → dtype (what the hints take); a wide
    frame's columns past those summarized with a dtype have "" for it."""
    return {
        r.name: {c.name: c.dtype for c in r.columns} | dict.fromkeys(r.more_names, "")
        for r in rows
        if r.columns
    }


def frame_keys(rows: Iterable[VarInfo]) -> dict[str, str]:
    """The lookup frames' key columns (runtime/shipped/links.py): name → column."""
    return {r.name: r.relations.key for r in rows if r.relations.key}


def frame_levels(rows: Iterable[VarInfo]) -> dict[str, dict[str, list[str]]]:
    """The frames' categorical values: name → column → values (runtime/shipped/links.py levels)."""
    return {r.name: {c: list(v) for c, v in r.levels.items()} for r in rows if r.levels}


def _frames_used(code: str, frames: Iterable[str]) -> list[str]:
    """The frames named in *code* (the failing line), in namespace order."""
    return [f for f in frames if re.search(rf"\b{re.escape(f)}\b", code)]


# Calls whose string arguments name columns (not rows), and keywords that do anywhere.
_COLUMN_CALLS = {
    "groupby", "sort_values", "set_index", "pivot_table", "pivot", "value_counts", "nlargest",
    "nsmallest", "drop_duplicates", "dropna", "melt", "explode", "agg", "aggregate",
}  # fmt: skip
_COLUMN_KEYWORDS = {"by", "on", "left_on", "right_on", "columns", "subset", "values", "index"}


def _strings(node: ast.expr) -> list[str]:
    """The string constants of *node*: itself, or the items of a list, tuple or dict keys."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    items: list[ast.expr | None] = []
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        items = list(node.elts)
    elif isinstance(node, ast.Dict):
        items = list(node.keys)
    return [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]


def _named_as_column(name: str, line: str) -> bool:
    """*line* passes *name* where pandas takes column names (`.groupby('x')`, `by=`, `on=`)."""
    try:
        tree = ast.parse(line.strip())
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
        if method in _COLUMN_CALLS and any(name in _strings(arg) for arg in node.args):
            return True
        if any(k.arg in _COLUMN_KEYWORDS and name in _strings(k.value) for k in node.keywords):
            return True
    return False


def _closest_first(name: str, columns: Iterable[str], request: str = "") -> str:
    """*columns* listed (`_listed`) with those close to *name* (compared without case)
    ahead, then those the *request* names (a cut list still shows them)."""
    columns = list(columns)
    close = difflib.get_close_matches(name.lower(), [c.lower() for c in columns], n=5, cutoff=0.5)
    first = [c for m in close for c in columns if c.lower() == m]
    named = [c for c in named_in(columns, request) if len(c) >= 3]
    return _listed(columns, ahead=[*first, *named])


def _owner_hint(
    name: str,
    owner: str,
    used: Iterable[str],
    frames: Mapping[str, Mapping[str, str]],
    line: str = "",
) -> str:
    """A column of *owner* used on another frame: use *owner* itself when it has every
    column *line* names, else merge the two into a new frame."""
    others = [f for f in used if f != owner]
    if not others:
        return (
            f"{name!r} is a column of {owner}, not of the frame used here: use {owner}, or "
            f"merge it into a new frame first (a given frame keeps its name and columns)."
        )
    other = others[0]
    named = _names_in(line) & (set(frames[owner]) | set(frames[other]))
    if named and named <= set(frames[owner]):  # nothing of the other frame is needed
        columns = ", ".join(repr(c) for c in sorted(named))
        return (
            f"{name!r} is a column of {owner}, not of {other}. {owner} has every column "
            f"this line uses ({columns}): use {owner} here instead of {other}."
        )
    shared = [c for c in frames[owner] if c in frames[other]]
    merged, merge = merge_into_new(owner, other, shared[0] if len(shared) == 1 else None, frames)
    return (
        f"{name!r} is a column of {owner}, not of {other}. Merge them into a new frame "
        f"(keep {owner} and {other} as they are): {merge}, then use {merged}[{name!r}]."
    )


def _names_in(line: str) -> set[str]:
    """The string constants *line* passes anywhere (subscripts, arguments, lists)."""
    try:
        tree = ast.parse(line.strip())
    except SyntaxError:
        return set()
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


def _subscripted(name: str, line: str, frames: Iterable[str]) -> bool:
    """`frame['name']` (or `frame.merge(...)['name']`) on the failing line: a column."""
    owners = "|".join(re.escape(f) for f in frames)
    before = rf"(?:\b(?:{owners})|\))" if owners else r"\)"
    return bool(re.search(rf"""{before}\[\s*['"]{re.escape(name)}['"]\s*\]""", line))


def _join_hint(
    name: str, code: str, frames: Mapping[str, Mapping[str, str]], request: str = ""
) -> str:
    """A column that no frame has: often one the model expects a lookup frame to add."""
    used = _frames_used(code, frames)
    entity, label = _entity_label(name, frames)
    rewrite = f": write [{label!r}] in place of [{name!r}]"
    if label and any(label in frames[f] for f in used):
        where = " or ".join(used)
        return (
            f"There is no column {name!r} in {where}. The {name}'s {label} is the column "
            f"{label!r} of {entity}{rewrite}."
        )
    if len(used) == 1:
        frame = used[0]
        for other, columns in frames.items():
            shared = [c for c in columns if c in frames[frame]]
            if other != frame and len(shared) == 1:
                extra = ", ".join(c for c in columns if c not in shared)
                merged, merge = merge_into_new(frame, other, shared[0], frames)
                then = f", then use {merged}[{label!r}]" if other == entity else ""
                own = _closest_first(name, frames[frame], request)
                return (
                    f"There is no column {name!r} in {frame} (its columns: "
                    f"{own}). To use the columns of "
                    f"{other} ({extra}), merge into a new frame first: {merge}{then}."
                )
        listed = _closest_first(name, frames[frame], request)
        wide = wide_form_note(name, frame, list(frames[frame]), request)
        return f"There is no column {name!r} in {frame}; its columns: {listed}.{wide}"
    if len(used) > 1:  # a merge: name the frame the model took the column's name from
        shown = [f for f in used if entity_stem(f) == entity_stem(name)] or used
        listing = "; ".join(f"{f}: {_listed(frames[f])}" for f in shown)
        return f"There is no column {name!r} in {' or '.join(used)}. Columns of {listing}."
    return f"There is no column {name!r}: the Namespace lists each frame's columns."


def entity_stem(name: str) -> str:
    """`airlines` and `airline` → `airline`: a frame and the thing one row of it is."""
    return name.lower().rstrip("s")


def _entity_label(name: str, frames: Mapping[str, Mapping[str, str]]) -> tuple[str, str]:
    """('airlines', 'name') for a missing column 'airline': the frame named after it, and its
    column that names each row ('name', or its one text column besides the key)."""
    for frame, columns in frames.items():
        if entity_stem(frame) != entity_stem(name) or name in columns:
            continue
        if "name" in columns:
            return frame, "name"
        text = [c for c, dtype in columns.items() if dtype in ("str", "object")]
        if len(text) == 2:
            return frame, text[1]
    return "", ""


def _listed(columns: Iterable[str], limit: int = 24, ahead: Iterable[str] = ()) -> str:
    """At most *limit* entries, the names *ahead* first; past that many columns, runs of
    numbered names are written once (`sf_h00 to sf_h23 (24)`: column_runs) so a wide
    frame's columns are all seen. A run stays whole: when every entry fits, a name *ahead*
    inside a run is left in it; when the list is cut, its run comes first."""
    columns = list(columns)
    ahead = [c for c in dict.fromkeys(ahead) if c in set(columns)]
    if len(columns) <= limit:
        return ", ".join(dict.fromkeys([*ahead, *columns]))
    entries = run_groups(columns)
    holding = [text for name in ahead for text, names in entries if name in names]
    if len(entries) <= limit:  # all shown: only names that stand alone move ahead
        holding = [text for text in holding if text in ahead]
    order = list(dict.fromkeys([*holding, *(text for text, _ in entries)]))
    return ", ".join(order[:limit]) + (", …" if len(order) > limit else "")


def _row_hint(
    key: str,
    code: str,
    frames: Mapping[str, Mapping[str, str]],
    levels: Mapping[str, Mapping[str, list[str]]],
    keys: Mapping[str, str],
) -> str:
    """A missing label that is no column: most often a value looked up as a row label."""
    used = _frames_used(code, frames)
    if len(used) == 1 and used[0] in keys:  # a lookup frame: index it by its key
        frame, column = used[0], keys[used[0]]
        return (
            f"{key!r} is not an index label of {frame} (its index is 0, 1, 2, …); it is a value "
            f"of its key column {column!r}. Index by it first: "
            f"{frame}.set_index({column!r}).loc[{key!r}]."
        )
    if len(used) == 1:
        frame = used[0]
        text = [c for c, dtype in frames[frame].items() if dtype in ("str", "object")]
        holding = [c for c, values in levels.get(frame, {}).items() if key in values]
        example = (holding or text or ["column"])[0]
        more = f" (text columns of {frame}: {', '.join(text[:6])})" if text and not holding else ""
        return (
            f"{key!r} is not a column or an index label of {frame}. To pick its rows by a "
            f"value: {frame}[{frame}[{example!r}] == {key!r}]{more}."
        )
    return (
        f"{key!r} is not a column or an index label here. To pick rows by a value "
        f"in a column: df[df['column'] == {key!r}]."
    )


def _cut_traceback(error: str, limit: int) -> str:
    """Keep the last line (the exception) whole and the innermost frames."""
    lines = error.splitlines()
    last = lines[-1] if lines else error
    if len(last) >= limit:
        return cut_middle(last, limit)
    rest = "\n".join(lines[:-1])
    return cut_middle(rest, limit - len(last) - 1) + "\n" + last
