"""The look shared by cave's modal screens (parsed when the first modal opens, not at start)."""

from __future__ import annotations

from typing import TypeVar

from textual.screen import ModalScreen

R = TypeVar("R")


class CaveModal(ModalScreen[R]):
    """Centred box over the dimmed app (the screen-level rules are in app.tcss)."""

    DEFAULT_CSS = """
    CaveModal {
        .modal-box {
            width: 80%;
            max-width: 120;
            height: auto;
            max-height: 90%;
            border: round $primary;
            background: $surface;
            padding: 1 2;
        }
        .modal-buttons {
            height: auto;
            margin: 1 0 0 0;
            align: center middle;
        }
        .modal-buttons Button {
            margin: 0 1;
        }
        .modal-title {
            text-style: bold;
            color: $text-primary;
            margin: 0 0 1 0;
        }
        .modal-hint {
            color: $text-muted;
            text-align: center;
        }
    }
    """
