"""ReplyInCode (small): every model reply begins with the code fence, so it is a cell.

Measured on closed-form questions (docs/prompt-tuning.md, session s13): the embedded model's
first reply was a plain-text answer with a number no code computed on every one of 18
tasks, with the rules saying to compute; each then cost a second call (a look) to get code.
Where the model continues a reply it is given (`Model.continues_reply`: llama.cpp's prefill),
the reply starts as ```` ```python ```` and the model writes the code from there: the number
is computed in the first call, and a final answer is a `final_answer(...)` in a cell. Where
the model cannot be given the start of its reply (hosted APIs), this policy does nothing.
"""

from __future__ import annotations

from typing import ClassVar

from cave_tui.agent.policies.base import BasePolicy


class ReplyInCode(BasePolicy):
    """Begin each reply with the code fence (where the model continues a reply)."""

    name = "reply_in_code"
    reply_lead: ClassVar[str] = "```{python_block_identifier}\n"
