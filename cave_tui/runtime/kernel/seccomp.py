"""The seccomp filter a sandboxed kernel runs under (bwrap `--seccomp FD`): the few system
calls that reach past its namespaces are refused, everything else is allowed.

Network namespaces do not cover every socket family: `AF_VSOCK` (virtual machine sockets,
to the hypervisor and its agents) and `AF_BLUETOOTH` reach the same peers from every
namespace, so `--unshare-net` alone leaves them open. The kernel keyring is not namespaced
either: `keyctl` can link the outer user's keyring (the host user's own, on a non-root host)
and read its keys (Kerberos tickets, tokens), so `add_key`, `request_key` and `keyctl` are
refused, as Docker's default profile does. `io_uring` can create sockets without the `socket`
system call (so without this filter); 32-bit system calls (`int 0x80`, x32) take another
table. All of them fail with an errno, never a kill.

The program is classic BPF over `struct seccomp_data`, built here (two dozen instructions)
rather than through libseccomp, which is not a dependency of bubblewrap nor installed with
Python. `program_for(machine)` is None on an architecture it has no numbers for.
"""

from __future__ import annotations

import errno
import platform
import struct
from dataclasses import dataclass

SECCOMP_FD = 9  # the launcher hands the program to bwrap on this descriptor

# Classic BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h).
LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
RET_K = 0x06  # BPF_RET | BPF_K
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
# Offsets in struct seccomp_data: nr (int), arch (u32), instruction_pointer, args[6] (u64).
NR, ARCH, ARG0 = 0, 4, 16
X32_BIT = 0x40000000  # x86-64's x32 ABI: the same arch, syscall numbers with this bit

AF_BLUETOOTH = 31
AF_VSOCK = 40
DENIED_FAMILIES = (AF_VSOCK, AF_BLUETOOTH)  # not isolated by a network namespace


@dataclass(frozen=True)
class Arch:
    """One architecture's audit id and the system call numbers the filter refers to."""

    audit: int  # AUDIT_ARCH_*
    socket: int
    refused: tuple[int, ...]  # io_uring_setup, add_key, request_key, keyctl: ENOSYS
    x32: bool = False  # has the x32 ABI (numbers with X32_BIT set)


ARCHES = {
    "x86_64": Arch(audit=0xC000003E, socket=41, refused=(425, 248, 249, 250), x32=True),
    "aarch64": Arch(audit=0xC00000B7, socket=198, refused=(425, 217, 218, 219)),
}


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def _refuse(err: int) -> bytes:
    return _insn(RET_K, RET_ERRNO | err)


def program(arch: Arch) -> bytes:
    """The filter for *arch*, as bwrap reads it (an array of `struct sock_filter`)."""
    socket_block = [_insn(LD_W_ABS, ARG0)]
    for family in DENIED_FAMILIES:
        socket_block += [_insn(JEQ_K, family, 0, 1), _refuse(errno.EAFNOSUPPORT)]
    socket_block.append(_insn(RET_K, RET_ALLOW))
    code = [
        _insn(LD_W_ABS, ARCH),
        _insn(JEQ_K, arch.audit, 1, 0),
        _refuse(errno.ENOSYS),  # another architecture's table (i386 through int 0x80)
        _insn(LD_W_ABS, NR),
    ]
    if arch.x32:
        code += [_insn(JGE_K, X32_BIT, 0, 1), _refuse(errno.ENOSYS)]
    for nr in arch.refused:
        code += [_insn(JEQ_K, nr, 0, 1), _refuse(errno.ENOSYS)]
    code += [
        _insn(JEQ_K, arch.socket, 0, len(socket_block)),
        *socket_block,
        _insn(RET_K, RET_ALLOW),
    ]
    return b"".join(code)


def program_for(machine: str | None = None) -> bytes | None:
    """The filter for this machine (or *machine*, as `platform.machine()` names it)."""
    arch = ARCHES.get(machine if machine is not None else platform.machine())
    return program(arch) if arch is not None else None


def describe() -> str:
    """What the filter refuses, for people (`cave sandbox`)."""
    return (
        f"--seccomp {SECCOMP_FD}: a filter refusing socket(AF_VSOCK, AF_BLUETOOTH), "
        "io_uring_setup, add_key, request_key, keyctl and other ABIs' system calls; "
        "everything else is allowed"
    )
