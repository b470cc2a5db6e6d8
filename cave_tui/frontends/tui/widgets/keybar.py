"""The key bar: the bindings that apply right now, on one line.

A single `Static` re-rendered when the screen's bindings change. Textual's `Footer`
mounts a widget per key and restyles the screen when it starts, which costs start-up
time for no gain here.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static


class KeyBar(Static):
    """Shows enabled, visible bindings as `key description` pairs, and the palette key."""

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._changed)
        self._changed(self.screen)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _changed(self, screen: object) -> None:
        self.update(self.describe())

    def describe(self) -> Content:
        seen: set[str] = set()
        parts: list[Content | tuple[str, str] | str] = []
        for active in self.screen.active_bindings.values():
            binding = active.binding
            if not binding.show or not active.enabled or binding.action in seen:
                continue
            seen.add(binding.action)
            key = self.app.get_key_display(binding)
            parts += [(f" {key} ", "bold $text-accent"), (binding.description, "$text-muted"), " "]
        if self.app.ENABLE_COMMAND_PALETTE:
            parts += [(" ^p ", "bold $text-accent"), ("palette", "$text-muted")]
        return Content.assemble(*parts)
