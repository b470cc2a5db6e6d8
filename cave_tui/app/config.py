"""Typed settings for `cave`: a TOML file, overridden by `CAVE_*` variables, overridden by flags.

The file is `config.toml` in the user config dir (platformdirs; `CAVE_CONFIG_DIR`
or `CAVE_CONFIG` move it). API keys never live here: litellm reads its usual
environment variables (`OPENAI_API_KEY`, …). A bad value never stops the app:
it is reported in `Config.warnings` and the default is used instead.
Imports only the standard library and platformdirs so `cave --help` stays fast.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from cave_tui.models.base import FIRST_TOKEN_TIMEOUT, STREAM_IDLE_TIMEOUT
from cave_tui.security.policies import POLICIES

APP_NAME = "cave"
APPROVE_MODES = ("auto", "ask")
DEFAULT_THEME = "cave-dark"
DEFAULT_CELL_TIMEOUT = 300.0  # the front ends' limit on one cell, in seconds (0: none)
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


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


@dataclass
class Config:
    """Every setting the front ends read. Field names are the TOML keys."""

    model: str | None = None  # litellm id or scripted:FILE
    api_base: str | None = None
    local_model: str | None = None  # a GGUF path or hf:OWNER/REPO/FILE for the embedded model
    kernel: bool = True  # the isolated kernel; False: the in-process runtime (--in-process)
    memory_limit: str = "auto"  # the runtime's memory limit: "auto", a size like "4G", or "off"
    # the kernel under bubblewrap. Left at its default: wherever bubblewrap works, else the
    # kernel runs unsandboxed with a warning (`settle_sandbox`); set, it is required.
    sandbox: bool = True
    allow_net: bool = False  # a sandboxed kernel keeps the host's network
    mount: list[str] = field(default_factory=list)  # more host folders a sandboxed kernel sees
    workdir: str | None = None  # the folder cave works in (cells, relative paths); None: cwd
    policy: str = "standard"
    theme: str = DEFAULT_THEME
    skills: str | None = None  # an extra skills directory
    approve: str = "auto"  # "auto" runs code at once, "ask" shows Run / Edit / Skip first
    max_steps: int = 10
    policies: str = "guided"  # the agent's aids: a preset or a spec (docs/policies.md)
    cell_timeout: float = DEFAULT_CELL_TIMEOUT  # seconds a cell may run; 0: no limit
    first_token_timeout: float = FIRST_TOKEN_TIMEOUT  # request -> first text, seconds; 0: none
    stream_idle_timeout: float = STREAM_IDLE_TIMEOUT  # between a reply's chunks, seconds; 0: none
    keymap: dict[str, str] = field(default_factory=dict)  # binding id -> keys
    # Where each value came from ("default", "file", "env", "flag"), and what was wrong.
    sources: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    warnings: list[str] = field(default_factory=list, repr=False, compare=False)

    def source(self, name: str) -> str:
        return self.sources.get(name, "default")

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
        """Code runs in a kernel: asked for, or implied by a sandbox asked for."""
        return self.kernel or self.sandbox_asked

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
    def cell_time_limit(self) -> float | None:
        """`cell_timeout` as a runtime takes it: None when there is no limit."""
        return self.cell_timeout or None


SETTINGS = (
    "model",
    "api_base",
    "local_model",
    "kernel",
    "memory_limit",
    "sandbox",
    "allow_net",
    "mount",
    "workdir",
    "policy",
    "theme",
    "skills",
    "approve",
    "max_steps",
    "policies",
    "cell_timeout",
    "first_token_timeout",
    "stream_idle_timeout",
)
AGENT_SETTINGS = ("policies", "max_steps")  # also read from the file's [agent] table
# The file's [kernel] table: its key -> the setting (`kernel = true` at the top level and a
# [kernel] table cannot both be written in TOML, so `enabled` stands for `kernel` there).
KERNEL_TABLE = {
    "enabled": "kernel",
    "sandbox": "sandbox",
    "allow_net": "allow_net",
    "mount": "mount",
    "workdir": "workdir",
}
BOOL_SETTINGS = ("kernel", "sandbox", "allow_net")
_SECRET_HINTS = ("api_key", "apikey", "secret", "token", "password")


def _coerce(name: str, value: Any) -> Any:
    """Check and convert one setting; raises ValueError with a readable reason."""
    if name in ("model", "api_base", "local_model", "skills"):
        if value is None:
            return None
        if not isinstance(value, str):
            raise ValueError(f"{name} must be a string")
        return value.strip() or None
    if name in BOOL_SETTINGS:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise ValueError(f"{name} must be true or false")
    if name == "memory_limit":
        return _memory_limit(value)
    if name == "workdir":
        return _workdir(value)
    if name == "mount":
        return _mounts(value)
    if name == "policy":
        text = str(value).strip().lower()
        if text not in POLICIES:
            raise ValueError(f"policy must be one of {', '.join(POLICIES)}, not {value!r}")
        return text
    if name == "policies":
        from cave_tui.agent.policies.presets import policy_names  # only when one is set

        text = str(value).strip()
        policy_names(text)  # UnknownPolicyError (a ValueError) lists the valid names
        return text
    if name == "approve":
        text = str(value).strip().lower()
        if text not in APPROVE_MODES:
            raise ValueError(f"approve must be auto or ask, not {value!r}")
        return text
    if name == "theme":
        text = str(value).strip()
        if not text:
            raise ValueError("theme must not be empty")
        return text
    if name == "max_steps":
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise ValueError(f"max_steps must be a whole number, not {value!r}") from None
        if number < 1:
            raise ValueError(f"max_steps must be at least 1, not {number}")
        return number
    if name in ("cell_timeout", "first_token_timeout", "stream_idle_timeout"):
        return _seconds(name, value)
    raise ValueError(f"unknown setting {name!r}")


_SIZE = re.compile(r"\d+(\.\d+)?\s*[KMGT](I?B)?|\d+\s*B?", re.IGNORECASE)


def _memory_limit(value: Any) -> str:
    """ "auto", "off" or a size such as "4G", "512MiB" or a number of bytes."""
    text = str(value).strip()
    if text.lower() in ("auto", "off"):
        return text.lower()
    if text.lower() in ("none", "0"):
        return "off"
    nonzero = any(c in "123456789" for c in text)
    if isinstance(value, bool) or not _SIZE.fullmatch(text) or not nonzero:
        raise ValueError(f"memory_limit must be auto, off or a size such as 4G, not {value!r}")
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


def _seconds(name: str, value: Any) -> float:
    """A number of seconds, 0 or more (0 means no limit)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number of seconds, not {value!r}") from None
    if isinstance(value, bool) or not math.isfinite(number) or number < 0:
        raise ValueError(f"{name} must be 0 (no limit) or a positive number of seconds")
    return number


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
    flags: dict[str, Any] | None = None,
    *,
    environ: dict[str, str] | None = None,
    path: Path | None = None,
) -> Config:
    """Defaults < config file < `CAVE_*` environment < flags (None flags are ignored)."""
    env = os.environ if environ is None else environ
    config = Config()
    path = path or config_path()
    data = _read_file(path, config.warnings)

    def apply(name: str, value: Any, source: str) -> None:
        try:
            setattr(config, name, _coerce(name, value))
            config.sources[name] = source
        except ValueError as exc:
            config.warnings.append(f"{source} setting ignored: {exc}")

    tables = {"agent": {name: name for name in AGENT_SETTINGS}, "kernel": KERNEL_TABLE}
    for table, names in tables.items():
        section = data.get(table)
        if table == "kernel" and not isinstance(section, dict):
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
        elif any(hint in key.lower() for hint in _SECRET_HINTS):
            config.warnings.append(
                f"{path}: {key!r} ignored: API keys are read only from the environment "
                "(e.g. OPENAI_API_KEY), never from the config file"
            )
        elif key in SETTINGS:
            apply(key, value, "file")
        else:
            config.warnings.append(f"{path}: unknown setting {key!r} ignored")
    for name in SETTINGS:
        value = env.get(f"CAVE_{name.upper()}")
        if value is not None:
            apply(name, value, "env")
    for name, value in (flags or {}).items():
        if value is not None and name in SETTINGS:
            apply(name, value, "flag")
    return config


