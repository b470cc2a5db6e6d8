"""Self-contained code that redoes a session's injections and loads in an exported notebook.

The code needs only the standard library, pandas, pyarrow and numpy (dill for a dill
file, the data set's package for a `pkg:` injection), never cave itself, so the notebook
runs wherever those are installed. Pickled data is unpickled only where the session
trusted it, and only after its sha256 matches the recording.
"""

from __future__ import annotations

from typing import Any

from cave_tui.agent.final_answer import FINAL_NAME

# `final_answer` is the agent's tool: defined in the notebook so its cells run. The answer
# is in the Markdown cell after the cell (the session's output does not hold it either).
FINAL_ANSWER_CODE = f'''\
def {FINAL_NAME}(answer):
    """cave's agent ended its turn here; its answer is in the Markdown cell below."""
    return None'''
FINAL_ANSWER_NOTE = (
    "*`final_answer(...)` is how cave's agent ends a turn; this stub lets its cells run "
    "(each answer is in the text after its cell).*"
)

_PD = "import pandas as pd"
_NP = "import numpy as np"


def _text_open(path: str, encoding: str | None, mode: str = "r") -> str:
    """Source opening *path* as text (gzip when it ends with .gz)."""
    enc = f", encoding={encoding!r}" if encoding else ""
    if path.lower().endswith(".gz"):
        return f"gzip.open({path!r}, {mode + 't'!r}{enc})"
    return f"open({path!r}{enc})"


def _json_bytes(path: str) -> str:
    opener = "gzip.open" if path.lower().endswith(".gz") else "open"
    return f"{opener}({path!r}, 'rb').read()"


def _file_loader(name: str, fmt: str, path: str, source: dict[str, Any]) -> list[str]:
    """Lines binding *name* to the file at *path*, read the way cave read it."""
    encoding = source.get("encoding") or None
    enc = f", encoding={encoding!r}" if encoding else ""
    gz = ["import gzip"] if path.lower().endswith(".gz") else []
    trusted = bool(source.get("trusted"))
    if fmt == "parquet":
        return [_PD, f"{name} = pd.read_parquet({path!r})"]
    if fmt == "feather":
        return [_PD, f"{name} = pd.read_feather({path!r})"]
    if fmt in ("csv", "tsv"):
        sep = source.get("sep") or ("\t" if fmt == "tsv" else ",")
        options = f", sep={sep!r}" if sep != "," else ""
        if source.get("decimal", ".") != ".":
            options += f", decimal={source['decimal']!r}"
        if source.get("thousands"):
            options += f", thousands={source['thousands']!r}"
        return [_PD, f"{name} = pd.read_csv({path!r}{options}{enc})"]
    if fmt == "json":
        data = _json_bytes(path) + (f".decode({encoding!r})" if encoding else "")
        return ["import json", *gz, f"{name} = json.loads({data})"]
    if fmt == "jsonl":
        return [
            "import json",
            *gz,
            _PD,
            f"with {_text_open(path, encoding)} as _f:",
            "    _rows = [json.loads(line) for line in _f if line.strip()]",
            f"{name} = (pd.DataFrame.from_records(_rows)",
            f"{' ' * (len(name) + 4)}if _rows and all(isinstance(r, dict) for r in _rows) "
            "else _rows)",
            "del _f, _rows",
        ]
    if fmt == "npy":
        return [_NP, f"{name} = np.load({path!r}, allow_pickle={trusted})"]
    if fmt == "npz":
        return [
            _NP,
            f"with np.load({path!r}, allow_pickle={trusted}) as _z:",
            f"    {name} = {{key: _z[key] for key in _z.files}}",
            "del _z",
        ]
    if fmt in ("excel", "xls"):
        if source.get("sheet"):
            return [_PD, f"{name} = pd.read_excel({path!r}, sheet_name={source['sheet']!r})"]
        return [
            _PD,
            f"_sheets = pd.read_excel({path!r}, sheet_name=None)",
            f"{name} = next(iter(_sheets.values())) if len(_sheets) == 1 else _sheets",
            "del _sheets",
        ]
    if fmt in ("pickle", "dill"):
        return _unpickle(name, fmt, path, str(source.get("sha256") or ""))
    return [f"raise RuntimeError({f'cannot load {path}: unknown format {fmt!r}'!r})"]


def _unpickle(name: str, fmt: str, path: str, sha256: str) -> list[str]:
    """Unpickle *path* (the session trusted it) once its bytes match the recorded sha256."""
    module = "dill" if fmt == "dill" else "pickle"
    lines = ["import hashlib", f"import {module}", f"_data = open({path!r}, 'rb').read()"]
    if sha256:
        lines += [
            f"if hashlib.sha256(_data).hexdigest() != {sha256!r}:",
            f"    raise RuntimeError({f'{path} changed since the session; not unpickled'!r})",
        ]
    else:
        lines += [
            f"raise RuntimeError({f'{path}: no sha256 was recorded; not unpickled'!r})",
        ]
    return [*lines, f"{name} = {module}.loads(_data)", "del _data"]


