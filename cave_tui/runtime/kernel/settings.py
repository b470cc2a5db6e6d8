"""The runtime's configuration: one object that all of its parts read live.

`IPyKernelRuntime` shows each field as an attribute of its own, so `runtime.cell_timeout = 5`
holds from the next cell on; the parts never keep copies.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cave_tui.runtime.kernel.decode_limits import DECODE_LIMIT, DECODE_TIMEOUT
from cave_tui.runtime.kernel.limits import KernelUser
from cave_tui.runtime.shipped.transport import JSON_LIMIT

DEFAULT_CELL_TIMEOUT = 300.0
DEFAULT_CHECKPOINT_TIMEOUT = 60.0


@dataclass
class KernelSettings:
    """Limits and timeouts of one runtime (the owned kernel's limits do nothing when attached)."""

    memory_limit: int | None = None  # bytes of address space (owned kernels)
    cell_timeout: float | None = DEFAULT_CELL_TIMEOUT  # default per-cell timeout, seconds
    cwd: str | None = None  # the kernel's working directory (owned; None: a private one)
    trust_kernel: bool = False  # unpickle kernel values with dill (unsafe with untrusted code)
    output_limit: int = 200_000  # characters of one cell's output kept
    interrupt_grace: float = 2.0  # seconds an interrupted cell gets before it is killed
    checkpoint_timeout: float = DEFAULT_CHECKPOINT_TIMEOUT  # per checkpoint (<= cell_timeout)
    max_processes: int | None = 512  # tasks the kernel may start (owned)
    user: KernelUser | None = None  # the user an owned kernel runs as (None: the host's)
    extra_env: dict[str, str] = field(default_factory=dict)  # added to the kernel's environment
    json_limit: int = JSON_LIMIT  # bytes of JSON or pickle accepted from the kernel
    decode_limit: int = DECODE_LIMIT  # bytes one retrieved value may take in the host
    decode_timeout: float | None = DECODE_TIMEOUT  # seconds one retrieved value may decode
    decode_in_worker: bool = True  # large JSON/pickles read first in a killable process
    startup_timeout: float = 60.0  # seconds a kernel gets to answer after it starts
    switch_interval: float | None = 0.0005  # the kernel's sys.setswitchinterval
    mounts: tuple[tuple[str, bool], ...] = ()  # host paths a sandboxed kernel also sees
    sandbox: bool = False  # run the owned kernel under bubblewrap (see sandbox.py)
    allow_net: bool = False  # share the host's network (else a namespace of its own: sandboxed,
    # or unsandboxed on a root host, netns.py)
