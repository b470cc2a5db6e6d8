"""`IPythonRuntime`: a persistent IPython namespace inside the host process.

Each runtime owns its own `InteractiveShell` (never the global singleton, so two
runtimes in one process never share state) and one worker thread that runs its
cells. Running cells on that thread lets the host stay responsive and lets a
timeout (`execute`'s, else `cell_timeout`: none by default) or Ctrl+C stop the cell:
an asynchronous `CellInterrupt` is raised in the worker thread, which Python delivers
at the next bytecode. Code stuck inside a C call cannot be stopped this way; the
runtime then reports itself busy rather than run a second cell beside the first (use
`IPyKernelRuntime` for hard stops). A `MemoryWatchdog` (memory_watchdog.py) stops a cell the
same way when the process passes `memory_limit`.
Over 400 lines: the worker thread, interrupt delivery and namespace change tracking
interlock; each part is a few methods of the one class that owns the shell.
"""

from __future__ import annotations

import asyncio
import gc
import queue
import threading
import time
import traceback
from collections.abc import Callable, Collection, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any

from cave_tui.runtime.base import (
    ExecutionResult,
    NamespaceChange,
    OutputListener,
    Runtime,
    RuntimeBusyError,
)
from cave_tui.runtime.capture import OutputCapture, routed_streams
from cave_tui.runtime.failures import RuntimeFailure
from cave_tui.runtime.figures import Figures, force_agg, open_figures
from cave_tui.runtime.items import Function, Injectable, Type, Variable, validate_name
from cave_tui.runtime.memory import (
    MemoryLimitSetting,
    MemoryUse,
    malloc_trim,
    process_rss,
    resolve_memory_limit,
    rough_size,
)
from cave_tui.runtime.memory_watchdog import CellWatch, MemoryWatchdog, stopped_message
from cave_tui.runtime.shipped import links, persist
from cave_tui.runtime.shipped.display_options import pin_display, set_width
from cave_tui.runtime.shipped.mutation import mutation_targets
from cave_tui.runtime.shipped.results import KeptResults
from cave_tui.runtime.shipped.summary import (
    HIDDEN_NAMES,
    VarInfo,
    bare_row,
    bounded_repr,
    describable_without_user_code,
    fingerprints,
    is_user_name,
    missing_name_message,
    summarize_namespace,
    user_names,
)
from cave_tui.runtime.shipped.tracebacks import is_cell_file, precise_syntax_errors
from cave_tui.runtime.upstream import ErrorFeedbackMode
from cave_tui.runtime.watched import HUNG_DIGESTS
from cave_tui.runtime.watched import set_async_exc as _set_async_exc

INTERRUPT_GRACE = 2.0
SUMMARY_OBJECT_BUDGET = 0.5  # seconds to describe one object before it is skipped
SUMMARY_TOTAL_BUDGET = 5.0  # seconds for a whole namespace summary
PERSIST_OBJECT_BUDGET = 2.0  # seconds to pickle one small value for its digest
PERSIST_TOTAL_BUDGET = 30.0  # seconds for the digests of a whole listing


class SummaryTimeout(Exception):
    """Raised in the summary thread when one object takes too long to describe."""


class _CellTicket:
    """Which cell a submitted run became (`seq`, once begun): a stop names that cell."""

    seq: int | None = None


class CellInterrupt(KeyboardInterrupt):
    """Raised inside a cell's thread to stop it (timeout, Ctrl+C, cancellation)."""


class MemoryLimitExceeded(CellInterrupt):
    """The cell was stopped because the process passed the runtime's memory limit.

    Raised in the cell's thread with no message; the result's error is then a new one whose
    message says what happened (`memory_watchdog.stopped_message`)."""


class MemoryLimitWarning(ResourceWarning):
    """A cell's output line: a C call past the memory limit that the runtime cannot stop."""


