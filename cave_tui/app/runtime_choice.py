"""Which runtime the app builds: the security checker for a policy, and the kernel or the
in-process runtime as the config asks (`config_runtime`). Never imports Textual."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from cave_tui.app.config import POLICIES, Config

if TYPE_CHECKING:
    from cave_tui.runtime.base import Runtime, SecurityCheckerLike
    from cave_tui.runtime.kernel.gateway import GatewaySpec


def make_checker(policy: str, *, sandboxed: bool = False) -> SecurityCheckerLike | None:
    """The security checker for *policy* (None for trusted, or when the checker is absent);
    *sandboxed*: for a sandboxed kernel, where the sandbox is the boundary (docs/security.md)."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}: use one of {', '.join(POLICIES)}")
    if policy == "trusted":
        return None
    try:
        from cave_tui.security import SecurityChecker
    except ImportError:
        return None
    return SecurityChecker.for_policy(policy, sandboxed=sandboxed)


def enter_workdir(config: Config) -> None:
    """Work in `config.workdir` when it is set, as if cave had been started there: cells run
    there (in process or in the kernel) and relative paths resolve there (/inject, /retrieve,
    --load, ./sessions). Raises OSError when the folder cannot be entered."""
    if config.workdir is not None:
        os.chdir(config.workdir)


def make_runtime(
    kernel: bool,
    policy: str,
    cell_timeout: float | None = None,
    memory_limit: int | str | None = "auto",
    *,
    sandbox: bool = False,
    allow_net: bool = False,
    mounts: list[tuple[str, bool]] | None = None,
    gateway: GatewaySpec | None = None,
) -> Runtime:
    """The isolated kernel runtime (`kernel=True`, the app's default; `sandbox=True` implies
    it: the kernel under bubblewrap, with the host's network only with `allow_net` and the
    host paths in *mounts* besides its working folder) or the
    in-process IPython runtime. A cell runs at most *cell_timeout* seconds (None: no limit);
    the runtime holds at most *memory_limit* ("auto": a share of this machine's memory; None:
    no limit). With *gateway*, the kernel is one that Jupyter gateway starts (its machine
    sets its limits). Raises SandboxUnavailable when the sandbox cannot be had here."""
    # Only a kernel certain to be sandboxed gets the lighter guard.
    checker = make_checker(policy, sandboxed=sandbox is True)
    if gateway is not None:
        from cave_tui.runtime import IPyKernelRuntime

        return IPyKernelRuntime(
            security_checker=checker, cell_timeout=cell_timeout, sandbox=sandbox, gateway=gateway
        )
    if kernel or sandbox:
        from cave_tui.runtime import IPyKernelRuntime

        # Cells run in the folder cave works in (where it was started, or --workdir: see
        # `enter_workdir`), as in process, whatever the host's user and with or without the
        # sandbox; the kernel then runs as the host's user (docs/kernel.md, "Working folder").
        return IPyKernelRuntime(
            security_checker=checker,
            cell_timeout=cell_timeout,
            memory_limit=memory_limit,
            cwd=os.getcwd(),
            sandbox=sandbox,
            allow_net=allow_net,
            mounts=mounts or (),
        )
    from cave_tui.runtime.ipython import IPythonRuntime

    return IPythonRuntime(
        security_checker=checker, cell_timeout=cell_timeout, memory_limit=memory_limit
    )


def config_runtime(config: Config) -> Runtime:
    """A fresh runtime as *config* asks for it (kernel or in process, sandbox, limits,
    policy); a sandbox left at its default is settled first (`settle_sandbox`)."""
    from cave_tui.app.sandbox_report import settle_sandbox

    settle_sandbox(config)  # said by `AppServices`, which settles it first
    return make_runtime(
        config.uses_kernel,
        config.policy,
        config.cell_time_limit,
        config.runtime_memory_limit,
        sandbox=config.sandbox,
        allow_net=config.allow_net,
        mounts=config.mounts,
        gateway=gateway_spec(config),
    )


def gateway_spec(config: Config) -> GatewaySpec | None:
    """The gateway `--gateway` / `--gateway-token` name (None: a kernel on this host)."""
    if config.gateway is None:
        return None
    from cave_tui.runtime.kernel.gateway import GatewaySpec  # with jupyter_client: only then

    return GatewaySpec(config.gateway, config.gateway_token)
