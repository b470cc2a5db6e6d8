"""CodeFirst: a request about a data file gets, until a cell has run, a tip to compute in code.

On a closed-form question over a CSV file ("how many airports are in TX? Answer format:
@n_tx[value]"), the embedded model answered at once in the asked format with a number no
code computed; `look_first` then asked it to compute, a second call that carried the
whole request again (docs/prompt-tuning.md). The tip goes under the request, the text the
model reads last, and asks for the one cell that reads the file, computes and calls
final_answer. The trigger is a path to a data file in the request, not the request's words;
the tip stops once a cell of the turn has run.
"""

from __future__ import annotations

import re

from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.turn import Turn

_DATA_FILE = re.compile(
    r"[\w./~-]+\.(?:csv|tsv|json|jsonl|parquet|feather|xlsx|xls|txt)\b", re.IGNORECASE
)

CODE_FIRST_TIP = (
    "The data is in a file you have not read: reply with one ```python cell that reads it, "
    "computes the answer and ends with final_answer(...) in the form asked. Never write a "
    "number that no code computed."
)


def names_data_file(request: str) -> bool:
    """*request* names a data file (a path ending in .csv, .json, .parquet, ...)."""
    return _DATA_FILE.search(request) is not None


class CodeFirst(BasePolicy):
    """A request naming a data file is told, until a cell has run, to answer with one cell
    that reads it, computes and calls final_answer (a small model answered such requests
    with a made-up number)."""

    name = "code_first"

    async def before_request(self, turn: Turn) -> Intervention | None:
        if turn.cells or not names_data_file(turn.task):
            return None
        return self.act(InterventionKind.TIP, CODE_FIRST_TIP)