def _failed_line(error: BaseException | None) -> int | None:
    """The cell line whose statement raised *error* (0: nothing ran), None on success."""
    if error is None:
        return None
    tb = error.__traceback__
    while tb is not None:
        if is_cell_file(tb.tb_frame.f_code.co_filename):
            return tb.tb_lineno
        tb = tb.tb_next
    return 0


class IPythonRuntime(Runtime):
    """In-process runtime: zero-copy access to injected objects, shared host memory."""

    in_process = True

    def __init__(
        self,
        functions: list[Function] | None = None,
        variables: list[Variable] | None = None,
        types: list[Type] | None = None,
        security_checker: Any = None,
        error_feedback_mode: ErrorFeedbackMode = ErrorFeedbackMode.PLAIN,
        *,
        capture_chars: int = 200_000,
        cell_timeout: float | None = None,
        memory_limit: MemoryLimitSetting = "auto",
    ) -> None:
        """*memory_limit*: the process's RSS at which a running cell is stopped (bytes, "4G",
        "auto": min(80% of RAM, RSS + available memory now), None: no watchdog)."""
        super().__init__(functions, variables, types, security_checker, error_feedback_mode)
        self.capture_chars = capture_chars
        self.cell_timeout = cell_timeout  # seconds a cell may run when `execute` names none
        limit = resolve_memory_limit(memory_limit)
        self._watchdog = None if limit is None else MemoryWatchdog(limit, self._stop_for_memory)
        pin_display()  # a cell's output must not depend on the terminal (display.py)
        force_agg()  # a figure never opens a window: it is drawn in the log (figures.py)
        self._ns: dict[str, Any] = {}
        self._kept_results = KeptResults(self._ns)  # frame results the table view opens
        self._result_frame: str | None = None  # the running cell's, set by its displayhook
        self._cell_seq = 0  # cells begun so far: an interrupt names the one it is for
        self._shell = self._make_shell(self._ns)
        self._hidden: set[str] = set(self._shell.user_ns_hidden) | set(HIDDEN_NAMES)
        self._jobs: queue.SimpleQueue[tuple[Any, Future[Any]] | None] = queue.SimpleQueue()
        self._worker: threading.Thread | None = None
        self._worker_id: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._cell_lock = threading.Lock()
        self._in_cell = False
        self._pending: Future[Any] | None = None
        self._definitions = persist.Definitions()  # the source of what cells defined
        for item in self._injected.values():
            self._ns[item.name] = item.value

    # -- construction ----------------------------------------------------------
    def _make_shell(self, ns: dict[str, Any]) -> Any:
        from IPython.core.displayhook import DisplayHook
        from IPython.core.interactiveshell import InteractiveShell
        from traitlets.config import Config

        class _QuietShell(InteractiveShell):
            """Errors are formatted by us from the exception object: IPython prints none."""

            def showtraceback(self, *args: Any, **kwargs: Any) -> None:
                pass

            def showsyntaxerror(self, *args: Any, **kwargs: Any) -> None:
                pass

            def showindentationerror(self) -> None:
                pass

        config = Config()
        config.HistoryManager.enabled = False
        shell = _QuietShell(config=config, user_ns=ns)
        shell.colors = "nocolor"
        precise_syntax_errors(shell)  # "'(' was never closed", not "incomplete input"

        runtime = self

        class _CaptureHook(DisplayHook):
            """Writes the last expression's value, bounded, without storing `_`/`Out`; a
            frame is kept for the table view (results.py)."""

            def __call__(self, result: Any = None) -> None:
                if result is None:
                    return
                hidden = runtime._hidden - set(runtime._injected)
                runtime._result_frame = runtime._kept_results.name_for(
                    result, lambda name: is_user_name(name, hidden)
                )
                module = type(result).__module__ or ""
                if module.startswith(("pandas", "numpy", "pyarrow")):
                    text = repr(result)  # these reprs are bounded by their print options
                else:
                    text = bounded_repr(result, 20_000)
                print(text)

        hook = _CaptureHook(shell=shell, cache_size=0)
        shell.displayhook = hook
        shell.display_trap.hook = hook
        shell.loop_runner = self._run_coroutine
        return shell

    @property
    def shell(self) -> Any:
        """The underlying IPython shell (for front ends that need magics)."""
        return self._shell

    @property
    def memory_limit(self) -> int | None:
        """The RSS in bytes at which a running cell is stopped (None: no watchdog)."""
        return self._watchdog.limit if self._watchdog is not None else None

    @property
    def memory_watchdog(self) -> MemoryWatchdog | None:
        """The watchdog (its `interval`, `grace` and `samples`), None without a limit."""
        return self._watchdog

    def memory_use(self) -> MemoryUse:
        """This process's memory now and the limit (cheap: a status line may poll it)."""
        return MemoryUse(process_rss(), self.memory_limit)

    # -- worker thread ---------------------------------------------------------
    def _run_coroutine(self, coro: Any) -> Any:
        """IPython's loop runner for top-level await: a persistent per-runtime loop."""
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        # Tasks an interrupted cell left behind (e.g. a sub-agent's run) end here.
        leftovers = [t for t in asyncio.all_tasks(self._loop) if not t.done()]
        for task in leftovers:
            task.cancel()
        if leftovers:
            self._loop.run_until_complete(asyncio.gather(*leftovers, return_exceptions=True))
        return self._loop.run_until_complete(coro)

    def _ensure_worker(self) -> None:
        if self._worker is not None and self._worker.is_alive():
            return
        ready = threading.Event()

        def main() -> None:
            self._worker_id = threading.get_ident()
            ready.set()
            while True:
                try:
                    job = self._jobs.get()
                    if job is None:
                        return
                    fn, fut = job
                    if not fut.set_running_or_notify_cancel():
                        continue
                    try:
                        fut.set_result(fn())
                    except BaseException as exc:  # delivered to the awaiting side
                        if not fut.done():
                            fut.set_exception(exc)
                except CellInterrupt:
                    continue  # a late interrupt that landed between cells: harmless

        self._worker = threading.Thread(target=main, name="cave-ipython-cell", daemon=True)
        self._worker.start()
        ready.wait()

    def _submit(self, fn: Any) -> Future[Any]:
        self._ensure_worker()
        fut: Future[Any] = Future()
        self._jobs.put((fn, fut))
        return fut

    # -- the contract ----------------------------------------------------------
    def inject(self, item: Injectable) -> None:
        if not isinstance(item, Variable | Function | Type):
            raise TypeError(
                f"inject() takes a Variable, Function or Type, not {type(item).__name__}"
            )
        validate_name(item.name)
        self._injected[item.name] = item
        self._ns[item.name] = item.value
        self._hidden.discard(item.name)
        self.namespace_changed(NamespaceChange(changed=(item.name,)))

    async def _bound(self, name: str) -> bool:
        return name in self._ns

    async def retrieve(self, name: str) -> Any:
        if name not in self._ns or (name in self._hidden and name not in self._injected):
            raise KeyError(self._missing_message(name))
        return self._ns[name]

    def _missing_message(self, name: str) -> str:
        names = [n for n in self._ns if not n.startswith("_") and n not in self._hidden]
        return missing_name_message(name, names)

    async def delete(self, name: str) -> None:
        if name not in self._ns or name in self._hidden:
            raise KeyError(self._missing_message(name))
        del self._ns[name]
        self._injected.pop(name, None)
        self.namespace_changed(NamespaceChange(deleted=(name,)))

    async def reset(self) -> None:
        await self._wait_idle()
        for name in [n for n in self._ns if n not in self._hidden and not n.startswith("__")]:
            del self._ns[name]
        for item in self._injected.values():
            self._ns[item.name] = item.value
        self._definitions.clear()
        self._kept_results.clear()
        self.namespace_changed(NamespaceChange(everything=True))

    async def namespace_summary(self) -> list[VarInfo]:
        hidden = (self._hidden - set(self._injected)) | self.unlisted_names()
        descriptions = self.descriptions()
        names = [n for n in list(self._ns) if is_user_name(n) and n not in hidden]
        if all(describable_without_user_code(self._ns.get(n)) for n in names):
            rows = summarize_namespace(self._ns, hidden, descriptions)  # fast path, no user code
            _relate(self._ns, rows)
            return rows
        return await asyncio.get_running_loop().run_in_executor(
            None, self._watched_summary, hidden, descriptions
        )

    async def namespace_listing(self) -> list[VarInfo]:
        hidden = (self._hidden - set(self._injected)) | self.unlisted_names()
        descriptions = self.descriptions()
        names = user_names(self._ns, hidden, descriptions)
        if all(describable_without_user_code(self._ns.get(n)) for n in names):
            rows = summarize_namespace(self._ns, hidden, descriptions, limit=None)
            _relate(self._ns, rows)
            return rows
        rows = await asyncio.get_running_loop().run_in_executor(
            None, self._watched_summary, hidden, descriptions, None
        )
        listed = {r.name for r in rows}
        for name in user_names(self._ns, hidden, descriptions):  # past the time budget
            if name not in listed and name in self._ns:
                rows.append(bare_row(name, self._ns.get(name), descriptions.get(name, "")))
        return rows

    async def persistable(
        self, digest_below: int = 0, skip_digest: Collection[str] = ()
    ) -> list[persist.Persistable]:
        hidden = (self._hidden - set(self._injected)) | self.unlisted_names()
        names = user_names(self._ns, hidden, self.descriptions())
        # On a watched thread: pickling for the digests may run the objects' own code.
        skip = frozenset(skip_digest)
        return await asyncio.to_thread(self._watched_persistable, names, digest_below, skip)

    def _watched_summary(
        self, hidden: set[str], descriptions: dict[str, str], limit: int | None = 10_000
    ) -> list[VarInfo]:
        """Summarise on a helper thread; stop any object that takes too long to describe.

        Objects are model-made: a `__repr__` or `__len__` that loops forever would
        otherwise hang whoever asked (the agent loop, the inspector). The slow
        object's preview becomes `<SummaryTimeout>` and the walk goes on; a walk
        that still does not finish is cut at SUMMARY_TOTAL_BUDGET with what it has.
        """
        rows: list[VarInfo] = []

        def walk(mark: Callable[[str], None]) -> None:
            summarize_namespace(self._ns, hidden, descriptions, limit, rows=rows, on_item=mark)
            mark("")
            _relate(self._ns, rows)

        _watched_walk(walk, SUMMARY_OBJECT_BUDGET, SUMMARY_TOTAL_BUDGET)
        return list(rows)

    def _watched_persistable(
        self, names: list[str], digest_below: int, skip: frozenset[str] = frozenset()
    ) -> list[persist.Persistable]:
        """`persist.persistable` bounded like the summary: a digest whose pickling runs a
        model-written `__getstate__` that hangs is stopped (the value goes without a digest,
        and its object gets none again while it lives: `HUNG_DIGESTS`); names the walk did not reach
        by PERSIST_TOTAL_BUDGET are listed without digests."""
        rows: list[persist.Persistable] = []

        def walk(mark: Callable[[str], None]) -> None:
            for name in names:
                mark(name)
                obj = self._ns.get(name)
                below = 0 if name in skip or obj in HUNG_DIGESTS else digest_below
                started = time.monotonic()
                found = persist.persistable(self._ns, [name], self._definitions, below)
                rows.extend(found)
                slow = time.monotonic() - started >= PERSIST_OBJECT_BUDGET
                if below and slow and all(row.digest is None for row in found):
                    HUNG_DIGESTS.add(obj)  # stopped: pickling it hangs

        _watched_walk(walk, PERSIST_OBJECT_BUDGET, PERSIST_TOTAL_BUDGET)
        done = {row.name for row in rows}
        return rows + persist.persistable(self._ns, [n for n in names if n not in done])

    @property
    def cell_still_running(self) -> bool:
        pending = self._pending
        return pending is not None and not pending.done()

    async def interrupt(self) -> None:
        """Interrupt the cell running now: the executor may run this late, when that cell
        has ended and the next one begun, which it must not reach."""
        cell = self._cell_seq
        await asyncio.get_running_loop().run_in_executor(None, self._interrupt_blocking, 0.0, cell)

    def _interrupt_once(
        self, cause: type[CellInterrupt] = CellInterrupt, cell: int | None = None
    ) -> bool:
        """Raise *cause* in the worker if a cell (the *cell*-th, when given) is running;
        True if sent."""
        with self._cell_lock:
            if not self._in_cell or self._worker_id is None:
                return False
            if cell is not None and cell != self._cell_seq:
                return False  # that cell is over: a later one is not what was asked
            _set_async_exc(self._worker_id, cause)
            return True

    def _stop_for_memory(self) -> bool:
        """The watchdog's stop: MemoryLimitExceeded in the running cell."""
        return self._interrupt_once(MemoryLimitExceeded)

    def _interrupt_blocking(self, grace: float, cell: int | None = None) -> bool:
        """Interrupt repeatedly for up to *grace* seconds (only the *cell*-th cell, when
        given); True once no cell runs."""
        deadline = time.monotonic() + grace
        while True:
            if not self._interrupt_once(cell=cell):
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)

    def _stop_blocking(self, fut: Future[Any], ticket: _CellTicket, grace: float) -> bool:
        """Stop the cell *fut* runs (never a later one): unstarted, it never starts; else it
        is interrupted for up to *grace* seconds. True once it has ended."""
        if fut.cancel():
            return True
        deadline = time.monotonic() + grace
        while not fut.done():
            if ticket.seq is not None:
                self._interrupt_once(cell=ticket.seq)
            if time.monotonic() >= deadline:
                return fut.done()
            time.sleep(0.02)
        return True

    async def _wait_idle(self, timeout: float = 0.0) -> None:
        pending = self._pending
        if pending is None or pending.done():
            self._pending = None
            return
        try:
            await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(pending)), timeout or None)
        except TimeoutError:
            raise RuntimeBusyError(
                "the previous cell is still running inside native code and could not be "
                "interrupted; wait for it to return, or use the kernel runtime (--kernel) "
                "which can kill it"
            ) from None
        except BaseException:
            pass
        self._pending = None

    async def execute(
        self,
        code: str,
        timeout: float | None = None,
        *,
        on_output: OutputListener | None = None,
        checked: bool = True,
    ) -> ExecutionResult:
        blocked = self.blocked_result(code, checked=checked)
        if blocked is not None:
            return blocked
        if self.security_checker is not None:
            # A checked cell must run as checked: no automagic/autocall rewriting of `ls`.
            self._shell.automagic = False
            self._shell.autocall = 0
        self.sent_definitions.record(code)
        if self._worker_id is not None and threading.get_ident() == self._worker_id:
            # Called from inside one of our own cells (a sub-agent sharing this
            # runtime): run it inline; the outer cell's timeout covers it.
            return await self._run_nested(code, on_output)
        try:
            await self._wait_idle(timeout=1.0)
        except RuntimeBusyError as exc:
            return ExecutionResult(success=False, error=str(exc), error_type="RuntimeBusy")
        if timeout is None:
            timeout = self.cell_timeout
        capture = OutputCapture(self.capture_chars, on_write=on_output)
        ticket = _CellTicket()
        fut = self._submit(lambda: self._run_cell(code, capture, ticket))
        # However the cell ends (done, timed out, interrupted, cancelled, stuck then
        # returning later), its end is the namespace change the listeners hear of.
        fut.add_done_callback(self._cell_done)
        self._pending = fut
        loop = asyncio.get_running_loop()
        waiter = asyncio.wrap_future(fut)
        try:
            result: ExecutionResult = await asyncio.wait_for(asyncio.shield(waiter), timeout)
        except TimeoutError:
            stop = self._stop_blocking
            stopped = await loop.run_in_executor(None, stop, fut, ticket, INTERRUPT_GRACE)
            if not stopped:  # stuck in native code: what it did so far is there already
                self.namespace_changed(NamespaceChange(everything=True))
            return await self._after_stop(fut, capture, stopped, timed_out=True, timeout=timeout)
        except asyncio.CancelledError:
            # Shielded: a caller cancelled again at once (anyio's cancel scopes do, at every
            # await) must not cancel the interrupt before it was sent.
            # The stop outlives this call when it is cancelled again: pinned to this cell,
            # it never reaches the next one.
            stopping = loop.run_in_executor(None, self._stop_blocking, fut, ticket, INTERRUPT_GRACE)
            stopped = await asyncio.shield(stopping)
            if not stopped:
                self.namespace_changed(NamespaceChange(everything=True))
            raise
        self._pending = None
        return result

    def _cell_done(self, fut: Future[Any]) -> None:
        if fut.cancelled() or fut.exception() is not None:
            self.namespace_changed(NamespaceChange(everything=True))
        else:
            self.result_changed(fut.result())

    async def _after_stop(
        self,
        fut: Future[Any],
        capture: OutputCapture,
        stopped: bool,
        *,
        timed_out: bool,
        timeout: float | None,
    ) -> ExecutionResult:
        reason = f"cell timed out after {timeout:g}s" if timed_out else "cell interrupted"
        if stopped and fut.cancelled():  # stopped before it began
            self._pending = None
            reason = f"cell timed out after {timeout:g}s before it began"
            return ExecutionResult(
                success=False, error=reason, error_type="Timeout", timed_out=True
            )
        if stopped:
            try:
                result: ExecutionResult = await asyncio.wait_for(asyncio.wrap_future(fut), 5)
            except Exception:
                result = ExecutionResult(success=False, output=capture.getvalue())
            self._pending = None
            result.success = False
            result.timed_out = timed_out
            result.interrupted = True
            result.error = f"{reason} and was stopped (KeyboardInterrupt)."
            result.error_type = "Timeout" if timed_out else "Interrupted"
            return result
        return ExecutionResult(
            success=False,
            output=capture.getvalue(),
            error=(
                f"{reason}, but it is stuck in native code and could not be stopped; "
                "the runtime stays busy until it returns."
            ),
            error_type="Timeout" if timed_out else "Interrupted",
            timed_out=timed_out,
            interrupted=True,
        )

    # -- runs on the worker thread -----------------------------------------------
    def _run_cell(self, code: str, capture: OutputCapture, ticket: _CellTicket) -> ExecutionResult:
        """The cell and its bookkeeping, all inside the cell's window: a model-written method
        that hangs in the bookkeeping (a decorator's `__getattr__`, an exception's `__str__`)
        is stopped by the cell's timeout like the cell itself."""
        hidden = self._hidden - set(self._injected)
        before = fingerprints(self._ns, hidden)  # runs no model code
        width = self.display_width
        set_width(width)  # the front end's width, as it was when the cell started
        self._result_frame = None
        started = time.perf_counter()
        error: BaseException | None = None
        watch: CellWatch | None = None
        if self._watchdog is not None:
            self._watchdog.start()  # not in the cell's window: see MemoryWatchdog.start
        with self._cell_lock:
            self._in_cell = True
            self._cell_seq += 1
            ticket.seq = self._cell_seq
        try:
            try:
                with routed_streams(capture), self._memory_watch(capture) as watch:
                    try:
                        outcome = self._shell.run_cell(code, store_history=False)
                        error = outcome.error_before_exec or outcome.error_in_exec
                    except BaseException as exc:  # an interrupt outside IPython's run_code
                        error = exc
            except MemoryLimitExceeded:
                pass  # a stop that landed after the cell's code had ended: it ran to its end
            try:
                result = self._result(code, capture, before, started, error, watch)
            except CellInterrupt as exc:  # stopped in the bookkeeping: the plain facts
                result = self._bare_result(capture, before, started, error or exc)
            result.display_width = width
            if result.success:
                result.result_frame = self._result_frame
            return result
        finally:
            self._leave_cell()

    def _bare_result(
        self,
        capture: OutputCapture,
        before: dict[str, str],
        started: float,
        error: BaseException,
    ) -> ExecutionResult:
        """A result made without running any model code (its bookkeeping was stopped)."""
        after = fingerprints(self._ns, self._hidden - set(self._injected))
        return ExecutionResult(
            success=False,
            output=capture.getvalue(),
            changed=[n for n, fp in after.items() if before.get(n) != fp],
            deleted=[n for n in before if n not in after],
            duration=time.perf_counter() - started,
            error=f"{type(error).__name__} while the cell's result was made",
            error_type=type(error).__name__,
            interrupted=isinstance(error, KeyboardInterrupt),
        )

    @contextmanager
    def _memory_watch(self, capture: OutputCapture) -> Iterator[CellWatch | None]:
        """The watchdog's watch over the cell running in this (the worker) thread."""
        if self._watchdog is None:
            yield None
            return

        def warn(text: str) -> None:  # the user sees it in the cell's streamed output
            capture.write(f"\n{MemoryLimitWarning.__name__}: {text}\n")

        try:
            with self._watchdog.watch(threading.get_ident(), warn) as watch:
                yield watch
        finally:
            self._drop_pending_stop()

    def _drop_pending_stop(self) -> None:
        """Cancel a stop sent but not yet delivered (the watch is off: none follows)."""
        while True:
            try:
                with self._cell_lock:
                    if self._worker_id is not None:
                        _set_async_exc(self._worker_id, None)
                return
            except CellInterrupt:
                continue

    def _after_memory_stop(
        self, watch: CellWatch, error: MemoryLimitExceeded, before: dict[str, str]
    ) -> MemoryLimitExceeded:
        """Free what the stopped cell held and return the error that says what happened.

        The names the cell created hold what it was building: they are removed (the names
        of earlier cells stay). The frames of the traceback are cleared, so the locals of
        the functions the cell was in go too; then a collection and `malloc_trim`.
        """
        hidden = self._hidden - set(self._injected)
        created = [n for n in fingerprints(self._ns, hidden) if n not in before]
        removed = sorted(
            ((name, rough_size(self._ns.pop(name))) for name in created),
            key=lambda item: -item[1],
        )
        if error.__traceback__ is not None:
            traceback.clear_frames(error.__traceback__)
        self._shell.last_execution_result = None
        gc.collect()
        malloc_trim()
        assert self._watchdog is not None
        text = stopped_message(watch, self._watchdog.limit, removed, process_rss())
        return MemoryLimitExceeded(text).with_traceback(error.__traceback__)

    async def _run_nested(self, code: str, on_output: OutputListener | None) -> ExecutionResult:
        """A cell run on the worker thread while an outer cell of this runtime runs."""
        hidden = self._hidden - set(self._injected)
        before = fingerprints(self._ns, hidden)
        started = time.perf_counter()
        capture = OutputCapture(self.capture_chars, on_write=on_output)
        error: BaseException | None = None
        with routed_streams(capture):
            try:
                transformed = self._shell.transform_cell(code)
                outcome = await self._shell.run_cell_async(
                    code, store_history=False, transformed_cell=transformed
                )
                error = outcome.error_before_exec or outcome.error_in_exec
            except Exception as exc:
                error = exc
        result = self._result(code, capture, before, started, error)
        self.result_changed(result)
        return result

    def _result(
        self,
        code: str,
        capture: OutputCapture,
        before: dict[str, str],
        started: float,
        error: BaseException | None,
        watch: CellWatch | None = None,
    ) -> ExecutionResult:
        if watch is not None and isinstance(error, MemoryLimitExceeded):
            error = self._after_memory_stop(watch, error, before)
        hidden = self._hidden - set(self._injected)
        duration = time.perf_counter() - started
        figures = Figures()
        open_figures(figures)  # what the kernel's inline backend sends at a cell's end
        after = fingerprints(self._ns, hidden)
        changed = [n for n, fp in after.items() if before.get(n) != fp]
        maybe = mutation_targets(code, _failed_line(error)) & set(after)
        changed += [n for n in after if n in maybe and n not in changed]
        deleted = [n for n in before if n not in after]
        self._record_definitions(code, changed)
        result = ExecutionResult(
            success=error is None,
            output=capture.getvalue(),
            changed=changed,
            deleted=deleted,
            duration=duration,
            output_truncated_chars=capture.dropped,
            figures=figures.kept,
            figures_dropped=figures.dropped,
            figure_notes=figures.notes,
        )
        if error is not None:
            result.error_type = type(error).__name__
            if isinstance(error, MemoryLimitExceeded):
                result.error_type = RuntimeFailure.MEMORY_LIMIT
            result.interrupted = isinstance(error, KeyboardInterrupt)
            result.error = error  # upstream's exception; `error_text` is its shaped traceback
        return self.shape_error(result)

    def _record_definitions(self, code: str, changed: list[str]) -> None:
        """Keep the source of the functions and classes the cell defined (dumps use it)."""
        if not changed:
            return
        try:
            transformed = self._shell.transform_cell(code)
        except Exception:  # IPython could not transform it: the cell did not run as such
            return
        self._definitions.record(transformed, self._ns, changed)

    def _leave_cell(self) -> None:
        while True:
            try:
                with self._cell_lock:
                    self._in_cell = False
                    if self._worker_id is not None:
                        _set_async_exc(self._worker_id, None)  # drop a pending interrupt
                return
            except CellInterrupt:
                continue

    async def stop(self) -> None:
        if self._watchdog is not None:
            self._watchdog.close()
        if self._worker is not None and self._worker.is_alive():
            self._interrupt_blocking(0.5)
            self._jobs.put(None)
        self._worker = None
        if self._loop is not None and not self._loop.is_running():
            self._loop.close()
            self._loop = None

    @property
    def label(self) -> str:
        return "ipython"


def _watched_walk(
    walk: Callable[[Callable[[str], None]], None], object_budget: float, total_budget: float
) -> None:
    """Run *walk* on a helper thread (it calls its argument before each object); an object
    that takes over *object_budget* seconds gets `SummaryTimeout` raised in that thread, and
    the wait ends after *total_budget* seconds whatever the walk does (what it did stays)."""
    current = {"since": time.monotonic()}
    done = threading.Event()

    def mark(name: str) -> None:
        current["since"] = time.monotonic()

    def run() -> None:
        try:
            walk(mark)
        except BaseException:
            pass
        finally:
            done.set()

    worker = threading.Thread(target=run, name="cave-watched", daemon=True)
    started = time.monotonic()
    worker.start()
    while not done.wait(0.02):
        now = time.monotonic()
        if now - started > total_budget:
            break
        if now - current["since"] > object_budget and worker.ident is not None:
            _set_async_exc(worker.ident, SummaryTimeout)
            current["since"] = now


def _relate(ns: dict[str, Any], rows: list[VarInfo]) -> None:
    """Lookup keys and links between frames (runtime/shipped/links.py): a hint, never an error."""
    try:
        links.annotate(ns, rows)
    except Exception:
        pass
