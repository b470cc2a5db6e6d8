"""Doubting an answer once per turn, before it is accepted.

A small model's wrong answers are most often quiet: nothing fails. An *empty* result
(0, NaN, an empty frame) is most often a filter that matched nothing because of a
misspelt value; an answer given before the variable the user asked for exists is a
result only printed or described. Codes stand where names were asked, text where
numbers were, counts of 1 where rows were reduced before counting, a bool where "the
int" was, each column's own mode where the most frequent pair was, a mask reduced
before it was combined, rows with missing values the request leaves out, a column the
request asks to add and nobody added. Each is found from the namespace summary, the
request's words and the turn's code, and asked about once per turn; a second answer is
taken as it is (docs/prompt-tuning.md, changes 12, 16, 18-20, 25, 26, 28, 29, 31, 32
and 34).
Over 400 lines: one short check per kind of quiet wrong answer; they share the request
parsing at the top. The policy layer (issue 16) is where they will be split, one per policy.
"""

from __future__ import annotations

import ast
import difflib
import keyword
import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from cave_tui.agent.observation import frame_columns
from cave_tui.runtime.summary import Codes, Link, VarInfo

ALREADY_RAN_NOTE = (
    "This code already ran without error, and its results are stored. Answer now: call "
    "final_answer(...) with the result, or change the code if the result is wrong."
)


def _tree(code: str) -> ast.Module | None:
    """The cell's syntax tree, or None when it does not parse (the runtime says so)."""
    try:
        return ast.parse(code)
    except SyntaxError:
        return None


def empty_results(rows: Iterable[VarInfo], names: Iterable[str]) -> list[str]:
    """Which of *names* (a cell's changed names) now hold an empty or zero value."""
    wanted = set(names)
    return [row.name for row in rows if row.name in wanted and row.is_empty]


def empty_note(names: list[str], misspelt: Sequence[tuple[str, str]] = ()) -> str:
    listed = ", ".join(f"`{name}`" for name in names)
    verb = "is" if len(names) == 1 else "are"
    note = (
        f"{listed} {verb} empty or zero, so that answer was not given yet. A filter or lookup "
        "may have matched nothing: check the exact values you matched (spelling, case) "
        "against the data or the user's words, and fix the code. If empty or zero is truly "
        "the answer, call final_answer again."
    )
    return "\n".join([note, *(misspelt_note(pair) for pair in misspelt)])


_WORD = re.compile(r"[A-Za-z][\w.&'-]*[A-Za-z0-9]")


