"""The model part of `AppServices`: the model in use, switching it (`/model`), its label
and its price. Imports no provider until one is asked for. Never imports Textual."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from cave_tui.app.config import Config

if TYPE_CHECKING:
    from pathlib import Path

    from cave_tui.models.base import Model, Usage
    from cave_tui.models.credentials import Credentials


class CurrentModel:
    """The model of one front-end session (None: none configured yet)."""

    def __init__(self, config: Config, model: Model | None = None) -> None:
        self.config = config
        self.model = model
        # API keys the app took out of the environment (`app.credentials`); None: not taken,
        # models read the environment.
        self.credentials: Credentials | None = None
        # A model named but built only when first needed (`later`): `cave mcp`'s embedded one.
        self._later: Callable[[], Model] | None = None
        self._building = threading.Lock()

    def later(self, build: Callable[[], Model]) -> None:
        """Name the model now and build it with *build* when `resolve` is first called
        (on a thread: building the embedded model checks its weights)."""
        self._later = build

    @property
    def named(self) -> bool:
        """A model is configured: built already, or to be built by `resolve`."""
        return self.model is not None or self._later is not None

    def resolve(self) -> Model | None:
        """The model, built now if it was named for later (once, whichever thread asks
        first); what *build* raises is raised again on the next call."""
        with self._building:
            if self.model is None and self._later is not None:
                self.model = self._later()
                self._later = None
            return self.model

    def build(self, spec: str, *, api_base: str | None = None) -> Model:
        """The model *spec* (litellm id or scripted:FILE), now the current one (ValueError on
        bad specs). *api_base*: its server's URL, named by the user (a loopback one gets the
        API key only so, models/endpoints.py); else the configured one stays."""
        from cave_tui.models import model_from_spec

        model = model_from_spec(
            spec,
            api_base=api_base or self.config.api_base,
            credentials=self.credentials,
            client=self.config.model_client,
            **self.config.model_options,
        )
        self.model = model
        self.config.model = spec
        if api_base:
            self.config.api_base = api_base
        return model

    @property
    def label(self) -> str:
        return self.model.label if self.model is not None else "no model"

    @property
    def priced(self) -> bool:
        """The model can estimate its price (`Model.priced`)."""
        return self.model is not None and self.model.priced

    async def cost(self, usage: Usage) -> float | None:
        """USD estimate of *usage*, computed off the event loop; None if unknown."""
        if self.model is None or not self.model.priced:
            return None
        return await asyncio.to_thread(self.model.cost, usage)


def prepare_local_model(model: Model | None, folder: Path) -> None:
    """The embedded model's server logs into the session folder and starts loading now.
    (Its package is never imported here: a model built without it is not the embedded one.)"""
    local = sys.modules.get("cave_tui.models.local")
    if local is not None and isinstance(model, local.LocalModel):
        if not model.server.alive:
            model.server.log_path = folder / "local-model.log"
        model.warm_up()
