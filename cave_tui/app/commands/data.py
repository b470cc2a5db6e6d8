"""Slash commands for data and sessions: /inject, /retrieve, /dump, /save, /sessions, /load,
/export, /replay.

Headless: they reach the front end only through `ctx.ui` (print, confirm, progress, …).
The current session is `ctx.services.session` (a `SessionRecorder`, or None when not
recording). A long `/inject` reports through `ctx.ui.progress(Progress, label)`, called on
the loader's thread; it stops when the command's task is cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cave_tui.app.commands.registry import CommandContext, CommandError, registry
from cave_tui.runtime.figures import FigureFormat

if TYPE_CHECKING:
    from cave_tui.dataio.progress import Progress
    from cave_tui.dataio.save import Saved

MAX_CONFIRMS = 3


def _session(ctx: CommandContext) -> Any:
    return ctx.services.session


def user_path(arg: str) -> Path:
    """The path a user typed, absolute and normalised (`~` expanded, `..` folded away)."""
    return Path(os.path.normpath(Path(arg).expanduser().absolute()))


def shown_path(path: Path) -> str:
    """*path* as a message shows it: normalised, relative to the working folder inside it."""
    path = Path(os.path.normpath(path.absolute()))
    with contextlib.suppress(ValueError):
        return str(path.relative_to(Path.cwd())) or "."
    return str(path)


def _human(size: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:,.0f} {unit}" if unit == "bytes" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{size:,.1f} TB"


def progress_amount(p: Progress) -> str:
    """How far a `Progress` report is: `3.0 KB of 7.0 KB · 1,200 rows`, `3 of 8 arrays`."""
    if p.unit == "bytes":
        amount = f"{_human(p.done)} of {_human(p.total)}"
    else:
        amount = f"{p.done:,.0f} of {p.total:,.0f} {p.unit}"
    return amount if p.rows is None else f"{amount} · {p.rows:,} rows"


def progress_line(p: Progress, label: str) -> str:
    """One line for a `Progress` report: `reading flights.csv: 42% (3.0 KB of 7.0 KB)`."""
    pct = f"{100 * p.fraction:.0f}%" if p.total else ""
    return f"{p.stage} {label}: {pct} ({progress_amount(p)})"


# -- /inject ---------------------------------------------------------------------------------
@registry.command(
    "inject",
    "Load a file (or pkg:MODULE.ATTR) into the namespace; PATH:encoding=ENC:sep=; for a text "
    "file, PATH:sheet=NAME for a workbook",
    "PATH[:encoding=ENC][:sep=SEP][:sheet=NAME] [--lazy[=dask]|--eager] [as NAME]",
    min_args=1,
    max_args=4,
)
async def inject(ctx: CommandContext, args: list[str]) -> None:
    from cave_tui.app.live_objects import explain_data_error
    from cave_tui.dataio import (
        DataIOError,
        LoadCancelled,
        NameConflictError,
        TrustRequiredError,
        inject_file,
        inject_lazy,
        inject_package,
        parse_inject_spec,
    )
    from cave_tui.dataio.inject import auto_lazy, lazy_engine, lazy_threshold

    usage = (
        "usage: /inject PATH[:encoding=ENC][:sep=SEP][:sheet=NAME] [--lazy[=dask]|--eager] "
        "[as NAME]"
    )
    flags = [a for a in args if a.startswith("--")]
    args = [a for a in args if not a.startswith("--")]
    lazy = [f for f in flags if f.partition("=")[0] == "--lazy"]
    eager = "--eager" in flags
    if len(flags) > 1 or (flags and not (lazy or eager)):
        raise CommandError(f"{' '.join(flags)}: give one of --lazy, --lazy=dask or --eager")
    if len(args) == 2 or len(args) > 3 or (len(args) == 3 and args[1].lower() != "as"):
        raise CommandError(usage)
    try:
        spec = parse_inject_spec(args[0])
        if lazy and not spec.lazy:
            spec.engine = lazy_engine(lazy[0].partition("=")[2] or "polars", lazy[0])
            spec.lazy = True
    except DataIOError as exc:
        raise CommandError(str(exc)) from None
    spec.eager = spec.eager or eager
    if spec.lazy and spec.eager:
        raise CommandError(f"{args[0]}: lazy and eager at once; give one")
    if len(args) == 3 and spec.name:
        raise CommandError(f"two names for {spec.source}: {spec.name} and {args[2]}")
    source = spec.source
    name = spec.name if len(args) == 1 else args[2]
    if spec.is_package and (spec.encoding or spec.sep or spec.sheet):
        raise CommandError(
            f"{source}: an encoding, separator or sheet applies to a file, not a package"
        )
    memory_limit = ctx.runtime.memory_limit if ctx.runtime is not None else None
    threshold = lazy_threshold(ctx.services.config.lazy_above, memory_limit)
    note = await asyncio.to_thread(auto_lazy, spec, threshold)  # above lazy_above: lazy
    trust = allow_shadow = False
    for _ in range(MAX_CONFIRMS + 1):
        try:
            if spec.lazy or note is not None:
                injection = await inject_lazy(
                    ctx.runtime, source, name, allow_shadow=allow_shadow, engine=spec.engine,
                    note=note,
                )  # fmt: skip
            elif source.startswith("pkg:"):
                injection = await inject_package(
                    ctx.runtime, source, name, allow_shadow=allow_shadow
                )
            else:
                injection = await inject_file(
                    ctx.runtime,
                    source,
                    name,
                    trust=trust,
                    allow_shadow=allow_shadow,
                    progress=functools.partial(ctx.ui.progress, label=Path(source).name),
                    encoding=spec.encoding,
                    sep=spec.sep,
                    sheet=spec.sheet,
                )
            break
        except NameConflictError as exc:
            if allow_shadow or not await ctx.confirm(f"{exc}. Inject anyway?"):
                ctx.print(f"Not injected: {exc}.", style="warning")
                return
            allow_shadow = True
        except TrustRequiredError as exc:
            if trust or not await ctx.confirm(f"{exc}. Load it?"):
                ctx.print("Not injected: the file was not trusted.", style="warning")
                return
            trust = True
        except LoadCancelled:
            ctx.print(f"Cancelled: {source} was not injected.", style="warning")
            return
        except asyncio.CancelledError:  # Ctrl+C in --plain, a cancelled worker in the app
            ctx.print(f"Cancelled: {source} was not injected.", style="warning")
            raise
        except DataIOError as exc:
            raise CommandError(explain_data_error(exc)) from None
    else:  # pragma: no cover - every branch above breaks or returns
        return
    session = _session(ctx)
    if session is not None:
        session.record_injection(injection)
    ctx.print(f"Injected `{injection.name}`: {injection.description} ({injection.seconds:.2f}s)")


# -- /retrieve ---------------------------------------------------------------------------------
def _default_retrieve_dir(ctx: CommandContext) -> Path:
    session = _session(ctx)
    folder = session.retrieved_dir if session is not None else Path.cwd() / "retrieved"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


async def _save_asking(
    ctx: CommandContext, obj: Any, target: Path, fmt: FigureFormat | None = None
) -> Saved | None:
    """Save *obj* to *target* (with *fmt*: the bytes of a figure file, as they are), asking
    before overwriting a file; None when the user says no. A frame's write reports its
    progress; cancelling the command stops it between row groups, and nothing is written."""
    from cave_tui.dataio import FileExistsConflict, save_object
    from cave_tui.dataio.save import save_file_bytes

    overwrite = False
    stop = threading.Event()
    while True:
        try:
            if fmt is not None:
                return await asyncio.to_thread(
                    save_file_bytes, obj, target, fmt=fmt.value, overwrite=overwrite
                )
            return await asyncio.to_thread(
                save_object,
                obj,
                target,
                overwrite=overwrite,
                cancel=stop,
                progress=lambda p: ctx.ui.progress(p, Path(p.path).name),  # with its extension
            )
        except asyncio.CancelledError:  # Esc or Ctrl+C: the write stops at its next group
            stop.set()
            ctx.print(f"Cancelled: {target.name} was not written.", style="warning")
            raise
        except FileExistsConflict as exc:
            if overwrite or not await ctx.confirm(f"{exc}. Overwrite it?"):
                ctx.print(f"Not saved: {exc.path} was left as it was.", style="warning")
                return None
            target = exc.path or target
            overwrite = True


async def _retrieve_for_file(runtime: Any, name: str) -> Any:
    """*name*'s value for `/retrieve` to write: the object, or, for a value the kernel keeps
    to itself (one the host cannot decode safely), the kernel's own pickle of it, written as
    opaque bytes and never unpickled here. KeyError when unbound; other refusals as raised."""
    try:
        return await runtime.retrieve(name)
    except Exception as exc:
        pickle_it = getattr(runtime, "retrieve_pickled", None)
        if not getattr(exc, "pickle_in_kernel", False) or pickle_it is None:
            raise
        refused = exc
    try:
        return await pickle_it(name)
    except KeyError:
        raise
    except Exception as failure:
        raise CommandError(f"{refused}; the kernel could not pickle it either: {failure}") from None


async def _stream_lazy(ctx: CommandContext, name: str, dest: str | None) -> bool:
    """`/retrieve` of a lazy or distributed frame: streamed to a Parquet file where it lives
    (`Runtime.stream_parquet`), never collected. False when *name* holds no lazy frame."""
    from cave_tui.dataio.save import Saved, target_for
    from cave_tui.runtime.shipped.lazy import PARQUET_SUFFIX, StreamError

    try:
        default_dir = _default_retrieve_dir(ctx) if dest is None else Path.cwd()
    except OSError as exc:
        raise CommandError(f"cannot write the retrieve folder: {exc}") from None
    target = target_for(name, dest, default_dir).absolute()
    if not target.suffix:
        target = target.with_name(target.name + PARQUET_SUFFIX)
    overwrite = False
    while True:
        try:
            runtime = ctx.services.live_runtime
            done = await runtime.stream_parquet(name, str(target), overwrite=overwrite)
        except KeyError as exc:
            raise CommandError(str(exc.args[0] if exc.args else exc)) from None
        except FileExistsError:
            if overwrite or not await ctx.confirm(f"{target} already exists. Overwrite it?"):
                ctx.print(f"Not saved: {target} was left as it was.", style="warning")
                return True
            overwrite = True
            continue
        except StreamError as exc:
            raise CommandError(f"cannot retrieve {name!r}: {exc}") from None
        break
    if done is None:
        return False
    note = f"{done.rows:,} rows streamed where the frame lives, never collected"
    saved = Saved(Path(done.path), "parquet", done.bytes, note=note)
    session = _session(ctx)
    if session is not None:
        session.record_retrieval(name, saved)
    ctx.print(
        f"Saved `{name}` ({done.type_name}) to {shown_path(saved.path)} — "
        f"{_human(saved.bytes)}, parquet ({note})"
    )
    return True


@registry.command(
    "retrieve",
    "Save a variable to a file (frame→parquet, array→npy, data→json, Figure→png/svg/pdf, "
    "else pickle)",
    "NAME [PATH]",
    min_args=1,
    max_args=2,
)
async def retrieve(ctx: CommandContext, args: list[str]) -> None:
    from cave_tui.dataio import DataIOError, describe_value
    from cave_tui.dataio.save import kernel_pickle, target_for
    from cave_tui.runtime.figures import FigureError

    name = args[0]
    # PATH.png|.svg|.pdf: a matplotlib Figure drawn where it lives; only the file comes back.
    fmt = FigureFormat.of_path(args[1]) if len(args) > 1 else None
    if fmt is None and await _stream_lazy(ctx, name, args[1] if len(args) > 1 else None):
        return
    try:
        if fmt is not None:
            obj: Any = await ctx.services.live_runtime.render_figure(name, fmt)
        else:
            obj = await _retrieve_for_file(ctx.runtime, name)
    except KeyError as exc:
        raise CommandError(str(exc.args[0] if exc.args else exc)) from None
    except FigureError as exc:
        raise CommandError(f"{exc} (a .png, .svg or .pdf is drawn from a Figure)") from None
    try:
        default_dir = _default_retrieve_dir(ctx) if len(args) == 1 else Path.cwd()
        target = target_for(name, args[1] if len(args) > 1 else None, default_dir)
        saved = await _save_asking(ctx, obj, target, fmt)
        if saved is None:
            return
    except DataIOError as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"cannot write the retrieve folder: {exc}") from None
    session = _session(ctx)
    if session is not None:
        session.record_retrieval(name, saved)
    note = f" ({saved.note})" if saved.note else ""
    if fmt is not None:
        what = f"a Figure drawn as {fmt.name}"
    else:
        what = obj.type_name if kernel_pickle(obj) is not None else describe_value(obj)
    ctx.print(
        f"Saved `{name}` ({what}) to {shown_path(saved.path)} — "
        f"{_human(saved.bytes)}, {saved.format}{note}"
    )


# -- /dump -------------------------------------------------------------------------------------
@registry.command(
    "dump", "Write every variable to a folder, with manifest.json", "DIR", min_args=1, max_args=1
)
async def dump(ctx: CommandContext, args: list[str]) -> None:
    from cave_tui.dataio import DataIOError, dump_namespace
    from cave_tui.dataio.dump import check_dump_target, named_entries

    target = user_path(args[0])
    sessions = ctx.services.sessions_dir
    try:
        contents = check_dump_target(target, sessions=sessions)  # refused: never asked
    except DataIOError as exc:
        raise CommandError(str(exc)) from None
    kept = f" (what it does not list stays: {named_entries(contents.others)})"
    if contents.dump and not await ctx.confirm(
        f"{shown_path(target)} holds a previous dump. Replace it?{kept if contents.others else ''}"
    ):
        ctx.print("Not dumped.", style="warning")
        return
    try:
        progress = functools.partial(ctx.ui.progress, label=shown_path(target))
        result = await dump_namespace(ctx.runtime, target, sessions=sessions, progress=progress)
    except DataIOError as exc:
        raise CommandError(str(exc)) from None
    ctx.print(f"Dumped {result.summary(shown_path(result.directory))}")


# -- sessions ------------------------------------------------------------------------------------
def _store(ctx: CommandContext) -> Any:
    from cave_tui.session import SessionStore

    session = _session(ctx)
    root = ctx.services.sessions_dir or (session.dir.parent if session is not None else None)
    return SessionStore(root)


@registry.command("save", "Snapshot the session now (optionally naming it)", "[TITLE]")
async def save(ctx: CommandContext, args: list[str]) -> None:
    from cave_tui.session.title import session_title

    session = _session(ctx)
    if session is None:
        raise CommandError("this run is not recording a session")
    if args:
        session.meta["title"] = session_title(" ".join(args)) or session.meta.get("title", "")
    result = await session.checkpoint(full=True)
    session.write_meta()
    session.log.sync()
    if result is None:
        raise CommandError("the namespace snapshot failed: " + "; ".join(session.warnings[-1:]))
    ctx.print(
        f"Saved session {session.id}: {session.turn} turns, {len(result.saved)} variables "
        f"({_human(result.bytes)}) in {session.dir}"
    )


@registry.command(
    "sessions",
    "List recorded sessions, newest first (open one with /load ID)",
    "[all]",
    max_args=1,
)
async def sessions(ctx: CommandContext, args: list[str]) -> None:
    from cave_tui.session.listing import LISTED, list_sessions

    if args and args[0].lower() != "all":
        raise CommandError(f"unknown argument {args[0]!r}: use /sessions or /sessions all")
    store = _store(ctx)
    listing = await asyncio.to_thread(list_sessions, store.root, limit=None if args else LISTED)
    if not listing.sessions:
        ctx.print(f"No sessions in {_markdown_text(str(store.root))}.")
        return
    current = _session(ctx)
    shown = len(listing.sessions)
    more = f"; {shown} of {listing.total}, `/sessions all` lists all"
    more = "" if shown == listing.total else more
    # A list, not a table: a narrow chat would cut the ids a user must type to /load.
    lines = [f"Sessions in {_markdown_text(str(store.root))} (newest first{more}):", ""]
    for row in listing.sessions:
        mark = " **(current)**" if current is not None and row.path == current.dir else ""
        lines.append(f"- {_code('/load ' + row.id)}{mark} · {row.when} \\")
        facts = f"**{_markdown_text(row.title)}** · {_markdown_text(row.facts())}"
        note = f" · *{_markdown_text(row.note)}*" if row.note else ""
        lines.append(f"  {facts}{note}")
    ctx.print("\n".join(lines))


def _markdown_text(text: str) -> str:
    """*text* (a title, a path) shown as it is inside Markdown: printable on one line, every
    ASCII punctuation mark escaped, so `**`, `[x](y)`, `<b>` or a backtick stay characters."""
    from cave_tui.printable import printable_line

    return "".join("\\" + ch if ch in _MARKDOWN_PUNCTUATION else ch for ch in printable_line(text))


def _code(text: str) -> str:
    """*text* as a Markdown code span, fenced so that a backtick in it stays a character."""
    return f"`` {text} ``" if "`" in text else f"`{text}`"


_MARKDOWN_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


@registry.command(
    "load",
    "Resume a recorded session here (its conversation and namespace)",
    "ID",
    min_args=1,
    max_args=1,
)
async def load(ctx: CommandContext, args: list[str]) -> None:
    from cave_tui.dataio import DataIOError
    from cave_tui.runtime.provenance import provenance_of
    from cave_tui.session import SessionError, check_snapshot

    if ctx.agent is None:
        raise CommandError("no model is configured, so there is no conversation to load into")
    store = _store(ctx)
    try:
        folder = store.resolve(args[0])
    except SessionError as exc:
        raise CommandError(str(exc)) from None
    current = _session(ctx)
    if current is not None and current.dir.resolve() == folder.resolve():
        ctx.print(f"{folder.name} is already the current session.")
        return
    try:  # a snapshot that cannot be restored is refused before anything changes
        into = provenance_of(ctx.runtime)
        untrusted = await asyncio.to_thread(check_snapshot, folder, into)
    except DataIOError as exc:
        raise CommandError(f"cannot load {folder.name}: {exc}") from None
    if not await ctx.confirm(
        f"Replace the current conversation and namespace with session {folder.name}? "
        "(the current session stays saved)"
    ):
        ctx.print("Not loaded.", style="warning")
        return
    trust = bool(untrusted) and await ctx.confirm(
        f"Session {folder.name} holds code not trusted to run here ({', '.join(untrusted)}): "
        "pickles or functions this cave did not seal, or made where cells ran more confined "
        "than here; loading them runs that code. Load them? "
        "(if not, everything else is loaded and they are kept for later)"
    )
    await resume_here(ctx, folder, trust=trust)


async def resume_here(ctx: CommandContext, folder: Path, *, trust: bool) -> None:
    """`/load`'s work once asked: the current session closed, the namespace cleared (the
    injected functions and types kept), *folder* resumed into this agent and runtime and
    shown (`session_loaded`), its snapshot's reading shown as progress. `CommandError` when
    it cannot be loaded; cancelled (Esc, Ctrl+C), the current session is put back as it
    was closed (its conversation and its exit snapshot), so nothing is lost."""
    from cave_tui.dataio import DataIOError
    from cave_tui.session import SessionError, resume_session

    current = _session(ctx)
    if current is not None:
        await current.close()
        current.detach()
    await _clear_namespace(ctx)
    progress = functools.partial(ctx.ui.progress, label=folder.name)
    try:
        result = await resume_session(
            folder, ctx.agent, ctx.runtime, trust=trust, progress=progress
        )
    except (SessionError, DataIOError) as exc:
        ctx.services.session = None
        raise CommandError(f"cannot load {folder.name}: {exc}") from None
    except asyncio.CancelledError:
        from cave_tui.dataio.inject import to_the_end

        await to_the_end(_put_back(ctx, current, folder))  # a second press waits for it too
        raise
    ctx.services.session = result.recorder
    ctx.ui.session_loaded(result.transcript)
    ctx.print(result.summary())


async def _clear_namespace(ctx: CommandContext) -> None:
    """Delete every variable but the injected functions and types (kept across `/load`)."""
    from cave_tui.runtime.items import Function, Type

    runtime = ctx.services.live_runtime
    injected = runtime.injected
    for name in await runtime.names():
        if not isinstance(injected.get(name), Function | Type):
            with contextlib.suppress(KeyError):
                await runtime.delete(name)


async def _put_back(ctx: CommandContext, previous: Any, folder: Path) -> None:
    """A cancelled `/load` of *folder*: what it bound goes, and the *previous* session (closed
    with its exit snapshot) is resumed again, shown, and recorded into as before."""
    from cave_tui.dataio import DataIOError
    from cave_tui.session import SessionError, resume_session

    await _clear_namespace(ctx)
    ctx.services.session = None
    if previous is None:
        ctx.print(f"Cancelled: session {folder.name} was not loaded.", style="warning")
        return
    try:
        # Not trusted: what it held back stays held back (its seal vouches for the rest).
        result = await resume_session(previous.dir, ctx.agent, ctx.runtime)
    except (SessionError, DataIOError) as exc:
        failed = f"Cancelled, and session {previous.id} could not be put back: {exc}"
        ctx.print(failed, style="error")
        return
    ctx.services.session = result.recorder
    ctx.ui.session_loaded(result.transcript)
    ctx.print(
        f"Cancelled: session {folder.name} was not loaded; session {previous.id} is back as "
        "it was.",
        style="warning",
    )


@registry.command(
    "export",
    "Write this session as a notebook (.ipynb) or a script (.py)",
    "FILE",
    min_args=1,
    max_args=1,
)
async def export(ctx: CommandContext, args: list[str]) -> None:
    from cave_tui.dataio import DataIOError
    from cave_tui.session import SessionError, export_session

    session = _session(ctx)
    if session is None:
        raise CommandError("this run is not recording a session, so there is nothing to export")
    target = Path(args[0]).expanduser()
    if target.suffix.lower() not in (".ipynb", ".py"):
        raise CommandError(f"cannot export to {target.name}: use a .ipynb or .py file name")
    if target.exists() and not await ctx.confirm(f"{target} exists. Overwrite it?"):
        ctx.print(f"Not exported: {target} was left as it was.", style="warning")
        return
    session.log.sync()
    try:
        path = await asyncio.to_thread(export_session, session.dir, target)
    except (SessionError, DataIOError) as exc:
        raise CommandError(str(exc)) from None
    ctx.print(f"Exported session {session.id} to {path} ({_human(path.stat().st_size)})")


@registry.command(
    "replay", "Replay a recorded session (recorded replies, live code)", "SESSION", min_args=1
)
async def replay(ctx: CommandContext, args: list[str]) -> None:
    from cave_tui.session import SessionError

    try:
        folder = _store(ctx).resolve(" ".join(args))
    except SessionError as exc:
        raise CommandError(str(exc)) from None
    ctx.ui.replay_session(folder)
