"""The runtime interface the agent and the TUI talk to.

Two implementations share it: `IPythonRuntime` (in-process) and
`IPyKernelRuntime` (a separate kernel process). The agent only ever calls what
is declared here, so switching runtimes is one constructor argument.
"""

from __future__ import annotations

import copy
import functools
import inspect
import threading
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, cast

from cave_tui.runtime import upstream
from cave_tui.runtime.bindings import (
    bound_prefix,
    check_group,
    is_raw_binding,
    is_unlisted,
    raw_binding,
    unique_name_start,
)
from cave_tui.runtime.capture import sanitize_surrogates
from cave_tui.runtime.errors import RuntimeFailure
from cave_tui.runtime.figures import RENDER_LIMIT, FigureError, FigureFormat, check_rendered
from cave_tui.runtime.items import Function, Injectable, Type, Variable
from cave_tui.runtime.memory import MemoryUse
from cave_tui.runtime.provenance import Provenance
from cave_tui.runtime.sent_definitions import SentDefinitions
from cave_tui.runtime.shipped import figure_render, lazy
from cave_tui.runtime.shipped.detail import Detail, object_detail
from cave_tui.runtime.shipped.display_options import DEFAULT_WIDTH, clamp_width
from cave_tui.runtime.shipped.frame_window import FrameWindow, SortKey, find, frame_window
from cave_tui.runtime.shipped.persist import Keep, Persistable
from cave_tui.runtime.shipped.summary import VarInfo
from cave_tui.runtime.shipped.tracebacks import format_exception
from cave_tui.runtime.upstream import CellError, ErrorFeedbackMode, minimal_error, referenced_types


class SecurityViolationLike(Protocol):
    rule: str
    message: str
    lineno: int | None


class SecurityCheckerLike(Protocol):
    """What a runtime needs from a checker: `check(code)` returns violations."""

    def check(self, code: str) -> list[Any]: ...


SYNTAX_RULE = "SyntaxRule"  # the checker's rule for cells that do not parse


@dataclass(init=False)
class ExecutionResult:
    """What one cell did. `output` holds stdout, stderr, warnings and displays in order.

    Two readings of an error, one for each API (docs/design.md, "ExecutionResult.error"):
    `error` is upstream's, the exception object (the cell's own one when it ran in this
    process, a `SecurityError` when refused, else a `CellError`); `error_text` is cave's,
    the shaped traceback or reason the model is shown. Setting `error` to a str sets both.
    `stdout` is upstream's: the output followed by that text, None when both are empty.
    """

    success: bool
    output: str
    error_text: str | None  # shaped traceback or reason, None on success
    error_type: str | None  # e.g. "NameError", "Timeout", "SecurityError"
    changed: list[str]  # names bound, rebound or mutated
    deleted: list[str]
    duration: float
    timed_out: bool
    interrupted: bool
    security_violations: list[Any]
    output_truncated_chars: int  # chars dropped by the runtime's own output cap
    notice: str | None  # runtime event the model must know (restart, state loss)
    figures: list[bytes]  # PNGs it displayed, checked and bounded (runtime/figures.py)
    figures_dropped: int  # figures it displayed that were not kept (over the bounds, no PNG)
    figure_notes: list[str]  # one line per kept figure for the model (title, axes, series)
    display_width: int | None  # the width frames were printed at (None: not known)
    result_frame: str | None  # the name its frame result opens by (shipped/results.py)
    _exception: BaseException | None = field(repr=False, compare=False)

    def __init__(
        self,
        success: bool | None = None,
        output: str = "",
        error: str | BaseException | None = None,
        error_type: str | None = None,
        changed: list[str] | None = None,
        deleted: list[str] | None = None,
        duration: float = 0.0,
        timed_out: bool = False,
        interrupted: bool = False,
        security_violations: list[Any] | None = None,
        output_truncated_chars: int = 0,
        notice: str | None = None,
        *,
        stdout: str | None = None,
        error_text: str | None = None,
        figures: list[bytes] | None = None,
        figures_dropped: int = 0,
        figure_notes: list[str] | None = None,
        display_width: int | None = None,
        result_frame: str | None = None,
    ) -> None:
        self.output = sanitize_surrogates(output if stdout is None else stdout)
        self.error_type = error_type
        self.error = error
        if error_text is not None:
            self.error_text = sanitize_surrogates(error_text)
        self.success = (error is None) if success is None else success
        self.changed = list(changed or [])
        self.deleted = list(deleted or [])
        self.duration = duration
        self.timed_out = timed_out
        self.interrupted = interrupted
        self.security_violations = list(security_violations or [])
        self.output_truncated_chars = output_truncated_chars
        self.notice = notice
        self.figures = list(figures or [])
        self.figures_dropped = figures_dropped
        self.figure_notes = list(figure_notes or [])
        self.display_width = display_width
        self.result_frame = result_frame

    @property
    def error(self) -> BaseException | None:
        """Upstream's `error`: the exception, None on success."""
        return self._exception

    @error.setter
    def error(self, value: str | BaseException | None) -> None:
        if value is None:
            self._exception, self.error_text = None, None
        elif isinstance(value, BaseException):
            self._exception = value
            self.error_text = sanitize_surrogates(format_exception(value))
            self.error_type = self.error_type or type(value).__name__
        else:
            self._exception, self.error_text = CellError(value), sanitize_surrogates(value)

    @property
    def stdout(self) -> str | None:
        """Upstream's `stdout`: what the cell printed, then its error as the model sees it."""
        text = self.output
        if self.error_text:
            text += ("\n" if text and not text.endswith("\n") else "") + self.error_text
        return text or None

    @stdout.setter
    def stdout(self, value: str | None) -> None:
        self.output = value or ""

    @property
    def blocked(self) -> bool:
        return bool(self.security_violations)


