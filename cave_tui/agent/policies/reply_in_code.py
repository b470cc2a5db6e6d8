"""ReplyInCode (small): every model reply begins with the code fence, so it is a cell.

On closed-form questions the embedded model's first reply was an answer with a number no
code had computed on 17 of 18 tasks (session s12's runs, docs/prompt-tuning.md), the rules
saying to compute notwithstanding; each then cost a second call (a look) to get code.
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