def check_setting(name: str, value: Any) -> Any:
    """*value* checked and converted for setting *name*; ValueError says what is wrong."""
    return _coerce(name, value)


def save_setting(name: str, value: Any, path: Path | None = None) -> Path:
    """Persist one setting in config.toml, keeping the user's comments and layout (tomlkit)."""
    import tomlkit

    if name not in SETTINGS:
        raise ValueError(f"unknown setting {name!r}")
    value = _coerce(name, value)
    path = path or config_path()
    try:
        doc = tomlkit.parse(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        doc = tomlkit.document()
    table_key = {setting: key for key, setting in KERNEL_TABLE.items()}.get(name)
    kernel_table = doc.get("kernel")
    if table_key is not None and (name != "kernel" or isinstance(kernel_table, dict)):
        if not isinstance(kernel_table, dict):
            enabled = kernel_table
            kernel_table = tomlkit.table()
            if isinstance(enabled, bool):  # `kernel = true` becomes [kernel] enabled = true
                kernel_table["enabled"] = enabled
            doc["kernel"] = kernel_table
        target, name = kernel_table, table_key  # sandbox and allow_net live in [kernel]
    else:
        target = doc
    if value is None:
        target.pop(name, None)
    else:
        target[name] = value
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text(tomlkit.dumps(doc), encoding="utf-8")
    tmp.replace(path)
    return path


def describe(config: Config) -> list[tuple[str, str, str]]:
    """(setting, value, source) rows for help screens."""
    return [
        (f.name, str(getattr(config, f.name)), config.source(f.name))
        for f in fields(config)
        if f.name in SETTINGS
    ]
