"""Three evaluation tasks on the real local model (opt-in: `pytest -m llm`).

Needs the local Qwen2.5-Coder-1.5B server of ../shared/local-llm (README there) listening on
$CAVE_LLM_API_BASE (default http://127.0.0.1:8411/v1); skipped with the reason when it is not.
Minutes of CPU: kept out of the default run by the `llm` marker.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request

import pytest
from agent_eval import DEFAULT_MODEL, run_task
from eval_tasks import select

API_BASE = os.environ.get("CAVE_LLM_API_BASE", "http://127.0.0.1:8411/v1")
# A frame task, an object-with-methods task, and a multi-turn task.
TASKS = "delay_by_carrier,fleet_embraer,mt_adelie"

pytestmark = pytest.mark.llm


def _reachable() -> str | None:
    """None when the server answers /models, else why not."""
    try:
        with urllib.request.urlopen(f"{API_BASE}/models", timeout=3) as response:
            json.load(response)
        return None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"


@pytest.fixture(scope="module")
def model():
    reason = _reachable()
    if reason is not None:
        pytest.skip(
            f"local model not reachable at {API_BASE} ({reason}); start it with "
            "../shared/local-llm/serve.py (see its README) or set CAVE_LLM_API_BASE"
        )
    from cave_tui.models import LiteLLMModel

    return LiteLLMModel(DEFAULT_MODEL, api_base=API_BASE, api_key="local", temperature=0)


@pytest.mark.timeout(1200)
async def test_three_tasks_on_the_local_model(model):
    runs = [
        await run_task(task, model, "cave", max_steps=6, time_cap=300) for task in select(TASKS)
    ]
    for run in runs:
        assert run.error is None, run
        assert run.usage_reported and run.prompt_tokens > 0 and run.model_calls >= 1, run
    solved = [r.task for r in runs if r.success]
    assert len(solved) >= 2, [(r.task, r.checks, r.statuses) for r in runs]
