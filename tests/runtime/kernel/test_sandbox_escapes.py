"""Real escapes tried from real sandboxed kernels: none may touch the host.

Two sandboxed kernels are started once for the module. Where bubblewrap or user namespaces
do not work the tests are skipped, except under CI or CAVE_REQUIRE_SANDBOX, where that fails.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from cave_tui.runtime.kernel import IPyKernelRuntime, SandboxUnavailable, limits
from cave_tui.runtime.kernel.sandbox import require_bwrap

FAKE_KEY = "sk-test-" + uuid.uuid4().hex


def sandbox_or_fail() -> None:
    try:
        require_bwrap(limits.resolve_user("auto"))
    except SandboxUnavailable as exc:
        if os.environ.get("CI") or os.environ.get("CAVE_REQUIRE_SANDBOX"):
            pytest.fail(f"the kernel sandbox must work here: {exc}")
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def host_dir() -> Iterator[Path]:
    """A world-writable directory in the host's /tmp: an unsandboxed kernel (any user) could
    write and read here, so only the sandbox keeps the kernels out."""
    path = Path(tempfile.mkdtemp(prefix="cave-host-"))
    path.chmod(0o777)
    (path / "secret.txt").write_text("host secret")
    (path / "secret.txt").chmod(0o644)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def kernels() -> Iterator[tuple[IPyKernelRuntime, IPyKernelRuntime]]:
    sandbox_or_fail()
    old = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = FAKE_KEY  # in the host's environment while they start
    pair = (
        IPyKernelRuntime(sandbox=True, cell_timeout=60, interrupt_grace=1.0, memory_limit="1G"),
        IPyKernelRuntime(sandbox=True, cell_timeout=60, interrupt_grace=1.0),
    )
    try:

        async def start() -> None:
            await asyncio.gather(*(k.start() for k in pair))

        asyncio.run(start())
        yield pair
    finally:
        if old is None:
            os.environ.pop("OPENAI_API_KEY", None)
        else:
            os.environ["OPENAI_API_KEY"] = old
        for kernel in pair:
            asyncio.run(kernel.stop())


@pytest.fixture
def kernel(kernels: tuple[IPyKernelRuntime, IPyKernelRuntime]) -> IPyKernelRuntime:
    return kernels[0]


async def value(kernel: IPyKernelRuntime, code: str) -> object:
    """Run *code* (which sets `out`) in the kernel and bring `out` back."""
    result = await kernel.execute(code)
    assert result.success, result.error
    return await kernel.retrieve("out")


async def test_writes_outside_the_workdir_never_reach_the_host(kernel, host_dir):
    marker = f"cave-escape-{uuid.uuid4().hex}"
    targets = [str(host_dir / marker), f"/root/{marker}", f"/tmp/{marker}", f"/{marker}"]
    outcome = await value(
        kernel,
        "out = {}\n"
        f"for path in {targets!r}:\n"
        "    try:\n"
        "        open(path, 'w').write('x')\n"
        "        out[path] = 'written'\n"
        "    except OSError as exc:\n"
        "        out[path] = type(exc).__name__\n",
    )
    assert isinstance(outcome, dict) and set(outcome) == set(targets)
    assert outcome[str(host_dir / marker)] != "written"  # the host's directory is not there
    for path in targets:
        assert not os.path.exists(path), path


async def test_host_files_cannot_be_read(kernel, host_dir):
    outcome = await value(
        kernel,
        f"import os\nout = []\nsecret = {str(host_dir / 'secret.txt')!r}\n"
        "for path in [secret, '/etc/shadow', os.path.expanduser('~root')]:\n"
        "    try:\n"
        "        with open(path) as fh:\n"
        "            out.append(fh.read())\n"
        "    except OSError as exc:\n"
        "        out.append(type(exc).__name__)\n",
    )
    assert "host secret" not in str(outcome)
    # /etc/shadow: /dev/null stands in (unopenable on its nodev mount, or empty)
    assert isinstance(outcome, list) and outcome[1] in ("PermissionError", "")


async def test_shells_have_no_effect_on_the_host(kernel, host_dir):
    one, two = host_dir / f"sh-{uuid.uuid4().hex}", f"/tmp/cave-sh-{uuid.uuid4().hex}"
    result = await kernel.execute(
        "import os, subprocess\n"
        f"subprocess.run(['sh', '-c', 'touch {one} {two}'])\n"
        f"os.system('touch {one}.2 {two}.2; echo ran')\n"
    )
    assert result.success and "ran" in result.output  # the shell did run, inside
    for path in (str(one), two, f"{one}.2", f"{two}.2"):
        assert not os.path.exists(path), path


async def test_no_socket_reaches_the_host(kernel):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        outcome = await value(
            kernel,
            "import socket\n"
            "try:\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=1).close()\n"
            "    out = 'connected'\n"
            "except OSError as exc:\n"
            "    out = type(exc).__name__\n",
        )
        listener.settimeout(0.2)
        with pytest.raises(TimeoutError):
            listener.accept()
    assert outcome != "connected"


async def test_the_host_environment_is_not_visible(kernel):
    outcome = await value(
        kernel,
        "import os\n"
        "seen = [repr(dict(os.environ))]\n"
        f"for pid in ['1', 'self', {str(os.getpid())!r}, *os.listdir('/proc')]:\n"
        "    try:\n"
        "        seen.append(open(f'/proc/{pid}/environ', 'rb').read().decode(errors='replace'))\n"
        "    except (OSError, NotADirectoryError):\n"
        "        pass\n"
        f"out = {{'seen': '\\n'.join(seen), 'host_pid': os.path.exists('/proc/{os.getpid()}')}}\n",
    )
    assert isinstance(outcome, dict)
    assert FAKE_KEY not in outcome["seen"] and "OPENAI_API_KEY" not in outcome["seen"]
    assert FAKE_KEY in os.environ["OPENAI_API_KEY"]  # it was there to steal
    assert outcome["host_pid"] is False  # the host's processes do not exist in its namespace


async def test_kernels_cannot_reach_each_other(kernels):
    one, other = kernels
    assert other.runtime_dir is not None and other.kernel_pid is not None
    outcome = await value(
        one,
        "import os, signal\nout = {}\n"
        f"for path in [{other.runtime_dir!r}, {other.runtime_dir + '/run'!r}]:\n"
        "    try:\n"
        "        out[path] = os.listdir(path)\n"
        "    except OSError as exc:\n"
        "        out[path] = type(exc).__name__\n"
        f"for path in [{other.runtime_dir + '/conn/kernel-1.json'!r}]:\n"
        "    try:\n"
        "        out[path] = open(path).read()\n"
        "    except OSError as exc:\n"
        "        out[path] = type(exc).__name__\n"
        f"for pid in [{other.kernel_pid}, -{other.kernel_pid}]:\n"
        "    try:\n"
        "        os.kill(pid, signal.SIGKILL)\n"
        "        out[pid] = 'signalled'\n"
        "    except OSError as exc:\n"
        "        out[pid] = type(exc).__name__\n",
    )
    assert isinstance(outcome, dict)
    assert all(v in ("FileNotFoundError", "ProcessLookupError") for v in outcome.values()), outcome
    assert (await other.execute("1 + 1")).output == "2\n"  # alive, and not restarted
    assert other.kernel_info  # still the kernel it was


async def test_the_sandboxed_kernel_is_still_limited_and_interruptible(kernel):
    result = await kernel.execute("block = bytearray(3 * 1024**3)")
    assert not result.success and result.error_type == "MemoryError"
    result = await kernel.execute("import time\ntime.sleep(30)", timeout=1)
    assert result.timed_out and result.interrupted
    assert (await kernel.execute("1 + 1")).output == "2\n"
    assert kernel.sandbox and "--unshare-net" in (kernel.sandbox_command or "")


async def test_the_memory_shown_and_sized_is_the_sandboxed_kernels_own(kernel):
    """The status line's memory and the inject pre-flight read the process that runs the
    cells, not bwrap around it (a few MiB, whatever the kernel holds)."""
    result = await kernel.execute("held = bytearray(200 * 1024**2)\nheld[::4096] = b'x' * 51200")
    assert result.success, result.error
    try:
        use, space = kernel.memory_use(), kernel.memory_for_data()
        assert use is not None and use.used > 200 * 1024**2, use
        assert space is not None and space.used > 200 * 1024**2, space
    finally:
        await kernel.execute("del held")
