"""The sandbox's seccomp program, run through a small classic-BPF interpreter: what it allows
and refuses for each architecture it knows (no kernel started here)."""

from __future__ import annotations

import errno
import struct

import pytest

from cave_tui.runtime.kernel import sandbox, seccomp
from cave_tui.runtime.kernel.seccomp import AF_BLUETOOTH, AF_VSOCK, ARCHES, RET_ALLOW, RET_ERRNO

AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
AUDIT_ARCH_I386 = 0x40000003


def run(program: bytes, nr: int, arch: int, arg0: int = 0) -> int:
    """What the kernel would decide for this system call (classic BPF over seccomp_data)."""
    data = struct.pack("=iIQ6Q", nr, arch, 0, arg0, 0, 0, 0, 0, 0)
    insns = [struct.unpack_from("=HBBI", program, i) for i in range(0, len(program), 8)]
    pc, acc = 0, 0
    for _ in range(len(insns)):
        code, jt, jf, k = insns[pc]
        if code == seccomp.LD_W_ABS:
            acc = struct.unpack_from("=I", data, k)[0]
            pc += 1
        elif code == seccomp.JEQ_K:
            pc += 1 + (jt if acc == k else jf)
        elif code == seccomp.JGE_K:
            pc += 1 + (jt if acc >= k else jf)
        elif code == seccomp.RET_K:
            return int(k)
        else:
            raise AssertionError(f"unexpected opcode {code:#x}")
    raise AssertionError("the program ran off its end")


@pytest.mark.parametrize("machine", sorted(ARCHES))
def test_the_filter_refuses_what_crosses_namespaces_and_nothing_else(machine: str):
    arch = ARCHES[machine]
    program = seccomp.program_for(machine)
    assert program is not None and len(program) % 8 == 0 and len(program) // 8 < 64
    refused = RET_ERRNO | errno.EAFNOSUPPORT
    for family in (AF_VSOCK, AF_BLUETOOTH):
        assert run(program, arch.socket, arch.audit, family) == refused
        assert run(program, arch.socket, arch.audit, family | (1 << 32)) == refused
    for family in (AF_UNIX, AF_INET, AF_INET6, AF_NETLINK):
        assert run(program, arch.socket, arch.audit, family) == RET_ALLOW
    assert len(arch.refused) == 4  # io_uring_setup, add_key, request_key, keyctl
    for nr in arch.refused:
        assert run(program, nr, arch.audit) == RET_ERRNO | errno.ENOSYS
    for nr in range(0, 460):  # everything else is untouched: not an allow-list
        if nr not in (arch.socket, *arch.refused):
            assert run(program, nr, arch.audit) == RET_ALLOW
    # another architecture's system call table is closed whole (i386 through int 0x80)
    assert run(program, 359, AUDIT_ARCH_I386, AF_VSOCK) == RET_ERRNO | errno.ENOSYS
    assert run(program, 1, AUDIT_ARCH_I386) == RET_ERRNO | errno.ENOSYS
    if arch.x32:
        x32 = seccomp.X32_BIT | arch.socket
        assert run(program, x32, arch.audit, AF_VSOCK) == RET_ERRNO | errno.ENOSYS


def test_an_unknown_machine_gets_no_filter_and_the_plan_says_so():
    assert seccomp.program_for("sparc64") is None
    plan = sandbox.SandboxPlan(
        bwrap="/usr/bin/bwrap", workdir="/w", writable=(), readable=(), seccomp=None
    )
    assert "--seccomp" not in sandbox.bwrap_argv(plan)
    with_filter = sandbox.bwrap_argv(
        sandbox.SandboxPlan(
            bwrap="/usr/bin/bwrap", workdir="/w", writable=(), readable=(), seccomp=b"x" * 8
        )
    )
    at = with_filter.index("--seccomp")
    assert with_filter[at + 1] == str(seccomp.SECCOMP_FD)


def test_cave_sandbox_shows_the_filter_and_says_what_it_refuses():
    from cave_tui.app.sandbox_report import sandbox_report
    from tests.runtime.kernel.test_sandbox_escapes import sandbox_or_fail

    sandbox_or_fail()
    usable, text = sandbox_report(show=True)
    assert usable and f"--seccomp {seccomp.SECCOMP_FD} \\" in text
    assert text.splitlines()[-1] == seccomp.describe() and "keyctl" in text