def misspelt_values(code: str, request: str, known: Iterable[str] = ()) -> list[tuple[str, str]]:
    """(the code's string, the request's word) for strings the code spells unlike the request.

    Small models misspell rare words they copy (a request's `EMBRAER` became
    `EMBRERAER`): a filter on the misspelt value matches nothing, and nothing fails.
    *known* names (the frames' columns) are never taken for misspellings, nor plurals.
    """
    tree = _tree(code)
    if tree is None:
        return []
    words = {w.lower(): w for w in _WORD.findall(request) if len(w) >= 4}
    lowered_request = request.lower()
    known_lower = {k.lower() for k in known}
    found: list[tuple[str, str]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        value = node.value.strip()
        lowered = value.lower()
        if len(value) < 4 or " " in value or lowered in lowered_request or lowered in known_lower:
            continue
        if any(word in lowered for word in words):  # derived from a word: 'flights.csv'
            continue
        close = difflib.get_close_matches(lowered, list(words), n=1, cutoff=0.75)
        plural = close and close[0].rstrip("es") == lowered.rstrip("es")
        if close and not plural and (value, words[close[0]]) not in found:
            found.append((value, words[close[0]]))
    return found


def misspelt_note(pair: tuple[str, str]) -> str:
    value, word = pair
    return f"The code uses {value!r}; the request spells it {word!r}."


_BACKTICKED = re.compile(r"`([A-Za-z_]\w*)`")
_STORE_WORDS = re.compile(
    r"\b(?:store|save|assign|keep|put|make|create|build|add|name|call)\w*\b", re.IGNORECASE
)


def result_names(request: str) -> list[str]:
    """Names the request asks to store results in: `name` in backticks, when it asks to store."""
    if not _STORE_WORDS.search(request):
        return []
    names = dict.fromkeys(_BACKTICKED.findall(request))
    return [name for name in names if not keyword.iskeyword(name)]


def missing_names(
    wanted: Iterable[str],
    rows: Iterable[VarInfo],
    before: Iterable[str] = (),
    stored: Iterable[str] | None = None,
) -> list[str]:
    """Which *wanted* result names this turn has not stored.

    *before* are the names defined when the turn began: those are the turn's
    inputs (`Using `adelie`, ...`). A frame's column (`dep_time`) is never a
    result's name. With *stored* (what cells that ran without error assigned this
    turn), a name that exists but was only set by a failed cell (the code, where
    the request asked for the full name) is missing too.
    """
    rows = list(rows)
    defined = {row.name for row in rows}
    columns = {column for frame in frame_columns(rows).values() for column in frame}
    inputs = set(before)
    done = set(stored) if stored is not None else defined
    return [
        name
        for name in wanted
        if name not in inputs and name not in columns and (name not in defined or name not in done)
    ]


def stored_as(name: str, stored: Iterable[str], before: Iterable[str] = ()) -> str | None:
    """The one new name this turn stored that looks like *name* (`farthest_airport_name`
    for `farthest_airport`): where the model most likely put the missing result."""
    old = set(before)
    close = [n for n in stored if n != name and n not in old and (name in n or n in name)]
    return close[0] if len(close) == 1 else None


def missing_note(names: list[str], aliases: dict[str, str] | None = None) -> str:
    listed = ", ".join(f"`{name}`" for name in names)
    moves = [f"{name} = {aliases[name]}" for name in names if aliases and aliases.get(name)]
    store = f" (`{'; '.join(moves)}`)" if moves else ""
    return (
        f"The request asks to store its result in {listed}, and no code that ran without error "
        f"in this turn stored it there: that answer was not given yet. Store the result under "
        f"that exact name{store}, then call final_answer."
    )


class CodedResult(NamedTuple):
    name: str
    codes: Codes  # whose key's codes, in the result's values or index (runtime/links.py)
    column: str  # the lookup frame's column the request asks for: "name", "tzone"
    facts: str = ""  # a frame whose `codes.source` column links to that key ("flights")
    type_name: str = ""  # of the result: "str", "list", "Series", ...


def coded_results(
    wanted: Iterable[str], rows: Iterable[VarInfo], request: str, stored: Iterable[str]
) -> list[CodedResult]:
    """Results made of codes where the request asks for another column of their lookup frame.

    A result stored this turn made of a lookup frame's codes (runtime/links.py), where
    the request names another column of that frame ("the full names", "by tzone"):
    the model kept the codes it had instead of looking up what was asked.
    """
    rows = list(rows)
    frames = frame_columns(rows)
    words = set(re.findall(r"[a-z_]+", request.lower()))
    done = set(stored)
    found = []
    for row in rows:
        codes = row.relations.codes
        if row.name not in wanted or row.name not in done or codes is None:
            continue
        asked = [
            column
            for column in frames.get(codes.frame, {})
            if column != codes.key and (column.lower() in words or f"{column.lower()}s" in words)
        ]
        if asked:
            found.append(
                CodedResult(row.name, codes, asked[0], _linked_frame(rows, codes), row.type_name)
            )
    return found


def _linked_frame(rows: list[VarInfo], codes: Codes) -> str:
    """The first frame whose `codes.source` column links to their key (flights: dest)."""
    link = Link(codes.source, codes.frame, codes.key)
    return next((r.name for r in rows if codes.source and link in r.relations.links), "")


def codes_note(item: CodedResult) -> str:
    frame, key, where = item.codes.frame, item.codes.key, item.codes.where
    lookup = f"{frame}.set_index('{key}')['{item.column}']"
    if where == "index" and "name" in item.column.lower():  # one name per code
        fix = f"Relabel it: {item.name} = {item.name}.rename(index={lookup})"
    elif where == "index" and item.facts:
        fix = (
            f"Merge first: merged = {item.facts}.merge({frame}, "
            f"left_on='{item.codes.source}', right_on='{key}'), "
            f"then group merged by '{item.column}'"
        )
    elif where == "index":
        fix = f"Merge the frames on the linked columns first, then group by '{item.column}'"
    elif item.type_name == "str":  # the exact line: a model re-stores under its own name
        fix = f"Look it up: {item.name} = {lookup}[{item.name}]"
    elif item.type_name in ("list", "tuple"):
        fix = f"Look them up: {item.name} = [{lookup}[c] for c in {item.name}]"
    elif item.type_name == "Series":
        fix = f"Look them up: {item.name} = {item.name}.map({lookup})"
    else:
        fix = (
            f"Look it up: lookup = {lookup}, then lookup[code] for one code, "
            "[lookup[c] for c in codes] or .map(lookup) for many"
        )
    holds = "is indexed by" if where == "index" else "holds"
    return (
        f"`{item.name}` {holds} {item.codes.key_text()} codes, but the request asks for "
        f"{item.column}, a column of {frame}. {fix}. Store that in `{item.name}`, then call "
        "final_answer."
    )


_NUMBER_WORDS = re.compile(
    r"\b(?:count|counts|how many|number of|percentage|percent|share|mean|average|total|sum)\b",
    re.IGNORECASE,
)
_NUMBER_NOUNS = {
    "count": ("count", "counts", "how many", "number of"),
    "percentage": ("percentage", "percent", "share"),
    "mean": ("mean", "average"),
    "total": ("total", "sum"),
}
_TEXT_DTYPES = ("object", "str", "string", "category")


def text_for_numbers(
    wanted: Iterable[str], rows: Iterable[VarInfo], request: str, stored: Iterable[str]
) -> list[tuple[str, str]]:
    """(result, what the request asks for) for a Series of text where numbers were asked.

    "Count the flights of each airline" answered with the most frequent value per
    group (a copied pattern) gives text, and nothing fails.
    """
    asked = _NUMBER_WORDS.search(request)
    if asked is None:
        return []
    done = set(stored)
    word = asked.group(0).lower()
    noun = next((n for n, ws in _NUMBER_NOUNS.items() if word in ws), word)
    return [
        (row.name, noun)
        for row in rows
        if row.name in wanted
        and row.name in done
        and row.type_name == "Series"
        and row.dtype in _TEXT_DTYPES
    ]


_COUNT_WORDS = re.compile(rf"\b(?:{'|'.join(_NUMBER_NOUNS['count'])})\b", re.IGNORECASE)


def ones_for_counts(
    wanted: Iterable[str], rows: Iterable[VarInfo], request: str, stored: Iterable[str]
) -> list[str]:
    """Results of a count per group whose every value shown is 1: the rows were reduced to
    one per group (`.first()`, `.unique()`) before they were counted."""
    if not _COUNT_WORDS.search(request):
        return []
    done = set(stored)
    found = []
    for row in rows:
        if row.name not in wanted or row.name not in done or row.type_name != "Series":
            continue
        values = row.preview.strip("[]…, ").split(", ")
        if len(values) >= 3 and all(v == "1" for v in values):
            found.append(row.name)
    return found


def ones_note(name: str) -> str:
    return (
        f"Every count shown in `{name}` is 1: the rows were reduced to one per group before "
        "they were counted. Count each group's rows in the full frame (df.groupby('a').size()), "
        f"store that in `{name}`, then call final_answer."
    )


def text_note(item: tuple[str, str]) -> str:
    name, asked = item
    return (
        f"`{name}` holds text values, but the request asks for a {asked}: compute numbers "
        "(rows per group: df.groupby('a').size()). Store them in "
        f"`{name}`, then call final_answer."
    )


# "number of engines" is no type, nor "the frame `flights`": only words that name one.
_TYPE_WORDS = re.compile(
    r"\b(int|integer|float|number(?! of)|string|list|tuple|dict|dictionary|Series|DataFrame)\b"
)
_TYPE_OF_WORD = {"integer": "int", "string": "str", "dictionary": "dict"}
_ARTICLE = {"int": "an int", "float": "a float", "number": "a number", "str": "a string"}


def _type_fits(asked: str, type_name: str) -> bool:
    integer = type_name.startswith(("int", "uint")) or type_name == "integer"
    real = integer or type_name.startswith("float")
    return {
        "int": integer,
        "float": real,
        "number": real,
        "str": type_name in ("str", "str_"),
    }.get(asked, type_name == asked)


def _asked_types(request: str, names: Iterable[str]) -> dict[str, str]:
    """name → the one type the request's sentence about it names ("Store the int in `n`")."""
    out: dict[str, str] = {}
    for sentence in re.split(r"(?<=[.;?!])\s+", request):
        words = {_TYPE_OF_WORD.get(w, w) for w in _TYPE_WORDS.findall(sentence)}
        if len(words) != 1:
            continue
        (asked,) = words
        for name in names:
            if f"`{name}`" in sentence:
                out.setdefault(name, asked)
    return out


def wrong_types(
    wanted: Iterable[str],
    rows: Iterable[VarInfo],
    request: str,
    stored: Iterable[str],
    before: Iterable[str] = (),
) -> list[tuple[str, str, str, str]]:
    """(result, its type, the type the request asks for, its preview) where they differ.

    "Store the int in `n`" answered with `... > 1000` stores a bool, and nothing fails.
    Only results stored this turn that were not there before it (inputs keep their type).
    """
    old, done = set(before), set(stored)
    names = [n for n in wanted if n in done and n not in old]
    asked = _asked_types(request, names)
    return [
        (row.name, row.type_name, asked[row.name], row.preview)
        for row in rows
        if row.name in asked
        and row.kind == "variable"
        and not _type_fits(asked[row.name], row.type_name)
    ]


def type_note(item: tuple[str, str, str, str]) -> str:
    name, got, asked, preview = item
    shown = f" ({preview[:40]})" if preview and got not in ("DataFrame", "Series") else ""
    want = _ARTICLE.get(asked, f"a {asked}")
    fix = ""
    if got in ("bool", "bool_") and asked in ("int", "number", "float"):
        fix = " To count where a condition holds: int((condition).sum())."
    elif got in ("Series", "DataFrame") and asked in ("int", "float", "number", "str"):
        fix = " Reduce it to one value (.sum(), .max(), len(...), .idxmax()) first."
    elif got == "DataFrame" and asked == "Series":
        fix = " Select its one column, or aggregate (.size(), .sum()) to get a Series."
    return (
        f"`{name}` is a {got}{shown}, but the request asks for {want}.{fix} Store {want} in "
        f"`{name}`, then call final_answer."
    )


_PAIR_WORDS = re.compile(r"\b(?:pairs?|combinations?|together)\b", re.IGNORECASE)
_MODE_CALLS = frozenset({"idxmax", "mode", "argmax"})


def separate_modes(code: str, request: str) -> tuple[str, list[str]] | None:
    """(frame, columns) when a request about a pair gets each column's own most frequent
    value, put together: `(f['origin'].value_counts().idxmax(), f['dest'].value_counts()
    .idxmax())` is not the most frequent (origin, dest) pair."""
    if not _PAIR_WORDS.search(request):
        return None
    tree = _tree(code)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Tuple | ast.List) or len(node.elts) < 2:
            continue
        found = [m for m in map(_mode_of_column, node.elts) if m is not None]
        frames = {frame for frame, _ in found}
        columns = [column for _, column in found]
        if len(found) == len(node.elts) and len(frames) == 1 and len(set(columns)) > 1:
            return frames.pop(), columns
    return None


