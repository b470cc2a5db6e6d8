"""`NamespaceFeed`: keeps the inspector's rows current and acts on a name's detail screen.

The runtime reports each change (`NamespaceChanged`); the feed lists the namespace off the
UI thread and posts the rows (`NamespaceRows`) for the app to give to the inspector.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from cave_tui.app.commands import registry
from cave_tui.frontends.tui.messages import NamespaceRows

if TYPE_CHECKING:
    from cave_tui.frontends.tui.host import CaveHost
    from cave_tui.runtime.base import Runtime
    from cave_tui.runtime.shipped.summary import VarInfo


class NamespaceFeed:
    """One namespace listing at a time; changes that arrive meanwhile make one more."""

    def __init__(self, app: CaveHost) -> None:
        self.app = app
        self._loading = False
        self._dirty = False
        self._changed: set[str] = set()

    def refresh(self, changed: list[str] | None = None) -> None:
        """Reload the namespace rows; *changed* names are highlighted.

        Coalescing: one listing runs at a time, and changes that arrive meanwhile make one
        more (a /load deleting 10,000 names lists the namespace twice, not 10,000 times).
        """
        self._changed |= set(changed or [])
        self._dirty = True
        if not self._loading:
            self._loading = True
            self.app.run_worker(self._load(), group="inspector", exit_on_error=False)

    async def _load(self) -> None:
        services = self.app.services
        try:
            while self._dirty:
                runtime = services.runtime
                if runtime is None or not services.ready:
                    return  # on_services_ready refreshes
                self._dirty = False
                changed, self._changed = self._changed, set()
                rows = await _listing_off_loop(runtime)
                self.app.post_message(NamespaceRows(rows, changed))
        finally:
            self._loading = False

    def open_detail(self, name: str) -> None:
        app = self.app
        runtime = app.services.runtime
        if runtime is None:
            app.notify("The runtime is still starting.", severity="warning")
            return
        app.run_worker(self._open_detail(name, runtime), group="detail-open", exclusive=True)

    async def _open_detail(self, name: str, runtime: Runtime) -> None:
        """Push the detail view of *name* once its first rows are read (or have taken long)."""
        from cave_tui.frontends.tui.screens.detail import DetailScreen

        app = self.app
        screen = await DetailScreen.opened(name, runtime, animate=app.animate_ui)
        app.push_screen(screen, callback=self._detail_action)

    def _detail_action(self, result: tuple[str, str] | None) -> None:
        if result is None:
            return
        action, name = result
        if action == "insert":
            self.app.prompt.insert_text(name)
        elif action == "delete":
            self.app.run_worker(self._delete_variable(name), group="command")
        elif action == "retrieve":
            self.app.run_worker(self._retrieve_variable(name), group="command")

    async def _delete_variable(self, name: str) -> None:
        ctx = self.app.ctx
        if not await ctx.confirm(f"Delete `{name}` from the namespace?"):
            return
        await registry.dispatch(f"/del {name}", ctx)

    async def _retrieve_variable(self, name: str) -> None:
        app = self.app
        if registry.get("retrieve") is not None:  # the data commands, when installed
            await registry.dispatch(f"/retrieve {name}", app.ctx)
            return
        from cave_tui.app.detail import default_filename, free_path, human_bytes, write_object

        try:
            obj = await app.services.live_runtime.retrieve(name)
            path = free_path(Path.cwd() / "retrieved", default_filename(name, obj))
            await asyncio.to_thread(write_object, obj, path)
        except Exception as exc:
            app.chat.add_notice(f"Could not retrieve `{name}`: {exc}", "error")
            return
        size = human_bytes(path.stat().st_size)
        app.chat.add_notice(f"Retrieved `{name}` to `{path}` ({size}).", "success")


async def _listing_off_loop(runtime: Runtime) -> list[VarInfo]:
    """`namespace_listing()` (every name), on a worker thread for the in-process runtime.

    Describing 10,000 names takes ~0.4 s of Python; off the event loop the app keeps
    drawing meanwhile. The kernel runtime's listing is already asynchronous I/O.
    """
    if runtime.in_process:
        return await asyncio.to_thread(asyncio.run, runtime.namespace_listing())
    return await runtime.namespace_listing()
