"""What the app says about its runtime: labels for status lines, the sandbox banner and the
notice on where the model's code runs. Reads only the capabilities `Runtime` declares
(`isolated`, `sandbox`, `private_network`, `workdir`, `memory_limit`). Never imports Textual."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cave_tui.app.config import Config

if TYPE_CHECKING:
    from cave_tui.runtime.base import Runtime


@dataclass
class RuntimeReport:
    """Sentences on *runtime* (None: not built yet, the config says what it will be)."""

    config: Config
    runtime: Runtime | None
    sandbox_unavailable: bool = False  # the default sandbox could not work here (said)

    @property
    def label(self) -> str:
        if self.runtime is None:
            if self.config.gateway is not None:
                return "kernel (gateway)"
            return "kernel" if self.config.uses_kernel else "ipython"
        return self.runtime.label

    @property
    def _remote(self) -> str | None:
        """The gateway the kernel runs on (None: this host)."""
        if self.runtime is None:
            return self.config.gateway
        return self.runtime.remote

    @property
    def _sandbox_reach(self) -> str:
        """The sandboxed kernel's working folder, and the mounts it sees besides."""
        folder = (self.runtime.workdir if self.runtime is not None else None) or os.getcwd()
        mounts = self.config.mounts
        if not mounts:
            return folder
        shown = ", ".join(f"{path}{' (read-only)' if ro else ''}" for path, ro in mounts)
        return f"{folder} (and sees {shown})"

    @property
    def sandbox_banner(self) -> str | None:
        """One line for a start banner on the kernel's sandbox (None in process)."""
        runtime = self.runtime
        if runtime is None or not runtime.isolated:
            return None
        if runtime.remote is not None:
            return (
                f"the kernel runs on the Jupyter gateway at {runtime.remote}: "
                "this host's sandbox does not apply there"
            )
        if runtime.sandbox:
            return f"the kernel is sandboxed (bubblewrap): it writes only in {self._sandbox_reach}"
        return f"the kernel is not sandboxed: it can reach your files{self._unsandboxed_net}"

    @property
    def _unsandboxed_net(self) -> str:
        """What an unsandboxed kernel's network is, as the end of a sentence."""
        if self.runtime is not None and self.runtime.private_network:
            return " but only its own loopback network"
        return " and the network"

    @property
    def _unsandboxed_fix(self) -> str:
        """How to wall an unsandboxed kernel in, for the notice."""
        if self.sandbox_unavailable:
            return "the sandbox cannot work here: see the warning above"
        return "without --no-sandbox the sandbox walls it in"

    @property
    def boundary_notice(self) -> str:
        """One line on where the model's code runs and what that protects."""
        from cave_tui.runtime.memory import format_bytes

        runtime = self.runtime
        remote = self._remote
        if remote is not None:
            return (
                f"Code runs in a kernel the Jupyter gateway at {remote} started: if it dies or "
                "the gateway culls it, the app stays and the namespace is restored. This host's "
                "sandbox (bubblewrap) and memory limit do not apply there: the gateway's "
                "machine decides what the code may reach."
            )
        isolated = runtime.isolated if runtime is not None else None
        limit = runtime.memory_limit if runtime is not None else None
        if isolated or (isolated is None and self.config.uses_kernel):
            held = f", at most {format_bytes(limit)} of memory" if limit else ""
            sandboxed = runtime.sandbox if runtime is not None else self.config.sandbox
            walls = (
                f" It is sandboxed (bubblewrap): it writes only in {self._sandbox_reach}, with "
                "no access to your other files, your secrets or other kernels"
                + ("." if self.config.allow_net else ", and no network.")
                if sandboxed
                else f" Unsandboxed, it can still reach your files{self._unsandboxed_net} "
                f"({self._unsandboxed_fix})."
            )
            return (
                f"Code runs in an isolated kernel{held}: if it crashes or runs out of memory "
                f"the app stays and the namespace is restored.{walls}"
            )
        guard = (
            f"a watchdog stops a cell past {format_bytes(limit)}, but one C call (a big merge) "
            "that exhausts memory, or a crash, takes the app with it"
            if limit
            else "a cell that exhausts memory or crashes takes the app with it"
        )
        return (
            f"Code runs inside this process (--in-process): {guard}. Drop --in-process to "
            "use the isolated kernel."
        )
