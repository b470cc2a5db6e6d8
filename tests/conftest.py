"""Shared fixtures. No test reaches the network: models are scripted or served on 127.0.0.1."""

from __future__ import annotations

import gc
import os

import pandas as pd
import pytest

from cave_tui.runtime import IPythonRuntime, Variable
from tests.helpers.isolation import isolated_dirs  # noqa: F401 (a fixture, used by name)

# How the tests are split across xdist workers (pyproject's addopts run them in parallel).
pytest_plugins = ["tests.helpers.parallel"]

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# The embedded model (1.1 GB, seconds to load) only where a test asks for it by name.
os.environ["CAVE_LOCAL_MODEL"] = "off"
# The app's default runtime is the isolated kernel. Tests run `cave` in process unless they
# are about the runtime, which they then say (`--kernel`, or this variable cleared): a kernel
# per app test would double the suite's time. tests/frontends/test_default_runtime.py keeps
# the default itself covered.
os.environ["CAVE_KERNEL"] = "0"
# Where bubblewrap works, a kernel is sandboxed by default. A test that starts one runs it
# unsandboxed unless it is about the sandbox, which it then says (`--sandbox`, or this
# variable cleared): tests/frontends/cli/test_default_sandbox.py covers the default itself.
os.environ["CAVE_SANDBOX"] = "0"


@pytest.fixture(autouse=True, scope="session")
def _private_data_dir(tmp_path_factory: pytest.TempPathFactory):
    """cave's data folder (input history, the snapshot seal's key) in the run's temp dir,
    never the user's; `isolated_dirs` gives a test its own."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CAVE_DATA_DIR", str(tmp_path_factory.mktemp("cave-data")))
        yield


@pytest.fixture
async def runtime():
    """A real in-process runtime holding a three-row `flights` frame."""
    frame = pd.DataFrame({"carrier": ["AA", "UA", "AA"], "dep_delay": [5.0, 10.0, 7.0]})
    rt = IPythonRuntime(variables=[Variable("flights", frame, "Flights of 2013")])
    yield rt
    await rt.stop()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Everything collection built (the test modules, pandas, IPython, the SDKs) lives to the
    end: moved out of the collector's reach, the full collections of the run do not walk it
    (about 8 % of the CPU of in-process tests)."""
    gc.collect()
    gc.freeze()
