"""IPython rewrites: magics, shell escapes, help, autocall escapes, one-line automagic."""

from __future__ import annotations

from collections.abc import Iterator

from cave_tui.security.cell import Cell
from cave_tui.security.rules import SecurityRule
from cave_tui.security.violations import SecurityViolation


# -- IPython -------------------------------------------------------------------------------
class MagicRule(SecurityRule):
    """Magics, shell escapes, help requests, autocall escapes and one-line automagic.

    Works on what `source.prepare` found by running IPython's own transformer, so every
    spelling IPython accepts (`!ls`, `x = !ls`, `%%bash`, `ls?`, `/f x`, `cat /etc/passwd`)
    is seen as the rewrite it becomes.
    """

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        prepared = cell.prepared
        for lineno, what in prepared.rewrites:
            yield SecurityViolation(
                message=f"{what} is not allowed (IPython magics and shell commands are off)",
                rule=self.name,
                lineno=lineno,
                col=1,
            )
        if prepared.automagic:
            yield SecurityViolation(
                message=prepared.automagic + "; write plain Python (e.g. print(name))",
                rule=self.name,
                lineno=1 + prepared.line_offset,
                col=1,
            )