def _mode_of_column(node: ast.AST) -> tuple[str, str] | None:
    """('flights', 'origin') for `flights['origin'].value_counts().idxmax()` or `.mode()[0]`."""
    if not any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _MODE_CALLS
        for n in ast.walk(node)
    ):
        return None
    for n in ast.walk(node):
        if (
            isinstance(n, ast.Subscript)
            and isinstance(n.value, ast.Name)
            and isinstance(n.slice, ast.Constant)
            and isinstance(n.slice.value, str)
        ):
            return n.value.id, n.slice.value
    return None


def pair_note(frame: str, columns: list[str]) -> str:
    listed = ", ".join(repr(c) for c in columns)
    return (
        f"Each column's most frequent value, taken apart, is not the most frequent combination "
        f"({listed}). Count the combinations ({frame}.groupby([{listed}]).size().idxmax()), "
        "store that, then call final_answer."
    )


_LEAVES_OUT = re.compile(
    r"\b(?:leave out|leaving out|skip|skipping|drop|dropping|exclude|excluding|ignore|ignoring"
    r"|without)\b[^.;]*\bmissing\b|\bmissing\b[^.;]*\b(?:left out|skipped|dropped|excluded)\b",
    re.IGNORECASE,
)
_HANDLES_MISSING = re.compile(r"\b(?:dropna|notna|notnull|isna|isnull|skipna|fillna|count)\b")
MISSING_VALUES_NOTE = (
    "The request leaves out rows with missing values, and no code of this turn dropped them: "
    "a comparison is False for NaN and len() or .size() counts NaN rows. If the result counts "
    "or compares such rows, drop them first (df = df.dropna(subset=['x'])) and store the "
    "result again; if not, call final_answer again."
)


