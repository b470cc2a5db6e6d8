"""The runtime a replay runs in: the one the session ran in, as its meta records it.

A session's meta says its runtime (`kernel`, `sandbox`, the `runtime` label of older
sessions), the security policy it started with and its working folder (`cwd`). Replay
runs there too, so figures, relative reads and refusals come out as recorded; the
command line's `--kernel/--in-process` and `--sandbox/--no-sandbox` override the runtime.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cave_tui.app.config import POLICIES, load_config
from cave_tui.app.settings import SettingValue

if TYPE_CHECKING:
    from cave_tui.runtime.base import Runtime

KERNEL_LABEL = "kernel"  # the label of a kernel runtime starts so ("kernel (sandbox)")
SANDBOX_LABEL = "(sandbox)"


class ReplayRuntimeError(ValueError):
    """The session's runtime cannot be had here (the sandbox it ran in is unavailable)."""


@dataclass(frozen=True)
class SessionRuntime:
    """What the session ran in, read from its meta."""

    kernel: bool
    sandbox: bool
    policy: str
    workdir: Path | None  # None: not recorded

    @classmethod
    def from_meta(cls, meta: Mapping[str, object]) -> SessionRuntime:
        """From the meta; a session recorded before `kernel`/`sandbox` were, by its label."""
        label = str(meta.get("runtime") or "")
        kernel = meta.get("kernel")
        sandbox = meta.get("sandbox")
        policy = meta.get("policy")
        cwd = meta.get("cwd")
        return cls(
            kernel=kernel if isinstance(kernel, bool) else label.startswith(KERNEL_LABEL),
            sandbox=sandbox if isinstance(sandbox, bool) else SANDBOX_LABEL in label,
            # A policy of the user's own ("custom") cannot be rebuilt: nothing is refused.
            policy=policy if isinstance(policy, str) and policy in POLICIES else "trusted",
            workdir=Path(cwd) if isinstance(cwd, str) and cwd else None,
        )

    @property
    def label(self) -> str:
        if not self.kernel:
            return "in process"
        return "a sandboxed kernel" if self.sandbox else "a kernel"


def replay_flags(
    meta: Mapping[str, object], *, kernel: bool | None = None, sandbox: bool | None = None
) -> tuple[dict[str, SettingValue], list[str]]:
    """The settings (as flags, for `load_config`) to replay the session of *meta* with: its
    runtime, policy and working folder; *kernel*/*sandbox* (the command line's, None: not
    given) win over the session's. A working folder that is gone is a notice (relative paths
    then resolve here)."""
    ran = SessionRuntime.from_meta(meta)
    use_kernel = ran.kernel if kernel is None else kernel
    use_sandbox = (ran.sandbox and use_kernel) if sandbox is None else sandbox
    flags: dict[str, SettingValue] = {
        "kernel": use_kernel,
        "sandbox": use_sandbox,
        "guard": ran.policy,
    }
    notices: list[str] = []
    if ran.workdir is not None and ran.workdir.is_dir():
        flags["workdir"] = str(ran.workdir)
    elif ran.workdir is not None:
        notices.append(
            f"the session's working folder {ran.workdir} is gone: replaying in "
            f"{Path.cwd()}, where relative paths may name other files"
        )
    return flags, notices


def replay_runtime(
    meta: Mapping[str, object], *, kernel: bool | None = None, sandbox: bool | None = None
) -> tuple[Runtime, list[str]]:
    """A fresh runtime to replay the session of *meta* in (see `replay_flags`), built in
    the session's working folder (entered: the process works there from now on), and the
    notices to show. Raises ReplayRuntimeError when its sandbox cannot be had here, and
    OSError when the working folder cannot be entered."""
    from cave_tui.app.runtime_choice import config_runtime, enter_workdir
    from cave_tui.app.sandbox_report import sandbox_problem

    flags, notices = replay_flags(meta, kernel=kernel, sandbox=sandbox)
    config = load_config(flags)
    enter_workdir(config)
    problem = sandbox_problem(config)
    if problem is not None:
        raise ReplayRuntimeError(
            f"{problem} (the session ran in a sandboxed kernel; --no-sandbox replays it "
            "unsandboxed)"
        )
    return config_runtime(config), notices
