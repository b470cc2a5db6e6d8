"""Command palette (Ctrl+P): every slash command, searchable by name and help."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

from cave_tui.app.commands import registry

if TYPE_CHECKING:
    from cave_tui.frontends.tui.app import CaveApp


class SlashCommands(Provider):
    """Commands that take no argument run at once; the others are put in the input to finish."""

    def _choose(self, name: str) -> None:
        command = registry.get(name)
        app = cast("CaveApp", self.app)  # the only app that lists this provider
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