def keeps_missing(cells: Iterable[str], request: str) -> bool:
    """The request leaves out missing values ("skip flights whose arr_delay is missing"), no
    cell that ran this turn handles them (dropna, notna, isna, skipna, fillna), and one
    compares or counts rows, where NaN rows change the result (`.mean()` skips them)."""
    cells = list(cells)
    if not cells or not _LEAVES_OUT.search(request):
        return False
    if any(_HANDLES_MISSING.search(code) for code in cells):
        return False
    return any(_compares_or_counts(code) for code in cells)


_COUNTING = frozenset({"len", "size", "value_counts", "shape", "sum"})


def _compares_or_counts(code: str) -> bool:
    tree = _tree(code)
    if tree is None:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            return True
        if isinstance(node, ast.Attribute) and node.attr in _COUNTING:
            return True
        if isinstance(node, ast.Name) and node.id == "len":
            return True
    return False


_ADD_COLUMN = re.compile(
    r"\badd (?:a |the )?(?:new )?(?:column `?(\w+)`?|`(\w+)` column) to `(\w+)`", re.IGNORECASE
)


def columns_not_added(rows: Iterable[VarInfo], request: str) -> list[tuple[str, str]]:
    """(frame, column) for "Add a column `season` to `weather`" when `weather` has none."""
    frames = frame_columns(rows)
    found = []
    for match in _ADD_COLUMN.finditer(request):
        column, frame = match[1] or match[2], match[3]
        if frame in frames and column not in frames[frame]:
            found.append((frame, column))
    return found


