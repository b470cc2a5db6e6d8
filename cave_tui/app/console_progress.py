"""`ConsoleProgress`: a load's or a write's progress as a Rich progress line (`--plain`,
`cave run`), one line per file, on a terminal only: piped or redirected, nothing is shown.

It draws the core's typed `Progress` records (dataio/progress.py); reports come from the
loader's thread (Rich's `Progress` takes them from any thread). The line goes away when the
work is done or when the front end drains (the command ended, done or cancelled).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from cave_tui.app.commands.data import progress_amount
from cave_tui.printable import printable_line

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress as RichProgress
    from rich.progress import TaskID

    from cave_tui.app.services import AppServices
    from cave_tui.dataio.progress import Progress


class ConsoleProgress:
    """Rich progress lines on *console* while files load; none when it is not a terminal."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._lock = threading.Lock()
        self._live: RichProgress | None = None
        self._tasks: dict[str, TaskID] = {}

    def show(self, progress: Progress, label: str) -> None:
        if not self.console.is_terminal:
            return
        from rich.progress import BarColumn, TaskProgressColumn, TextColumn
        from rich.progress import Progress as RichProgress  # loaded with the first line

        with self._lock:
            if self._live is None:
                self._live = RichProgress(
                    TextColumn("{task.description}"),
                    BarColumn(),
                    TaskProgressColumn(),
                    TextColumn("{task.fields[amount]}"),
                    console=self.console,
                    transient=True,
                )
                self._live.start()
            key = progress.path or label
            description = f"{progress.stage} {printable_line(label)}"  # a file's name
            amount = progress_amount(progress)
            task = self._tasks.get(key)
            if task is None:
                task = self._tasks[key] = self._live.add_task(
                    description, total=progress.total or None, amount=amount
                )
            self._live.update(
                task,
                description=description,
                completed=progress.done,
                total=progress.total or None,
                amount=amount,
            )
            if progress.total and progress.done >= progress.total:
                self._live.remove_task(task)
                del self._tasks[key]

    @classmethod
    def on_stderr(cls, services: AppServices) -> ConsoleProgress:
        """Lines on stderr for the work no command runs (`--inject` at the start, `--dump`
        at exit): hooked into *services*' progress hooks."""
        from rich.console import Console

        shown = cls(Console(stderr=True))
        services.progress_hooks.append(shown.show)
        return shown

    def stop(self) -> None:
        """The command ended: the lines go."""
        with self._lock:
            live, self._live = self._live, None
            self._tasks.clear()
        if live is not None:
            live.stop()
