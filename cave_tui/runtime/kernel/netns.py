"""A network namespace of its own for an unsandboxed kernel on a root host.

An unsandboxed kernel shares the host's network: it could listen on the host's loopback and
pose as a local model server, or reach every service there. On a root host the launcher gives
it a namespace holding only its own loopback (`launcher._private_network`), unless
`allow_net`; the host still reaches it, over Unix sockets. `private_network_problem` says,
once per process, why that cannot be done here (None when it can).
"""

from __future__ import annotations

import os
import subprocess
import sys
from functools import cache

from cave_tui.runtime.kernel.process import LAUNCHER

PROBE_TIMEOUT = 10.0


@cache
def private_network_problem() -> str | None:
    """None when the launcher can give a kernel its own network namespace here; else why not
    (one line). Runs the launcher's own code once (`launcher.py --probe-net`)."""
    if not sys.platform.startswith("linux"):
        return "network namespaces need Linux"
    if os.geteuid() != 0:
        return "only a root host gives an unsandboxed kernel a network of its own (--sandbox does)"
    try:
        done = subprocess.run(
            [sys.executable, LAUNCHER, "--probe-net"],
            capture_output=True,
            timeout=PROBE_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"the probe could not run ({type(exc).__name__})"
    if done.returncode == 0:
        return None
    said = done.stderr.decode(errors="replace").strip().splitlines()
    return f"this host refused a network namespace ({said[-1] if said else done.returncode})"
