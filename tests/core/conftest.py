"""Fixtures shared by the agent-core tests."""

import pandas as pd
import pytest

from cave_tui.runtime import IPythonRuntime, Variable


@pytest.fixture
async def runtime():
    """A real in-process runtime holding a three-row `flights` frame."""
    frame = pd.DataFrame({"carrier": ["AA", "UA", "AA"], "dep_delay": [5.0, 10.0, 7.0]})
    rt = IPythonRuntime(variables=[Variable("flights", frame, "Flights of 2013")])
    yield rt
    await rt.stop()
