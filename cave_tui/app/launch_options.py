"""`LaunchOptions`: what one command line asked for, typed, handed from the CLI to the app.

The settings it gave are kept by setting name (the table's, `config.SETTINGS`: checked
here) for `load_config`, which turns them into the typed `Config`; how to open (`--plain`)
and the data options are typed fields. It replaces the `flags: dict[str, Any]` that went
from the command line into `AppServices`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from cave_tui.app.config import ALIASES, SETTINGS
from cave_tui.app.data_options import DataOptions
from cave_tui.app.settings import SettingValue


@dataclass(frozen=True)
class LaunchOptions:
    """The settings a command line gave (name -> value; not given: absent) and the rest."""

    settings: Mapping[str, SettingValue] = field(default_factory=dict)
    plain: bool = False  # the line-mode REPL instead of the app
    data: DataOptions = field(default_factory=DataOptions)

    def __post_init__(self) -> None:
        given: dict[str, SettingValue] = {}
        for name, value in self.settings.items():
            if name not in ALIASES:
                raise ValueError(f"unknown setting {name!r} (known: {', '.join(SETTINGS)})")
            if value is not None:
                given[ALIASES[name]] = value  # an old name (`policy`) is its setting's
        object.__setattr__(self, "settings", MappingProxyType(given))

    def get(self, name: str) -> SettingValue:
        """The value given for setting *name*, or None when the command line did not."""
        return self.settings.get(ALIASES.get(name, name))

    def with_settings(self, **settings: SettingValue) -> LaunchOptions:
        """A copy with these settings given too (they win over the ones given before)."""
        return replace(self, settings={**self.settings, **settings})