@dataclass(frozen=True)
class NamespaceChange:
    """What a runtime call did to the namespace: names bound or mutated, names removed.

    `everything` means anything may have changed (a reset, a restart, an interrupted cell).
    """

    changed: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    everything: bool = False


NamespaceListener = Callable[[NamespaceChange], None]
OutputListener = Callable[[str], None]  # a running cell's output, chunk by chunk, any thread


def execute_streaming(
    runtime: Any,
    code: str,
    timeout: float | None,
    on_output: OutputListener,
    *,
    checked: bool = True,
) -> Awaitable[ExecutionResult]:
    """`runtime.execute(code, timeout)`, streaming its output to *on_output* when it can;
    *checked*=False: the user's own cell, which the security checker does not read.

    A runtime written to upstream's interface (0.7's `execute(code, timeout)`, 0.8's
    `execute(code)`) runs unchanged: each keyword is passed only to an `execute` that
    accepts it, also one set on the instance; one that takes no timeout runs its cells
    without cave's.
    """
    execute = getattr(runtime.execute, "__func__", runtime.execute)
    options: dict[str, Any] = {}
    if _accepts(execute, "timeout"):
        options["timeout"] = timeout
    if _accepts(execute, "on_output"):
        options["on_output"] = on_output
    if not checked and _accepts(execute, "checked"):
        options["checked"] = False
    return cast("Awaitable[ExecutionResult]", runtime.execute(code, **options))


@functools.cache
def _accepts(execute: Callable[..., Any], keyword: str) -> bool:
    """*execute* takes the keyword argument *keyword* (by name or through `**kwargs`)."""
    try:
        parameters = inspect.signature(execute).parameters
    except (TypeError, ValueError):
        return False
    return keyword in parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
    )


@dataclass
class Retrieved:
    """One name of `Runtime.retrieve_many`: its value, or the error `retrieve` raised for it
    (KeyError: not bound; a TypeError: the runtime keeps it to itself)."""

    name: str
    value: object = None
    error: Exception | None = None


class RuntimeBusyError(RuntimeFailure):
    """A previous cell is still running and could not be stopped."""


