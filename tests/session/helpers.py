"""Helpers for session tests: a scripted agent on a fresh in-process runtime."""

from __future__ import annotations

from cave_tui.agent import CaveAgent
from cave_tui.models import ScriptedModel
from cave_tui.runtime.ipython import IPythonRuntime


def code(src: str) -> str:
    return f"```python\n{src}\n```"


def scripted_agent(replies: list, **kwargs) -> CaveAgent:
    return CaveAgent(ScriptedModel(replies), IPythonRuntime(), **kwargs)


TWO_TURNS = [
    code("x = 41\nprint(x)"),
    code("import pandas as pd\ny = pd.DataFrame({'a': [x, x + 1]})\nprint(y.a.sum())"),
    "Done: `y` holds two rows.",
    code("z = y.a * 2\nprint(z.tolist())"),
    "z is y doubled.",
]
