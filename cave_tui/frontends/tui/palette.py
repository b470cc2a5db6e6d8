"""Command palette (Ctrl+P): every slash command, searchable by name and help."""

from __future__ import annotations

from functools import partial
from typing import Protocol, runtime_checkable

from textual.command import DiscoveryHit, Hit, Hits, Provider

from cave_tui.app.commands import registry
from cave_tui.app.commands.registry import FrontEnd


@runtime_checkable
class CommandLineApp(Protocol):
    """What the palette needs of its app (CaveApp, which imports this module)."""

    @property
    def front_end(self) -> FrontEnd: ...

    def run_command_line(self, line: str) -> None: ...


class SlashCommands(Provider):
    """Commands that take no argument run at once; the others are put in the input to finish."""

    def _choose(self, name: str) -> None:
        command = registry.get(name)
        app = self.app
        if not isinstance(app, CommandLineApp):
            return
        if command is not None and command.min_args == 0:
            app.run_command_line(f"/{name}")
        else:
            app.front_end.insert(f"/{name} ", replace=True)

    async def discover(self) -> Hits:
        for command in registry.all():
            yield DiscoveryHit(
                command.usage, partial(self._choose, command.name), help=command.help
            )

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in registry.all():
            text = f"{command.usage}  {command.help}"
            score = matcher.match(text)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(command.usage),
                    partial(self._choose, command.name),
                    help=command.help,
                )