class Runtime(ABC):
    """Persistent Python namespace that runs model-written cells."""

    security_checker: SecurityCheckerLike | None
    # True when `inject(Variable(name, Pickled(...)))` unpickles the bytes in another
    # process (the kernel), so code in a pickle never runs in the host.
    unpickles_out_of_process: ClassVar[bool] = False
    # True when cells run in another process, which may crash or run out of memory alone.
    isolated: ClassVar[bool] = False
    # True when the namespace lives in this process and its calls run on the caller's
    # thread: a long listing is better run off the event loop (the in-process runtime).
    in_process: ClassVar[bool] = False
    # The width a cell prints frames at (display_options.py); a front end sets its log's
    # width with `set_display_width`, and the runtime applies it as each cell starts.
    display_width: int = DEFAULT_WIDTH

    def __init__(
        self,
        functions: list[Function] | None = None,
        variables: list[Variable] | None = None,
        types: list[Type] | None = None,
        security_checker: SecurityCheckerLike | None = None,
        error_feedback_mode: ErrorFeedbackMode = ErrorFeedbackMode.PLAIN,
    ) -> None:
        """Upstream's parameters, in upstream's order (functions first)."""
        self.security_checker = security_checker
        self.error_feedback_mode = ErrorFeedbackMode(error_feedback_mode)
        self._injected: dict[str, Injectable] = {}
        self._namespace_listeners: list[NamespaceListener] = []
        # Held while a registration checks its names and binds them (`_registration`).
        self._registry_lock = threading.RLock()
        given: list[Injectable] = [*(functions or []), *(types or []), *(variables or [])]
        items = [own_copy(i) for i in given]
        for item in items:
            self._injected[item.name] = item
        referring: list[Injectable] = [i for i in items if not isinstance(i, Type)]
        for item in referring:  # the classes they name, unless a Type of that name came
            for cls in referenced_types(item):
                if cls.__name__ not in self._injected:
                    self._injected[cls.__name__] = _auto_type(cls)

    # -- lifecycle (no-ops for the in-process runtime) -------------------------
    async def start(self) -> None:
        """Start the runtime; idempotent."""

    async def stop(self) -> None:
        """Release the runtime's resources; idempotent."""

    async def __aenter__(self) -> Runtime:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def set_display_width(self, width: int) -> None:
        """Print frames *width* columns wide from the next cell on (clamped to 20-1000)."""
        self.display_width = clamp_width(width)

    # -- change notification ---------------------------------------------------
    def add_namespace_listener(self, listener: NamespaceListener) -> Callable[[], None]:
        """Call *listener* after every namespace change; returns the function that unsubscribes.

        Every path that changes the namespace goes through the runtime (a cell, however it
        ended, inject, delete, reset, a restart), so a front end that listens here never
        misses one. Listeners are called from any thread and must be quick and thread-safe.
        """
        listeners = self.__dict__.setdefault("_namespace_listeners", [])
        listeners.append(listener)
        return lambda: listeners.remove(listener) if listener in listeners else None

    def namespace_changed(self, change: NamespaceChange) -> None:
        """Tell the listeners about *change* (a failing listener is ignored)."""
        for listener in list(self.__dict__.get("_namespace_listeners", ())):
            try:
                listener(change)
            except Exception:
                pass

    def result_changed(self, result: ExecutionResult) -> None:
        """`namespace_changed` for a finished cell (an interrupted one may have changed all)."""
        self.namespace_changed(
            NamespaceChange(
                tuple(result.changed), tuple(result.deleted), everything=result.interrupted
            )
        )

    # -- where cells run, and what the host sent them ------------------------------
    @property
    def provenance(self) -> Provenance:
        """Where this runtime's cells run (a dump's manifest records it)."""
        return Provenance.IN_PROCESS

    @property
    def sent_definitions(self) -> SentDefinitions:
        """The definitions of every cell the host sent (`execute` records each one): a dump
        keeps a function or class as source only if it is one of these."""
        sent = self.__dict__.get("_sent_definitions")
        if not isinstance(sent, SentDefinitions):
            sent = self.__dict__["_sent_definitions"] = SentDefinitions()
        return sent

    @property
    def cell_still_running(self) -> bool:
        """Whether a cell goes on running after its caller gave up on it (stuck in native
        code past an interrupt, in process); the next cell waits for it."""
        return False

    # -- the contract --------------------------------------------------------
    @property
    def injected(self) -> dict[str, Injectable]:
        """Items the host injected, by name (descriptions come from here)."""
        return dict(self._injected)

    def descriptions(self) -> dict[str, str]:
        unlisted = self.unlisted_names()  # bound, never listed
        return {n: (i.description or "") for n, i in self._injected.items() if n not in unlisted}

    @abstractmethod
    def inject(self, item: Injectable) -> None:
        """Bind a Variable/Function/Type in the namespace (replacing a same-named one)."""

    # -- upstream's spellings (cave_tui/runtime/upstream.py) ------------------------------------
    def inject_function(self, function: Function) -> None:
        """`inject` for a Function, and the classes its signature names (upstream)."""
        self._inject_new(function, Function)

    def inject_variable(self, variable: Variable) -> None:
        """`inject` for a Variable, and its value's class (upstream)."""
        self._inject_new(variable, Variable)

    def inject_type(self, type_obj: Type) -> None:
        """`inject` for a Type; its schema is shown unless it says otherwise (upstream)."""
        self._inject_new(type_obj, Type)

    def _inject_new(self, item: Injectable, kind: type) -> None:
        if not isinstance(item, kind):
            raise TypeError(f"expected a {kind.__name__}, got {type(item).__name__}")
        with self._registration():
            item = own_copy(item)
            if isinstance(self._injected.get(item.name), kind):
                raise ValueError(f"{kind.__name__} '{item.name}' already exists")
            self.inject(item)
            for cls in referenced_types(item):
                if cls.__name__ not in self._injected:
                    self._inject_quietly(_auto_type(cls))

    def _registration(self) -> threading.RLock:
        """The lock a registration holds from checking its names to binding them, so two
        threads registering one name cannot both see it free (one gets the ValueError)."""
        lock = self.__dict__.get("_registry_lock")
        if lock is None:  # a subclass that skipped Runtime.__init__
            lock = self.__dict__["_registry_lock"] = threading.RLock()
        return cast(threading.RLock, lock)

    def _inject_quietly(self, item: Type) -> None:
        """An automatic Type is a convenience: one that cannot be injected is left out."""
        try:
            self.inject(item)
        except Exception:
            self._injected.pop(item.name, None)

    def automatic_types(self) -> set[str]:
        """Names of the classes injected only because an item refers to them.

        They are bound (so `isinstance(x, Light)` works) but not listed in the namespace
        summary: upstream hides their schema too, and a listed `DataFrame` is noise.
        """
        return {n for n, i in self._injected.items() if getattr(i, "automatic", False)}

    def unlisted_names(self) -> set[str]:
        """Names bound but left out of namespace listings and dumps: the automatic types
        and the unlisted bindings (a skill's exports before its activation)."""
        return self.automatic_types() | {n for n, i in self._injected.items() if is_unlisted(i)}

    def without_unlisted(self, rows: list[VarInfo]) -> list[VarInfo]:
        unlisted = self.unlisted_names()
        return [r for r in rows if r.name not in unlisted] if unlisted else rows

    def given_names(self) -> set[str]:
        """Names of the items the user injected: not the automatic types, nor values a
        restore brought back that the model had made, nor the host's own tools (`by_host`:
        `activate_skill` and a skill's helpers)."""
        return {
            name
            for name, item in self._injected.items()
            if not getattr(item, "automatic", False)
            and not getattr(item, "made_by_model", False)
            and not getattr(item, "by_host", False)
        }

    def without_automatic_types(self, rows: list[VarInfo]) -> list[VarInfo]:
        automatic = self.automatic_types()
        return [r for r in rows if r.name not in automatic] if automatic else rows

    def _items(self, kind: type) -> list[Any]:
        """The injected items of *kind* the prompt describes (raw bindings are not)."""
        return [i for i in self._injected.values() if isinstance(i, kind) and i.described]

    # Upstream kept three registries; code written for it reads them by these names.
    # Each is a fresh read-only view, by name, of one kind of item in `injected`.
    @property
    def _functions(self) -> dict[str, Function]:
        """Upstream's registry of injected Functions, by name (a copy)."""
        return {i.name: i for i in self._items(Function)}

    @property
    def _variables(self) -> dict[str, Variable]:
        """Upstream's registry of injected Variables, by name (a copy)."""
        return {i.name: i for i in self._items(Variable)}

    @property
    def _types(self) -> dict[str, Type]:
        """Upstream's registry of injected Types, automatic ones included (a copy)."""
        return {i.name: i for i in self._items(Type)}

    def describe_functions(self) -> str:
        """Upstream's prompt text for the injected functions."""
        return upstream.describe_all(self._items(Function), str, "functions")

    def describe_variables(self) -> str:
        """Upstream's prompt text for the injected variables."""
        return upstream.describe_all(self._items(Variable), str, "variables")

    def describe_types(self) -> str:
        """Upstream's schemas of the injected types (automatic ones are hidden)."""
        return upstream.describe_all(self._items(Type), str, "types")

    async def get_from_namespace(self, name: str) -> Any:
        """Any name's value (upstream): KeyError when the namespace has no such name, as
        0.8 and 0.7's kernel runtime answer (docs/upstream-compat.md)."""
        return await self.retrieve(name)

    # -- upstream 0.8's binding contract (runtime/bindings.py) -------------------------------
    def inject_into_namespace(self, name: str, value: Any, *, replace: bool = True) -> None:
        """Bind *value* as *name* without describing it to the model; kept across a reset.
        Rebinding a raw binding replaces it unless *replace* is False; a name the runtime
        describes is never taken (ValueError)."""
        existing = self._injected.get(name)
        if existing is not None and is_raw_binding(existing):
            if not replace:
                raise ValueError(f"Binding '{name}' already exists")
            self.inject(raw_binding(name, value))
            return
        self.inject_resources(bindings=[(name, value)])

    def inject_resources(
        self,
        *,
        functions: list[Function] | None = None,
        variables: list[Variable] | None = None,
        types: list[Type] | None = None,
        bindings: list[tuple[str, Any]] | None = None,
    ) -> None:
        """Inject a group all or nothing: every name is checked free (ValueError) and every
        item made ready to bind (`_stage`) before the first is bound."""
        raw = [raw_binding(name, value) for name, value in bindings or []]
        for item, kind in [
            *((t, Type) for t in types or []),
            *((f, Function) for f in functions or []),
            *((v, Variable) for v in variables or []),
        ]:
            if not isinstance(item, kind):
                raise TypeError(f"expected a {kind.__name__}, got {type(item).__name__}")
        with self._registration():
            given: list[Injectable] = [*(types or []), *(functions or []), *(variables or [])]
            items: list[Injectable] = [*(own_copy(i) for i in given), *raw]
            automatic = self.automatic_types()  # an explicit item displaces an inferred type
            check_group(items, (n for n in self._injected if n not in automatic))
            staged = [self._stage(item) for item in items]
            for item, ready in zip(items, staged, strict=True):
                self._commit(item, ready)
            for item in items:
                if not is_raw_binding(item):
                    for cls in referenced_types(item):
                        if cls.__name__ not in self._injected:
                            self._inject_quietly(_auto_type(cls))

    def _stage(self, item: Injectable) -> object:
        """The fallible part of injecting *item*, done before any item of a group is bound
        (the kernel runtime encodes the value here); passed to `_commit`."""
        return None

    def _commit(self, item: Injectable, staged: object) -> None:
        """Bind *item*, made ready by `_stage`."""
        self.inject(item)

    async def _bound(self, name: str) -> bool:
        """Whether the namespace binds *name* (a value the model made included)."""
        if name in self._injected:
            return True
        try:
            await self.detail(name)
        except KeyError:
            return False
        return True

    async def _bind_raw(self, name: str, value: Any) -> None:
        """Bind *value* as the raw binding *name*, waiting until it is bound."""
        self.inject(raw_binding(name, value))

    async def bind_unique(self, prefix: str, value: Any, *, start: int = 1) -> str:
        """Bind *value* under the first free `prefix_N` (N from *start*) as a raw binding
        and return the name; one call at a time per runtime, so two agents sharing it
        never get the same name."""
        import asyncio

        name = unique_name_start(prefix, start)
        prefix = bound_prefix(prefix)
        lock = self.__dict__.get("_bind_lock")
        if not isinstance(lock, asyncio.Lock):
            lock = self.__dict__["_bind_lock"] = asyncio.Lock()
        async with lock:
            index = start
            while await self._bound(name):
                index += 1
                name = f"{prefix}_{index}"
            await self._bind_raw(name, value)
        return name

    def update_variable(self, name: str, value: Any, description: str | None = None) -> None:
        """Rebind the injected variable *name* to *value*, keeping its description.

        As upstream: KeyError when *name* is not an injected Variable, TypeError when
        neither value is None and their types differ.
        """
        previous = self._injected.get(name)
        if not isinstance(previous, Variable):
            available = [n for n, i in self._injected.items() if isinstance(i, Variable)]
            raise KeyError(f"Variable '{name}' does not exist. Available variables: {available}")
        old = previous.value
        if old is not None and value is not None and type(old) is not type(value):
            raise TypeError(
                f"Cannot update variable '{name}': type mismatch. "
                f"Expected {type(old).__name__}, got {type(value).__name__}"
            )
        if description is None:
            description = previous.description
        self.inject(Variable(name, value, description))

    @abstractmethod
    async def execute(
        self,
        code: str,
        timeout: float | None = None,
        *,
        on_output: OutputListener | None = None,
        checked: bool = True,
    ) -> ExecutionResult:
        """Run *code* as one cell. Never raises for errors in the code itself.

        *on_output* receives the cell's output as it is written (from any thread), before
        the cell ends; the result's `output` holds all of it (bounded) as before.
        *checked*: the security checker reads the cell first (the model's code); False for
        the user's own cells (`!`), which only the sandbox bounds.
        """

    @abstractmethod
    async def retrieve(self, name: str) -> Any:
        """Return the live object bound to *name*; KeyError if there is none."""

    async def render_figure(self, name: str, fmt: FigureFormat) -> bytes:
        """*name*'s matplotlib Figure drawn as a *fmt* file where it lives, checked
        (`check_rendered`): only bytes, never the object. KeyError if unbound; FigureError
        when it is no Figure or cannot be drawn."""
        value = await self.retrieve(name)
        try:
            data = figure_render.render(value, fmt.value, RENDER_LIMIT)
        except (figure_render.NotAFigure, figure_render.RenderedTooBig) as exc:
            raise FigureError(f"cannot write {name!r} as {fmt.name}: {exc}") from None
        return check_rendered(data, fmt)

    async def stream_parquet(
        self, name: str, path: str, *, overwrite: bool = False
    ) -> lazy.Streamed | None:
        """*name*'s lazy or distributed frame streamed to the Parquet file *path* where it
        lives (`shipped/lazy.stream_parquet`: never collected; only the path, rows and bytes
        come back); None when *name* holds no lazy frame. KeyError if unbound;
        FileExistsError, `lazy.NotStreamed`, `lazy.StreamError` as that function raises."""
        import asyncio

        value = await self.retrieve(name)
        return await asyncio.to_thread(lazy.stream_parquet, value, path, overwrite=overwrite)

    async def retrieve_many(self, names: list[str]) -> list[Retrieved]:
        """`retrieve` of each of *names*, in order, an error kept per name (a runtime in
        another process fetches them in one round trip)."""
        out = []
        for name in names:
            try:
                out.append(Retrieved(name, await self.retrieve(name)))
            except Exception as exc:
                out.append(Retrieved(name, error=exc))
        return out

    async def detail(self, name: str) -> Detail:
        """The detail view of *name* (bounded cost), computed where the object lives."""
        import asyncio

        obj = await self.retrieve(name)
        return await asyncio.to_thread(object_detail, name, obj)

    async def frame_window(
        self, name: str, start: int, stop: int, sort: SortKey | None = None
    ) -> FrameWindow:
        """Rows [*start*, *stop*) of the frame *name* as Arrow, in *sort*'s order, read
        where it lives (KeyError: no such name; `NotATable`: not a frame)."""
        import asyncio

        obj = await self.retrieve(name)
        return await asyncio.to_thread(frame_window, obj, start, stop, sort)

    async def frame_find(
        self, name: str, text: str, row: int, column: int, sort: SortKey | None = None
    ) -> tuple[int, int] | None:
        """The next cell of the frame *name* after (*row*, *column*) whose text holds
        *text* (case-insensitive, wrapping), or None."""
        import asyncio

        obj = await self.retrieve(name)
        return await asyncio.to_thread(find, obj, text, row, column, sort)

    @abstractmethod
    async def namespace_summary(self) -> list[VarInfo]:
        """Bounded-cost summary of every user-visible name, injected items included."""

    async def namespace_listing(self) -> list[VarInfo]:
        """Every user-visible name, described (the inspector's list: no cap on the count).

        `namespace_summary()` stays bounded for the prompt (dumps and snapshots use
        `persistable()`); a runtime lists names past its bound here, the far ones by type
        only when time runs short.
        """
        return await self.namespace_summary()

    async def persistable(
        self, digest_below: int = 0, skip_digest: Collection[str] = ()
    ) -> list[Persistable]:
        """Every user name as a dump or snapshot keeps it, never bounded by the display budget.

        Host-injected items are listed too (the dumper decides about them); values whose
        pickle is under *digest_below* bytes carry its digest, but for names in
        *skip_digest* (a snapshot already holds them, unchanged). This default is built from
        `namespace_listing()` (no digests, no definitions); the runtimes override it.
        """
        return persistable_from_rows(self.without_automatic_types(await self.namespace_listing()))

    @abstractmethod
    async def delete(self, name: str) -> None:
        """Remove *name* from the namespace; KeyError if absent."""

    @abstractmethod
    async def reset(self) -> None:
        """Clear user state, then re-inject the injected items."""

    @abstractmethod
    async def interrupt(self) -> None:
        """Stop the running cell, if any."""

    async def names(self) -> list[str]:
        """Every user-visible name (complete: not bounded like `namespace_summary`)."""
        return [item.name for item in await self.persistable()]

    def check_security(self, code: str) -> list[Any]:
        if self.security_checker is None:
            return []
        return list(self.security_checker.check(code))

    def blocked_result(self, code: str, *, checked: bool = True) -> ExecutionResult | None:
        """The result for a cell the security checker refuses, or None when it may run
        (always None when not *checked*: the user's own cell)."""
        violations = self.check_security(code) if checked else []
        if not violations:
            return None
        if all(getattr(v, "rule", "") == SYNTAX_RULE for v in violations):
            # Code that does not parse is a syntax error, not a refusal: it could not run.
            text = "SyntaxError: " + "\n".join(str(v) for v in violations)
            return ExecutionResult(
                success=False, error=SyntaxError(text), error_text=text, error_type="SyntaxError"
            )
        text = "\n".join(str(v) for v in violations)
        error_for = getattr(self.security_checker, "error_for", None)  # SecurityError
        return ExecutionResult(
            success=False,
            error=error_for(violations) if callable(error_for) else CellError(text),
            error_text=text,
            error_type="SecurityError",
            security_violations=violations,
        )

    def shape_error(self, result: ExecutionResult) -> ExecutionResult:
        """Apply `error_feedback_mode` to *result*'s error text (MINIMAL: no frames)."""
        if self.error_feedback_mode is ErrorFeedbackMode.MINIMAL and result.error_text:
            result.error_text = minimal_error(result.error_text)
        return result

    @property
    def label(self) -> str:
        """Short name for status lines."""
        return type(self).__name__

    # -- capabilities front ends read (defaults: no sandbox, no own network, no limit) ----
    @property
    def sandbox(self) -> bool:
        """Its code runs under bubblewrap (the sandboxed kernel)."""
        return False

    @property
    def private_network(self) -> bool:
        """Its code has a network namespace of its own, loopback only."""
        return False

    @property
    def workdir(self) -> str | None:
        """The folder its code runs in, when it is not this process's (None: ours)."""
        return None

    @property
    def remote(self) -> str | None:
        """Where its code runs when that is another machine's kernel (a Jupyter gateway's
        URL), which no sandbox or limit of this host reaches; None: this host."""
        return None

    @property
    def memory_limit(self) -> int | None:
        """The memory (bytes) at which a running cell is stopped (None: no limit)."""
        return None

    def memory_use(self) -> MemoryUse | None:
        """The memory its code holds now, cheap enough for a status line (None: unknown)."""
        return None

    def memory_for_data(self, libraries: bool = False) -> MemoryUse | None:
        """What counts against its memory limit now, and that limit: what data to be loaded
        is sized against (None: unknown); with *libraries*, plus what the data libraries
        (pyarrow, pandas) would still add to build a frame or an array there."""
        return self.memory_use()


def persistable_from_rows(rows: list[VarInfo]) -> list[Persistable]:
    """`Persistable` rows from summary rows: modules by name, everything else as a value."""
    out = []
    for row in rows:
        if row.kind == "module" and row.preview and not row.preview.startswith("__"):
            out.append(Persistable(row.name, Keep.MODULE, "module", module=row.preview))
        elif row.kind == "module":
            reason = "a module that cannot be imported by name"
            out.append(Persistable(row.name, Keep.NOTHING, "module", reason=reason))
        else:
            out.append(Persistable(row.name, Keep.VALUE, row.type_name))
    return out


def own_copy(item: Injectable) -> Injectable:
    """The runtime's own copy of a caller's descriptor (a shallow `copy.copy`): a Variable
    given to two runtimes, or changed by its caller later, changes neither's registry."""
    return copy.copy(item)


def _auto_type(cls: type) -> Type:
    """The Type upstream adds for a class an item refers to: in the namespace, no schema."""
    item = Type(cls, include_schema=False, include_doc=False)
    item.automatic = True
    return item