def column_note(item: tuple[str, str]) -> str:
    frame, column = item
    return (
        f"The request asks for a column `{column}` in `{frame}`, and `{frame}` has no such "
        f"column yet: add it ({frame}['{column}'] = ...), then call final_answer."
    )


_REDUCERS = frozenset({"sum", "mean", "count", "any", "all"})
EARLY_REDUCE_NOTE = (
    "In `(a) & (b).sum()`, .sum() applies to (b) alone, before the `&`, so the result "
    "mixes a mask with a number. Combine the whole condition first, then reduce: "
    "((a) & (b)).sum(); store that, then call final_answer."
)


def reduced_before_combined(code: str) -> bool:
    """`(a) & (b).sum()`: a comparison reduced before it is combined with another mask."""
    tree = _tree(code)
    if tree is None:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd | ast.BitOr):
            for side in (node.left, node.right):
                if (
                    isinstance(side, ast.Call)
                    and isinstance(side.func, ast.Attribute)
                    and side.func.attr in _REDUCERS
                    and isinstance(side.func.value, ast.Compare)
                ):
                    return True
    return False


def doubt_note(
    wanted: list[str],
    rows: list[VarInfo],
    request: str,
    stored: set[str],
    before: set[str],
    cells: list[str],
) -> str:
    """Why the turn's answer is not given yet, or "".

    *wanted* are the result names the request asks for, *stored* what cells that ran
    without error assigned this turn, *before* the names defined when it began, *cells*
    those cells' code. A missing result is asked about alone; the other doubts together.
    """
    missing = missing_names(wanted, rows, before, stored)
    if missing:
        aliases = {name: stored_as(name, stored, before) for name in missing}
        return missing_note(missing, {k: v for k, v in aliases.items() if v})
    notes = [column_note(c) for c in columns_not_added(rows, request)]
    notes += [type_note(t) for t in wrong_types(wanted, rows, request, stored, before)]
    notes += [codes_note(c) for c in coded_results(wanted, rows, request, stored)]
    notes += [text_note(t) for t in text_for_numbers(wanted, rows, request, stored)]
    notes += [ones_note(n) for n in ones_for_counts(wanted, rows, request, stored)]
    if wanted and keeps_missing(cells, request):
        notes.append(MISSING_VALUES_NOTE)
    if cells and reduced_before_combined(cells[-1]):
        notes.append(EARLY_REDUCE_NOTE)
    pair = separate_modes(cells[-1], request) if cells else None
    if pair:
        notes.append(pair_note(*pair))
    return "\n".join(notes)
