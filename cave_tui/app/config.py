"""Typed settings for `cave`: a TOML file, overridden by `CAVE_*` variables, overridden by flags.

The file is `config.toml` in the user config dir (platformdirs; `CAVE_CONFIG_DIR`
or `CAVE_CONFIG` move it). API keys never live here: litellm reads its usual
environment variables (`OPENAI_API_KEY`, …). A bad value never stops the app:
it is reported in `Config.warnings` and the default is used instead.
Imports only the standard library and platformdirs so `cave --help` stays fast.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from cave_tui.app.settings import (
    Command,
    Declared,
    SettingValue,
    aliases,
    boolean,
    declared_in,
    non_empty_text,
    one_of,
    optional_text,
    seconds,
    setting,
    whole_number_from,
)
from cave_tui.models.base import FIRST_TOKEN_TIMEOUT, STREAM_IDLE_TIMEOUT
from cave_tui.models.routing import CHOICES as MODEL_CLIENTS
from cave_tui.security.policies import POLICIES

APP_NAME = "cave"
APPROVE_MODES = ("auto", "ask")
DEFAULT_THEME = "cave-dark"
DEFAULT_CELL_TIMEOUT = 300.0  # the front ends' limit on one cell, in seconds (0: none)


def config_dir() -> Path:
    """Where config.toml and user themes live (`CAVE_CONFIG_DIR` overrides)."""
    override = os.environ.get("CAVE_CONFIG_DIR")
    if override:
        return Path(override).expanduser()
    from platformdirs import user_config_dir

    return Path(user_config_dir(APP_NAME))


def data_dir() -> Path:
    """Where input history and other app data live (`CAVE_DATA_DIR` overrides)."""
    override = os.environ.get("CAVE_DATA_DIR")
    if override:
        return Path(override).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME))


def config_path() -> Path:
    """The config file: `CAVE_CONFIG` if set, else `config_dir()/config.toml`."""
    override = os.environ.get("CAVE_CONFIG")
    return Path(override).expanduser() if override else config_dir() / "config.toml"


def history_path() -> Path:
    """The input history shared by the app and `cave --plain` (prompt_toolkit's file format)."""
    return data_dir() / "history"


GUARDS = POLICIES  # the security checker's policies: what `--guard` takes
# `cave`, `cave --plain`, `cave run`, `cave mcp`, `cave acp`
_ALL = (Command.APP, Command.RUN, Command.MCP, Command.ACP)


def _approve(name: str, value: object) -> str:
    text = str(value).strip().lower()
    if text not in APPROVE_MODES:
        raise ValueError(f"{name} must be auto or ask, not {value!r}")
    return text


def _policies(name: str, value: object) -> str:
    """The agent's aids: a preset or a spec; UnknownPolicyError (a ValueError) lists them."""
    from cave_tui.agent.policies.model_class import AUTO  # only when one is set
    from cave_tui.agent.policies.presets import policy_names

    text = str(value).strip()
    if text.lower() == AUTO:
        return AUTO
    policy_names(text)
    return text


@dataclass
class Config:
    """Every setting, declared once: the field's name (the TOML key, `CAVE_NAME`), type and
    default, and with `setting(...)` its help, check, flags and the commands taking them.
    `SETTINGS` is this table; the command line, the config file and `/set` are made from it."""

    model: str | None = setting(
        None, optional_text, "litellm model id, or scripted:FILE (a YAML list of replies).",
        flags=("--model", "-m"), commands=(*_ALL, Command.DEMO), live=True,
    )  # fmt: skip
    api_base: str | None = setting(
        None, optional_text, "Base URL of an OpenAI-compatible server.",
        flags=("--api-base",), commands=(*_ALL, Command.DEMO),
    )  # fmt: skip
    model_client: str = setting(  # models/routing.py
        "auto", one_of(*MODEL_CLIENTS),
        "Which library calls the model: auto (a light client for OpenAI-compatible servers "
        "and OpenAI, litellm for other providers), openai or litellm [auto].",
        flags=("--model-client",), commands=(*_ALL, Command.DEMO),
    )  # fmt: skip
    local_model: str | None = setting(  # a GGUF path or hf:OWNER/REPO/FILE
        None, optional_text,
        "Serve this GGUF file (or hf:OWNER/REPO/FILE) with the embedded llama.cpp.",
        flags=("--gguf",), commands=_ALL,
    )  # fmt: skip
    local_threads: int = setting(  # models/local/server.py
        0, whole_number_from(0),
        "Threads the embedded model computes with (0: every core); fewer leave cores to "
        "other work on a shared machine [0].",
        flags=("--local-threads",), commands=_ALL,
    )  # fmt: skip
    kernel: bool = setting(  # the isolated kernel; False: the in-process runtime
        True, boolean,
        "Run code in an isolated Jupyter kernel (the default), or in this process.",
        flags=("--kernel/--in-process", " /--no-kernel"), commands=(*_ALL, Command.REPLAY),
        table="kernel", table_key="enabled",
    )  # fmt: skip
    memory_limit: str = setting(
        "auto", lambda name, value: _memory_limit(value),
        "The runtime's memory limit: auto (half of this machine's memory), off, or a size "
        "like 4G [auto].",
        flags=("--memory-limit",), commands=_ALL,
    )  # fmt: skip
    lazy_above: str = setting(  # dataio.inject.lazy_threshold reads it
        "auto", lambda name, value: _size_setting(name, value),
        "Inject a Parquet or CSV file, folder or glob larger than this as a lazy frame "
        "(--eager loads it whole): auto (the smaller of 2G and half the memory limit), off, "
        "or a size like 500M [auto].",
        flags=("--lazy-above",), commands=_ALL, live=True,
    )  # fmt: skip
    # the kernel under bubblewrap. Left at its default: wherever bubblewrap works, else the
    # kernel runs unsandboxed with a warning (`settle_sandbox`); set, it is required.
    sandbox: bool = setting(
        True, boolean,
        "The kernel in a bubblewrap sandbox, writing only in the working folder: the default "
        "where it works (else a warning). --sandbox requires it (implies --kernel), "
        "--no-sandbox turns it off; `cave sandbox` shows it.",
        flags=("--sandbox/--no-sandbox",),
        commands=(*_ALL, Command.DEMO, Command.REPLAY), table="kernel",
    )  # fmt: skip
    allow_net: bool = setting(
        False, boolean,
        "Let the kernel use the host's network (else its own: sandboxed, or on a root host).",
        flags=("--allow-net/--no-allow-net",), commands=(*_ALL, Command.SANDBOX),
        table="kernel",
    )  # fmt: skip
    mount: list[str] = setting(  # noqa: RUF009 (copied: `setting` makes a default_factory)
        [], lambda name, value: _mounts(value),
        "Show the sandboxed kernel this host folder or file too, at the same path: "
        "read-write, or read-only with :ro; repeatable.",
        flags=("--mount",), commands=_ALL, metavar="PATH[:ro]", table="kernel",
    )  # fmt: skip
    workdir: str | None = setting(  # the folder cave works in; None: the current one
        None, lambda name, value: _workdir(value),
        "Work in DIR as if cave were started there: cells run there, relative paths and "
        "./sessions resolve there [the current folder].",
        flags=("--workdir",), commands=_ALL, table="kernel",
    )  # fmt: skip
    gateway: str | None = setting(  # a Jupyter Kernel/Enterprise Gateway (docs/kernel.md)
        None, lambda name, value: _gateway(value),
        "Run the kernel on this Jupyter Kernel Gateway or Enterprise Gateway (http(s)://"
        "host:port) instead of this machine; no sandbox of this host applies there.",
        flags=("--gateway",), commands=_ALL, metavar="URL", table="kernel",
    )  # fmt: skip
    gateway_token: str | None = setting(
        None, optional_text, "The gateway's auth token (its KG_AUTH_TOKEN / EG_AUTH_TOKEN).",
        flags=("--gateway-token",), commands=_ALL, metavar="T", table="kernel",
    )  # fmt: skip
    guard: str = setting(  # the security checker of the model's cells (was `policy`)
        "standard", one_of(*GUARDS),
        "The security checker of the model's code: trusted, standard or strict [standard] "
        "(--policy: its old name, deprecated).",
        flags=("--guard",), commands=_ALL, old_names=("policy",), live=True,
    )  # fmt: skip
    theme: str = setting(
        DEFAULT_THEME, non_empty_text, "Theme of the app (see /theme).",
        flags=("--theme",), commands=(Command.APP,), live=True,
    )  # fmt: skip
    skills: str | None = setting(
        None, optional_text, "Also load Agent Skills from this directory.",
        flags=("--skills",), commands=(Command.APP,),  # `cave run --skills` is repeatable
    )  # fmt: skip
    approve: str = setting(
        "auto", _approve,
        "auto runs the model's code at once, ask shows Run / Edit / Skip first [auto].",
        flags=("--approve",), commands=(Command.MCP, Command.ACP), live=True,  # the client is asked
    )  # fmt: skip
    max_steps: int = setting(
        10, whole_number_from(1), "Model calls allowed per turn [10].",
        flags=("--max-steps",), commands=_ALL, table="agent", live=True,
    )  # fmt: skip
    policies: str = setting(  # the agent's aids: a preset or a spec (docs/policies.md)
        "auto", _policies,
        "The agent's aids: auto (small or lean, by the model's class), small, lean, guided, "
        "minimal, strict, off, or a spec like small,-look_first [auto].",
        flags=("--policies",), commands=_ALL, table="agent", live=True,
    )  # fmt: skip
    cell_timeout: float = setting(
        DEFAULT_CELL_TIMEOUT, seconds,
        "Stop a cell that runs longer than SECONDS (0: no limit) [300].",
        flags=("--cell-timeout",), commands=_ALL,
    )  # fmt: skip
    first_token_timeout: float = setting(
        FIRST_TOKEN_TIMEOUT, seconds,
        "Give up on a model that sends no reply within SECONDS of the request (0: no limit) [600].",
        flags=("--first-token-timeout",), commands=_ALL,
    )  # fmt: skip
    stream_idle_timeout: float = setting(
        STREAM_IDLE_TIMEOUT, seconds,
        "Give up on a model reply that stops for SECONDS mid-stream (0: no limit) [60].",
        flags=("--stream-idle-timeout",), commands=_ALL,
    )  # fmt: skip
    keymap: dict[str, str] = field(default_factory=dict)  # binding id -> keys ([keymap])
    # Where each value came from ("default", "file", "env", "flag"), and what was wrong.
    sources: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    warnings: list[str] = field(default_factory=list, repr=False, compare=False)

    def source(self, name: str) -> str:
        return self.sources.get(ALIASES.get(name, name), "default")

    @property
    def policy(self) -> str:
        """The old name of `guard` (deprecated)."""
        return self.guard

    @policy.setter
    def policy(self, value: str) -> None:
        self.guard = value

    @property
    def runtime_memory_limit(self) -> int | str | None:
        """`memory_limit` as a runtime takes it: "auto", a size string, or None for none."""
        return None if self.memory_limit == "off" else self.memory_limit

    @property
    def sandbox_asked(self) -> bool:
        """The sandbox was asked for (file, environment or flag), not left at its default:
        it must work, or cave does not start."""
        return self.sandbox and self.source("sandbox") != "default"

    @property
    def uses_kernel(self) -> bool:
        """Code runs in a kernel: asked for, or implied by a sandbox or a gateway asked for."""
        return self.kernel or self.sandbox_asked or self.gateway is not None

    @property
    def mounts(self) -> list[tuple[str, bool]]:
        """`mount` as (absolute path, read-only) pairs, as the runtime takes them."""
        return [parse_mount(spec) for spec in self.mount]

    @property
    def model_timeouts(self) -> dict[str, float]:
        """The stream timeouts as `LiteLLMModel` (and the embedded model) take them."""
        return {
            "first_token_timeout": self.first_token_timeout,
            "stream_idle_timeout": self.stream_idle_timeout,
        }

    @property
    def model_options(self) -> dict[str, float]:
        """What `model_from_spec` takes from the config: the stream timeouts, and the
        embedded model's threads."""
        return {**self.model_timeouts, "local_threads": self.local_threads}

    @property
    def cell_time_limit(self) -> float | None:
        """`cell_timeout` as a runtime takes it: None when there is no limit."""
        return self.cell_timeout or None


TABLE: tuple[Declared, ...] = tuple(declared_in(fields(Config)))
"""The settings, in the order `--help` and `/set` show them."""
SETTINGS = tuple(d.name for d in TABLE)
BY_NAME: dict[str, Declared] = {d.name: d for d in TABLE}
ALIASES = aliases(TABLE)  # every name a setting is known by (old ones too) -> its name
_SECRET_HINTS = ("api_key", "apikey", "secret", "token", "password")


def declared(name: str) -> Declared:
    """The setting called *name* (or an old name of it); ValueError names the known ones."""
    found = BY_NAME.get(ALIASES.get(name, ""))
    if found is None:
        raise ValueError(f"unknown setting {name!r} (known: {', '.join(SETTINGS)})")
    return found


def _coerce(name: str, value: object) -> SettingValue:
    """Check and convert one setting (its name or an old one); ValueError says why."""
    if name not in ALIASES:
        raise ValueError(f"unknown setting {name!r}")
    return declared(name).setting.check(name, value)


_SIZE = re.compile(r"\d+(\.\d+)?\s*[KMGT](I?B)?|\d+\s*B?", re.IGNORECASE)


def _memory_limit(value: Any) -> str:
    """ "auto", "off" or a size such as "4G", "512MiB" or a number of bytes."""
    return _size_setting("memory_limit", value)


def _size_setting(name: str, value: Any) -> str:
    """A size setting: "auto", "off" or a size such as "4G", "512MiB" or a number of bytes."""
    text = str(value).strip()
    if text.lower() in ("auto", "off"):
        return text.lower()
    if text.lower() in ("none", "0"):
        return "off"
    nonzero = any(c in "123456789" for c in text)
    if isinstance(value, bool) or not _SIZE.fullmatch(text) or not nonzero:
        raise ValueError(f"{name} must be auto, off or a size such as 4G, not {value!r}")
    return text


def _gateway(value: Any) -> str | None:
    """An http(s) URL of a Jupyter gateway, or None."""
    text = optional_text("gateway", value)
    if text is not None and not re.match(r"https?://[^/\s]+", text):
        raise ValueError(f"gateway must be an http:// or https:// URL, not {text!r}")
    return text


def _workdir(value: Any) -> str | None:
    """An existing folder, as an absolute path (`~` expanded; relative to the current folder)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError("workdir must be a folder's path")
    text = value.strip()
    if not text:
        return None
    path = Path(text).expanduser().absolute()
    if not path.is_dir():
        what = "is not a folder" if path.exists() else "does not exist"
        raise ValueError(f"workdir {text!r} {what}")
    return str(path)


READ_ONLY = ":ro"  # a mount's suffix: the kernel may read it, not write it
NO_MOUNT = ("/proc", "/dev", "/sys")  # never mounted into the sandbox (nor below them), nor /


def parse_mount(spec: str) -> tuple[str, bool]:
    """`PATH[:ro]` -> (PATH, read-only), as `_mounts` wrote it (absolute, checked)."""
    if spec.endswith(READ_ONLY):
        return spec[: -len(READ_ONLY)], True
    return spec, False


def _mounts(value: Any) -> list[str]:
    """Existing host paths, each `PATH` (read-write) or `PATH:ro`, made absolute (`~`
    expanded). A string (the environment's) holds one or more, split like a shell does."""
    if isinstance(value, str):
        import shlex

        value = shlex.split(value)
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ValueError("mount must be a list of paths, each PATH or PATH:ro")
    out: list[str] = []
    for text in value:
        raw, read_only = parse_mount(text.strip())
        if not raw:
            raise ValueError(f"mount {text!r}: no path")
        path = os.path.normpath(Path(raw).expanduser().absolute())
        if not os.path.exists(path):
            raise ValueError(f"mount {text!r}: {path} does not exist")
        if path == "/" or any(path == top or path.startswith(top + "/") for top in NO_MOUNT):
            raise ValueError(
                f"mount {text!r}: {path} cannot be shown to the sandboxed kernel "
                "(--no-sandbox gives it the whole host)"
            )
        out.append(path + (READ_ONLY if read_only else ""))
    return out


def _read_file(path: Path, warnings: list[str]) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        warnings.append(f"could not read {path}: {exc}")
        return {}
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        warnings.append(f"{path} is not valid TOML ({exc}); using defaults")
        return {}


def load_config(
    flags: Mapping[str, object] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    path: Path | None = None,
) -> Config:
    """Defaults < config file < `CAVE_*` environment < *flags* (setting name -> value, e.g.
    `LaunchOptions.settings`; None values and names that are not settings are ignored).
    A setting's old name is read too, in the file, the environment and *flags*."""
    env = os.environ if environ is None else environ
    config = Config()
    path = path or config_path()
    data = _read_file(path, config.warnings)

    def apply(key: str, value: object, source: str) -> None:
        try:
            setattr(config, ALIASES[key], _coerce(key, value))
            config.sources[ALIASES[key]] = source
        except ValueError as exc:
            config.warnings.append(f"{source} setting ignored: {exc}")

    tables: dict[str, dict[str, str]] = {}
    for d in TABLE:
        if d.setting.table is not None:
            tables.setdefault(d.setting.table, {})[d.setting.table_key or d.name] = d.name
    for table, names in tables.items():
        section = data.get(table)
        if table in SETTINGS and not isinstance(section, dict):
            continue  # `kernel = true`: the setting itself, read below
        section = data.pop(table, None)
        if isinstance(section, dict):
            for key, value in section.items():
                if key in names:
                    apply(names[key], value, "file")
                else:
                    config.warnings.append(f"{path}: unknown [{table}] setting {key!r} ignored")
        elif section is not None:
            config.warnings.append(f"{path}: [{table}] must be a table; ignored")
    for key, value in data.items():
        if key == "keymap":
            if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
                config.keymap = {str(k): v for k, v in value.items()}
                config.sources["keymap"] = "file"
            else:
                config.warnings.append("[keymap] must map binding ids to key strings; ignored")
        elif key in ALIASES:  # a setting (first_token_timeout is no secret)
            apply(key, value, "file")
        elif any(hint in key.lower() for hint in _SECRET_HINTS):
            config.warnings.append(
                f"{path}: {key!r} ignored: API keys are read only from the environment "
                "(e.g. OPENAI_API_KEY), never from the config file"
            )
        else:
            config.warnings.append(f"{path}: unknown setting {key!r} ignored")
    for d in TABLE:
        for name, variable in reversed(list(zip(d.file_keys, d.env, strict=True))):
            value = env.get(variable)  # the current name last, so it wins over an old one
            if value is not None:
                apply(name, value, "env")
    for name, value in (flags or {}).items():
        if value is not None and name in ALIASES:
            apply(name, value, "flag")
    return config


def check_setting(name: str, value: object) -> SettingValue:
    """*value* checked and converted for setting *name*; ValueError says what is wrong."""
    return _coerce(name, value)


def save_setting(name: str, value: object, path: Path | None = None) -> Path:
    """Persist one setting in config.toml, keeping the user's comments and layout (tomlkit).
    A setting of a file table ([kernel], …) already written as a table is written there; an
    old name of the setting, if the file has it, gives way to the current one."""
    import tomlkit

    checked = _coerce(name, value)
    found = declared(name)
    path = path or config_path()
    try:
        doc = tomlkit.parse(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        doc = tomlkit.document()
    for old in found.setting.old_names:
        doc.pop(old, None)
    key, table = found.name, found.setting.table
    target: MutableMapping[str, object] = doc
    if table == "kernel":  # `kernel = true` and [kernel] cannot both be written: it moves
        table_value = doc.get(table)
        if found.name != table or isinstance(table_value, dict):
            if not isinstance(table_value, dict):
                enabled = table_value
                table_value = tomlkit.table()
                if isinstance(enabled, bool):  # `kernel = true` becomes [kernel] enabled = true
                    table_value["enabled"] = enabled
                doc[table] = table_value
            target, key = table_value, found.setting.table_key or found.name
    if checked is None:
        target.pop(key, None)
    else:
        target[key] = checked
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text(tomlkit.dumps(doc), encoding="utf-8")
    tmp.replace(path)
    return path


def describe(config: Config) -> list[tuple[str, str, str]]:
    """(setting, value, source) rows for help screens."""
    return [(d.name, str(getattr(config, d.name)), config.source(d.name)) for d in TABLE]
