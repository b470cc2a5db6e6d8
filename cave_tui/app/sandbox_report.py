"""What the front ends say about the kernel sandbox: whether it can run here, and the exact
bubblewrap command a sandboxed kernel starts under (`cave sandbox`)."""

from __future__ import annotations

import os

from cave_tui.app.config import Config

EXAMPLE_DIR = "/tmp/cave-kernel-XXXXXXXX"  # stands for a kernel's private directory


def sandbox_problem(config: Config) -> str | None:
    """Why the sandbox asked for (`config.sandbox_asked`) cannot be honoured here (one
    line), or None when it can (or was not asked for: see `settle_sandbox`). Checked before
    anything starts: never an unsandboxed kernel in its place."""
    if not config.sandbox_asked:
        return None
    if config.gateway is not None:
        return (
            f"--sandbox cannot apply to a kernel the Jupyter gateway at {config.gateway} "
            "starts on its own machine; drop --sandbox (or --gateway)"
        )
    return _why_not(config)


def settle_sandbox(config: Config) -> str | None:
    """Decide the sandbox left at its default: kept where it works (bubblewrap and user
    namespaces, probed once), else turned off. Returns the one-line warning to show then
    (the reason and the fix), None otherwise; an in-process runtime has nothing to sandbox."""
    if not config.sandbox or config.sandbox_asked:
        return None
    if config.gateway is not None:  # the kernel runs on the gateway's machine
        config.sandbox = False
        return None
    why = _why_not(config) if config.kernel else None
    if not config.kernel or why is not None:
        config.sandbox = False
    if why is None:
        return None
    return f"{why}; the kernel runs unsandboxed (--no-sandbox: on purpose, without this warning)"


def _why_not(config: Config) -> str | None:
    from cave_tui.runtime.kernel import limits
    from cave_tui.runtime.kernel.errors import SandboxUnavailable
    from cave_tui.runtime.kernel.sandbox import check_mounts, check_workdir, require_bwrap

    try:
        require_bwrap(limits.resolve_user("auto", private_folder=False))
        check_workdir(os.getcwd())  # cells run where cave works
        check_mounts(config.mounts)
    except SandboxUnavailable as exc:
        return str(exc)
    return None


def sandbox_report(
    *, allow_net: bool = False, show: bool = True, mounts: list[tuple[str, bool]] | None = None
) -> tuple[bool, str]:
    """(usable, text): one status line, then (with *show*) the bwrap command line of a
    kernel working in this folder (a stand-in, said, when it cannot be sandboxed here), its
    private directory shown as EXAMPLE_DIR."""
    from cave_tui.runtime.kernel import limits, seccomp
    from cave_tui.runtime.kernel.errors import SandboxUnavailable
    from cave_tui.runtime.kernel.install import kernel_argv
    from cave_tui.runtime.kernel.sandbox import (
        bwrap_argv,
        check_workdir,
        describe,
        kernel_plan,
        new_uid,
        require_bwrap,
    )

    user = limits.resolve_user("auto", private_folder=False)  # the app's: it shares its folder
    try:
        require_bwrap(user)
    except SandboxUnavailable as exc:
        return False, f"cave: {exc}"
    who = f"as {user.name!r} outside" if user is not None else "as your own user outside"
    net = "the host's network" if allow_net else "no network (its own loopback only)"
    status = (
        f"sandbox: available (bubblewrap; the kernel runs {who}, with a uid of its own "
        f"inside its user namespace, and {net})"
    )
    status += f"\n{unsandboxed_network(allow_net)}"
    if not show:
        return True, status
    env = limits.kernel_environment(
        home=os.path.join(EXAMPLE_DIR, "home"),
        tmp=os.path.join(EXAMPLE_DIR, "tmp"),
        user=user.name if user else None,
    )
    conn = os.path.join(EXAMPLE_DIR, "conn", "kernel-1.json")
    work = os.getcwd()  # where cells run: the folder cave works in
    try:
        check_workdir(work)
    except SandboxUnavailable as exc:  # usable, but not here: shown with a stand-in folder
        status += f"\nnot in this folder: {exc}"
        work = os.path.join(EXAMPLE_DIR, "work")
    ram_half = limits.half_of_ram()  # the default memory limit; /tmp and /dev/shm get half
    plan = kernel_plan(
        EXAMPLE_DIR,
        work,
        conn,
        env,
        user=user,
        uid=new_uid(),
        allow_net=allow_net,
        tmpfs_size=ram_half // 2 if ram_half else None,
        mounts=mounts or (),
    )
    import sys

    argv = [*bwrap_argv(plan), *kernel_argv(sys.executable, conn)[:1], "-c", "<ipykernel>"]
    filtered = f"\n\n{seccomp.describe()}" if plan.seccomp is not None else ""
    return True, f"{status}\n\n{describe(argv)}{filtered}"


def unsandboxed_network(allow_net: bool) -> str:
    """One line: the network an unsandboxed kernel gets here (its own on a root host that
    allows it, runtime/kernel/netns.py; else the host's, and why)."""
    from cave_tui.runtime.kernel.netns import private_network_problem

    if allow_net:
        return "without the sandbox: the host's network (--allow-net)"
    problem = private_network_problem()
    if problem is None:
        return "without the sandbox: a network namespace of its own (its own loopback only)"
    return f"without the sandbox: the host's network ({problem})"
