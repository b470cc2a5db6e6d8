"""What will actually run: the cell after IPython's input transformations.

IPython rewrites a cell before Python sees it: `!cmd` becomes `get_ipython().system(...)`,
`%magic`/`%%magic` become magic calls, `x?` becomes a help call, `/f x` becomes `f(x)`,
and, for a one-line cell, automagic turns `ls` or `cat /etc/passwd` (valid Python: a name,
or a division) into a shell alias. `prepare()` runs IPython's own static transformer
(`IPython.core.inputtransformer2.TransformerManager`) and reports every rewrite, and
emulates the one-line automagic step, which depends on the live shell, conservatively.
"""

from __future__ import annotations

import builtins
import keyword
import re
import threading
from dataclasses import dataclass, field
from functools import cache
from typing import Any

# Characters that must be present for a token/line transform to change anything. A cell
# without them goes through the cheap line-based cleanup only (same result, less time).
_SPECIAL = re.compile(r"(?m)^[ \t\f\v]*[!%?/,;]|=\s*[!%]|\?")
_KNOWN_TOKEN_TRANSFORMS = ("MagicAssign", "SystemAssign", "EscapedCommand", "HelpEnd")

_lock = threading.Lock()


@dataclass
class PreparedCell:
    """A cell as IPython will run it, with the map back to the lines the model wrote."""

    raw: str
    source: str  # the text IPython compiles (after its static transforms)
    line_offset: int = 0  # add to a line of `source` to get the line in `raw`
    col_shift: int = 0  # columns removed by IPython's dedent of the whole cell
    rewrites: list[tuple[int, str]] = field(default_factory=list)  # (raw line, what)
    automagic: str | None = None  # what a one-line cell would become, if anything
    error: str | None = None  # IPython could not transform the cell


@cache
def _classic_prompt() -> Any:
    from IPython.core import inputtransformer2

    return getattr(inputtransformer2, "classic_prompt", None)


@cache
def _manager() -> Any:
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager()


# Line magics of IPython 8/9 and ipykernel, and the default shell aliases: a floor that
# holds even if IPython changes how it registers them; `magic_names()` adds what the
# installed IPython declares.
_KNOWN_MAGICS = frozenset(
    {
        "alias", "alias_magic", "autoawait", "autocall", "automagic", "bookmark", "cd",
        "code_wrap", "colors", "conda", "config", "debug", "dhist", "dirs", "doctest_mode",
        "edit", "env", "gui", "history", "killbgscripts", "load", "load_ext", "loadpy",
        "logoff", "logon", "logstart", "logstate", "logstop", "lsmagic", "macro", "magic",
        "mamba", "matplotlib", "micromamba", "notebook", "page", "pastebin", "pdb", "pdef",
        "pdoc", "pfile", "pinfo", "pinfo2", "pip", "popd", "pprint", "precision", "prun",
        "psearch", "psource", "pushd", "pwd", "pycat", "pylab", "quickref", "recall",
        "rehashx", "reload_ext", "rerun", "reset", "reset_selective", "run", "save", "sc",
        "set_env", "sx", "system", "tb", "time", "timeit", "unalias", "unload_ext", "uv",
        "who", "who_ls", "whos", "xdel", "xmode", "mkdir", "rmdir", "mv", "rm", "cp", "cat",
        "ls", "ll", "lf", "lk", "ldir", "lx", "clear", "less", "more", "man", "autosave",
        "connect_info", "qtconsole", "subshell", "autoreload", "aimport", "store", "sql", "R",
        "bash", "sh", "script",
    }
)  # fmt: skip


@cache
def magic_names() -> frozenset[str]:
    """Line magics and aliases a default IPython shell or kernel knows (for automagic)."""
    names = set(_KNOWN_MAGICS)
    try:  # IPython >= 9 declares its magics in a static table (lazy registration)
        from IPython.core.magics._table import BUILTIN_LAZY_MAGICS

        names.update(BUILTIN_LAZY_MAGICS.get("line", {}))
    except ImportError:  # older IPython: read the Magics classes themselves
        import IPython.core.magics as magics_pkg
        from IPython.core.magic import Magics

        for attr in dir(magics_pkg):
            value = getattr(magics_pkg, attr, None)
            if isinstance(value, type) and issubclass(value, Magics):
                names.update(getattr(value, "magics", {}).get("line", ()))
    try:
        from IPython.core.alias import default_aliases

        names.update(alias for alias, _cmd in default_aliases())
    except ImportError:
        pass
    return frozenset(names)


