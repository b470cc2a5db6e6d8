"""`listeners.kernel_ports` over a /proc laid out in a folder: both tables, the addresses
loopback reaches, and the launcher found among a holder's ancestors."""

from __future__ import annotations

import os
from pathlib import Path

from cave_tui.models.listeners import LAUNCHER_TAIL, kernel_ports, listeners

HEADER = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"  # noqa: E501


def _row(address: str, port: int, inode: int, state: str = "0A") -> str:
    return f"   0: {address}:{port:04X} 00000000:0000 {state} 0:0 00:0 0 65534 0 {inode} 1\n"


def _process(proc: Path, pid: int, ppid: int, argv: list[str], sockets: list[int]) -> None:
    folder = proc / str(pid)
    (folder / "fd").mkdir(parents=True)
    (folder / "stat").write_text(f"{pid} (py thon) S {ppid} 1 1 0\n")
    (folder / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")
    for fd, inode in enumerate(sockets, start=3):
        os.symlink(f"socket:[{inode}]", folder / "fd" / str(fd))


def test_ports_held_below_a_launcher_are_the_kernels(tmp_path):
    proc = tmp_path
    (proc / "net").mkdir()
    v6_any, v6_mapped = "0" * 32, "0000000000000000FFFF00000100007F"
    (proc / "net" / "tcp").write_text(
        HEADER
        + _row("0100007F", 8000, 11)  # 127.0.0.1, the kernel's
        + _row("00000000", 11434, 12)  # 0.0.0.0, a real server's
        + _row("0100007F", 1234, 13, state="01")  # a connection, not a listener
        + _row("0200000A", 5000, 14)  # 10.0.0.2: loopback does not reach it
    )
    (proc / "net" / "tcp6").write_text(HEADER + _row(v6_any, 1337, 15) + _row(v6_mapped, 8080, 16))
    launcher = ["/usr/bin/python3", f"/site-packages/{LAUNCHER_TAIL}", "{}"]
    _process(proc, 100, 1, launcher, [])
    _process(proc, 101, 100, ["python", "-m", "ipykernel"], [11])
    _process(proc, 102, 100, ["daemon"], [15, 16])  # orphaned, reparented to the launcher
    _process(proc, 200, 1, ["ollama", "serve"], [12, 13, 14])
    ports = [8000, 11434, 1234, 5000, 1337, 8080]
    assert {item.port for item in listeners(ports, str(proc))} == {8000, 11434, 1337, 8080}
    assert kernel_ports(ports, str(proc)) == {8000, 1337, 8080}
