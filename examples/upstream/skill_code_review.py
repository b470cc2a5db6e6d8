"""Agent Skills: a review skill the agent activates when asked to review code.

Port of upstream CaveAgent's `examples/skill_code_review.py` (same scenario; only the
import differs). The skill is `skills/code-review/SKILL.md` next to this file. The
model comes from LLM_MODEL_ID, LLM_API_KEY and LLM_BASE_URL.
"""

import asyncio
import os
from pathlib import Path

from cave_tui import CaveAgent
from cave_tui.models import LiteLLMModel
from cave_tui.skills import SkillDiscovery

SAMPLE_CODE = """
def login(username, password):
    query = f"SELECT * FROM users WHERE username='{username}' AND password='{password}'"
    rows = db.execute(query)
    return bool(rows)
"""


async def main():
    model = LiteLLMModel(
        model_id=os.getenv("LLM_MODEL_ID"),
        api_key=os.getenv("LLM_API_KEY"),
        base_url=os.getenv("LLM_BASE_URL"),
        custom_llm_provider="openai",
    )
    skills = SkillDiscovery.from_directory(Path(__file__).parent / "skills")
    agent = CaveAgent(model=model, skills=skills)

    print("=== Agent Skills ===\n")
    print("Loaded skills:")
    for skill in skills:
        print(f"  - {skill.name}: {skill.description}")
    print("\nFunctions in the runtime:")
    print(agent.runtime.describe_functions())

    print("\nAsking the agent for a review...\n")
    response = await agent.run(
        f"Review this code for security issues:\n```python\n{SAMPLE_CODE}\n```"
    )
    print("Agent response:")
    print(response.content)


if __name__ == "__main__":
    asyncio.run(main())