# Restores a cave dump with no cave: checks the manifest against the recorded sha256, then
# every name, path and file hash, before any file is read; pickles only when TRUSTED. The
# definitions of a version 2 dump (functions and classes kept as source) run last, in order.
_RESTORE_DUMP = '''\
import hashlib, importlib, json, keyword, pathlib


def _cave_name(dump, name):
    if not isinstance(name, str) or not name.isidentifier() or name.startswith("_") or (
        keyword.iskeyword(name)
    ):
        raise RuntimeError(f"{dump}: {name!r} is not a name to restore")
    return name


def _cave_restore(dump, manifest_sha256, trusted, into):
    """Bind the variables, modules and definitions of the cave dump *dump* in *into*,
    everything checked before anything is read."""
    raw = (dump / "manifest.json").read_bytes()
    if manifest_sha256 and hashlib.sha256(raw).hexdigest() != manifest_sha256:
        raise RuntimeError(f"{dump} changed since the session loaded it (manifest sha256)")
    manifest = json.loads(raw)
    version = manifest.get("version")
    if manifest.get("format") != "cave-dump" or version not in (1, 2):
        raise RuntimeError(f"{dump}: not a cave dump this notebook reads (version {version!r})")
    definitions = []
    for entry in manifest.get("definitions", []):  # version 2: functions and classes as source
        if not isinstance(entry.get("source"), str):
            raise RuntimeError(f"{dump}: the definition of {entry.get('name')!r} has no source")
        definitions.append((_cave_name(dump, entry.get("name")), entry["source"]))
    root = dump.resolve()
    checked = []
    for entry in manifest.get("variables", []):
        name, fmt = _cave_name(dump, entry["name"]), entry["format"]
        path = (dump / entry["file"]).resolve()
        if not path.is_relative_to(root) or not path.is_file():
            raise RuntimeError(f"{dump}: {entry['file']!r} is not a file in the dump")
        if fmt in ("pickle", "dill") and not trusted:
            raise RuntimeError(f"{dump}: {name} is pickled and the session did not trust it")
        data = path.read_bytes() if fmt in ("pickle", "dill") else None
        digest = hashlib.sha256()
        if data is not None:
            digest.update(data)
        else:
            with open(path, "rb") as f:
                while block := f.read(1 << 20):
                    digest.update(block)
        if digest.hexdigest() != entry.get("sha256"):
            raise RuntimeError(f"{dump}: {entry['file']} does not match its sha256")
        checked.append((name, fmt, path, data, entry.get("restore") or {}))
    values = {}
    for module in manifest.get("modules", []):
        name, target = module["name"], module["module"]
        if name.isidentifier() and all(part.isidentifier() for part in target.split(".")):
            values[name] = importlib.import_module(target)
    for name, fmt, path, data, restore in checked:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            table = pq.read_table(path)
            value = table if restore.get("as") == "arrow" else table.to_pandas()
            if restore.get("as") == "series":
                value = value.iloc[:, 0]
                value.name = restore.get("name")
        elif fmt == "npy":
            import numpy as np

            value = np.load(path, allow_pickle=trusted)
        elif fmt == "json":
            value = json.loads(path.read_bytes())
        elif fmt in ("pickle", "dill"):
            value = importlib.import_module(fmt).loads(data)
        else:
            raise RuntimeError(f"{dump}: {name} is stored as {fmt!r}, unknown to this notebook")
        values[name] = value
    into.update(values)
    for name, source in definitions:  # after the values, in order: they may use them
        try:
            exec(compile(source, f"<{dump.name}: {name}>", "exec"), into)
        except Exception as exc:
            print(f"{name} not restored: running its definition again failed: {exc!r}")

'''


def load_code(path: str, manifest_sha256: str | None, trusted: bool) -> str:
    """The cell restoring the dump at *path* as the session loaded it."""
    return (
        _RESTORE_DUMP + f"\n_cave_restore(pathlib.Path({path!r}), {manifest_sha256!r}, "
        f"trusted={trusted}, into=globals())\ndel _cave_restore, _cave_name"
    )


def setup_code(record: dict[str, Any]) -> tuple[str, str]:
    """(Markdown note, code) redoing one recorded injection or load."""
    if record.get("type") == "load":
        path = str(record.get("path"))
        trusted = record.get("trusted") is True
        note = f"*Namespace loaded from the dump `{path}`"
        note += " (its pickles trusted, as in the session).*" if trusted else ".*"
        return note, load_code(path, record.get("manifest_sha256"), trusted)
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
    fmt = str(source.get("format", ""))
    path = str(source.get("path", ""))
    code = "\n".join(_imports_first(_file_loader(name, fmt, path, source)))
    sha = str(source.get("sha256") or "")
    encoding = f", {source['encoding']}" if source.get("encoding") else ""
    return f"*`{name}` loaded from `{path}` ({fmt}{encoding}, sha256 `{sha[:12]}…`).*", code


def _imports_first(lines: list[str]) -> list[str]:
    """The import lines first (each once), then the rest in order."""
    imports = dict.fromkeys(line for line in lines if line.startswith("import "))
    return [*imports, *(line for line in lines if not line.startswith("import "))]
