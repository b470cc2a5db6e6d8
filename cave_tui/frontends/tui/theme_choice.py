"""`ThemeChoice`: the app's themes (themes.py loads them) and the user's choice of one.

The configured theme is used when it exists, else `FALLBACK_THEME` (said at start-up); a
theme chosen in the app (/theme, the palette) restyles the chat and is saved in config.toml.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cave_tui.app.config import config_dir, save_setting
from cave_tui.frontends.tui.themes import BUNDLED, load_themes

if TYPE_CHECKING:
    from textual.theme import Theme

    from cave_tui.frontends.tui.host import CaveHost

FALLBACK_THEME = "cave-dark"


class ThemeChoice:
    """Registers the themes with the app and follows its theme changes."""

    def __init__(self, app: CaveHost, *, persist: bool = True) -> None:
        self.app = app
        self.persist = persist  # a chosen theme is saved in config.toml
        self.notices: list[str] = []  # shown in the chat once it is up

    def register(self) -> None:
        app = self.app
        themes, self.notices = load_themes(BUNDLED, config_dir() / "themes")
        for theme in themes:
            app.register_theme(theme)
        wanted = app.config.theme
        if wanted in app.available_themes:
            app.theme = wanted
        else:
            self.notices.append(f"unknown theme {wanted!r}; using {FALLBACK_THEME}")
            app.theme = FALLBACK_THEME

    def set(self, name: str) -> None:
        if name not in self.app.available_themes:
            self.app.chat.add_notice(f"Unknown theme {name!r}.", "error")
            return
        self.app.theme = name  # changed() persists it

    def changed(self, theme: Theme) -> None:
        app = self.app
        app.chat.restyle(theme.dark)
        if theme.name != app.config.theme:
            app.config.theme = theme.name
            app.chat.add_notice(f"Theme set to `{theme.name}`.", "success")
            if self.persist:
                app.run_worker(
                    lambda: self._save(theme.name),
                    thread=True,
                    group="persist",
                    exit_on_error=False,
                )

    def _save(self, name: str) -> None:
        try:
            save_setting("theme", name)
        except Exception as exc:
            self.app.call_from_thread(
                self.app.chat.add_notice,
                f"Could not save theme in config.toml: {exc}",
                "warning",
            )
