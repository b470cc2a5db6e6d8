"""ShortPrompt (opt-in): shorter system rules for a small model, numbers computed in the cell.

The system prompt is sent again with every model call, and on the embedded model it was half
of a turn's tokens (291 of the Qwen tokenizer's tokens each call; docs/prompt-tuning.md).
These rules say the same things in fewer words, and drop the "answer in plain text" way of
replying: on a closed-form question a small model took it and answered at once with a number
no code computed, which then cost a second call to compute. Here every reply is one cell,
and the cell that does the work ends with final_answer. The policy only supplies text; the
prompt builder uses it in place of the default rules (rules the user set are kept).
"""

from __future__ import annotations

from typing import ClassVar

from cave_tui.agent.policies.base import BasePolicy

SHORT_SYSTEM_INSTRUCTIONS = """\
Reply with one ```{python_block_identifier} block and nothing after it. It runs at once in \
the session; the next message shows its output or error. Variables persist.

Rules:
- "Namespace (live)" in the latest message lists the user's data: use those objects by name, \
as they are; never re-create or re-load them. Use column names exactly as listed.
- Compute every number with code from the data; never answer from memory.
- Store each result under the name the user gives. Leave given objects unchanged unless \
asked; put derived data in new variables.
- Do just what is asked: no extra filtering, sorting or rounding.
- If code fails, fix its cause; never send the same code again.{final_answer}"""


class ShortPrompt(BasePolicy):
    """Shorter system rules for a small model (every call carries them): every reply is a
    cell, and numbers are computed in the cell that calls final_answer."""

    name = "short_prompt"
    system_instructions: ClassVar[str] = SHORT_SYSTEM_INSTRUCTIONS