def _describe(line: str) -> str:
    text = line.strip()
    short = text if len(text) <= 60 else text[:57] + "…"
    if text.startswith("%%"):
        return f"IPython cell magic {short!r}"
    if text.startswith("!"):
        return f"shell escape {short!r}"
    if text.startswith("%"):
        return f"IPython magic {short!r}"
    if text.startswith(("/", ",", ";")):
        return f"IPython autocall escape {short!r}"
    if re.search(r"=\s*!", text):
        return f"shell escape in an assignment {short!r}"
    if re.search(r"=\s*%", text):
        return f"IPython magic in an assignment {short!r}"
    if text.endswith("?"):
        return f"IPython help request {short!r}"
    return f"IPython rewrites this line ({short!r})"


def _automagic(line: str) -> str | None:
    """What IPython's prefilter would turn a one-line cell into, if it is a magic/alias.

    Mirrors `IPython.core.prefilter` (AssignmentChecker, then AutoMagicChecker) without
    the live namespace: a name the user bound would shadow the magic, so this errs on the
    side of reporting it.
    """
    from IPython.core.splitinput import LineInfo

    if not line.strip():
        return None
    info = LineInfo(line)
    if info.esc or not info.ifun:
        return None
    if info.the_rest and info.the_rest[0] in "=,":
        return None  # `ls = 1`: plain Python assignment
    head = info.ifun.split(".", 1)[0]
    if info.ifun not in magic_names():
        return None
    if keyword.iskeyword(head) or hasattr(builtins, head):
        return None  # builtins and keywords shadow magics
    return f"IPython would run {line.strip()!r} as the %{info.ifun} magic/shell alias"


def prepare(code: str) -> PreparedCell:
    """Transform *code* as IPython would and record what IPython rewrote."""
    manager = _manager()
    text = code if code.endswith("\n") else code + "\n"
    raw_lines = text.splitlines(keepends=True)
    lead = 0
    for line in raw_lines:
        if line and not line.isspace():
            break
        lead += 1
    try:
        with _lock:
            lines = list(raw_lines)
            for transform in manager.cleanup_transforms:
                if transform is _classic_prompt() and ">>>" not in text:
                    continue  # it only acts on cells with a `>>>` line; skip its slow scan
                lines = transform(lines)
            baseline = "".join(lines)
            known = [t.__name__ for t in manager.token_transformers] == list(
                _KNOWN_TOKEN_TRANSFORMS
            ) and [getattr(t, "__name__", "") for t in manager.line_transforms] == ["cell_magic"]
            if known and not _SPECIAL.search(baseline):
                source = baseline
            else:
                for transform in manager.line_transforms:
                    lines = transform(lines)
                source = "".join(manager.do_token_transforms(lines))
    except Exception as exc:  # IPython's transformer failed: the cell cannot run as given
        return PreparedCell(raw=code, source=code, error=f"{type(exc).__name__}: {exc}")
    first_raw = raw_lines[lead] if lead < len(raw_lines) else ""
    first_new = baseline.splitlines()[0] if baseline.strip() else ""
    col_shift = max(
        (len(first_raw) - len(first_raw.lstrip())) - (len(first_new) - len(first_new.lstrip())),
        0,
    )
    prepared = PreparedCell(raw=code, source=source, line_offset=lead, col_shift=col_shift)
    if source != baseline:
        before = baseline.splitlines()
        after = source.splitlines()
        if len(before) == len(after):
            for index, (old, new) in enumerate(zip(before, after, strict=True)):
                if old != new:
                    prepared.rewrites.append((index + 1 + lead, _describe(old)))
        if not prepared.rewrites:
            prepared.rewrites.append((1 + lead, _describe(before[0] if before else "")))
    elif len(source.splitlines()) == 1:
        prepared.automagic = _automagic(source.rstrip("\n"))
    return prepared
