"""What the app says when a live object cannot go into the isolated kernel, and the way out."""

from __future__ import annotations

from cave_tui.dataio.errors import DataIOError, LiveObjectError

IN_PROCESS_OFFER = (
    "Live objects (connections, open files, locks, native handles) stay in the process that "
    "made them: start cave with --in-process to share this one as it is, or inject what "
    "recreates it (a path, a URL) and open it in the kernel with ! code or a request."
)


def explain_data_error(exc: DataIOError) -> str:
    """*exc*'s message, followed by the in-process offer when it is a live object."""
    if isinstance(exc, LiveObjectError):
        return f"{exc}. {IN_PROCESS_OFFER}"
    return str(exc)
