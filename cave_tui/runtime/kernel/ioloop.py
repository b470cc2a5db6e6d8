"""The runtime's I/O thread: one event loop that owns every socket of a kernel.

Running kernel I/O on its own loop lets the runtime serve any caller loop (or
`asyncio.run` called many times), notice a dead kernel while the caller's loop is
busy, and send a synchronous `inject()` at once.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class IOLoop:
    """A daemon thread running the event loop that owns every kernel socket."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self.loop)
            self.loop.call_soon(ready.set)
            self.loop.run_forever()

        self.thread = threading.Thread(target=run, name="cave-kernel-io", daemon=True)
        self.thread.start()
        ready.wait()

    def submit(self, coro: Coroutine[Any, Any, T]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def stop(self) -> None:
        """Cancel what is still pending on the loop, stop it, join the thread."""
        if self.loop.is_closed() or not self.thread.is_alive():
            return

        async def wind_down() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self.loop.stop()

        asyncio.run_coroutine_threadsafe(wind_down(), self.loop)
        if threading.current_thread() is not self.thread:
            self.thread.join(5)
            if not self.thread.is_alive():
                self.loop.close()
