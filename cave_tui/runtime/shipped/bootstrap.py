"""The runtime's agent inside the kernel (shipped to the kernel as source).

The host executes this file in the kernel as module `_cave_kernel`, next to
`_cave_summary`, `_cave_tracebacks`, `_cave_transport`, `_cave_mutation` and
`_cave_display`, `_cave_persist` (the same files the host uses), so a kernel needs nothing of cave
installed: an attached kernel on another machine works too. `install()`:

* hooks every cell (`pre_run_cell`/`post_run_cell`) to compute what it changed
  and deleted and to shape its error, and sends that report on the `cave` comm;
* pins pandas' display options (`_cave_display`), so output never follows a terminal;
* caps each cell's output *in the kernel*: the first `output_limit` characters
  go out as they come, then only a bounded tail is kept and the rest is counted
  and dropped, so printing 100 MB never crosses the wire;
* keeps the source of the functions and classes cells define (`_cave_persist`);
* serves the host's requests on the `cave` comm (inject, retrieve: one value or many, summary,
  persistable, delete, reset, checkpoint, restore), with Arrow/JSON/pickle
  payloads in the message buffers.

Nothing here is trusted by the host: model code can replace any of it, which is
why the host validates every byte it receives (`transport.py`).

Over 400 lines: the kernel receives this file whole, as the one module `_cave_kernel`.
"""

from __future__ import annotations

import re
import sys
import time
import types
from collections import deque
from typing import Any

summary: Any = sys.modules.get("_cave_summary")
links: Any = sys.modules.get("_cave_links")
tracebacks: Any = sys.modules.get("_cave_tracebacks")
transport: Any = sys.modules.get("_cave_transport")
mutation: Any = sys.modules.get("_cave_mutation")
display: Any = sys.modules.get("_cave_display")
persist: Any = sys.modules.get("_cave_persist")
figure_render: Any = sys.modules.get("_cave_figure_render")
results: Any = sys.modules.get("_cave_results")

MARKER = "\n[… {n:,} characters of output dropped …]\n"
TAIL_ROOM = 200  # the marker's share of the tail budget
# ipykernel compiles cells to /tmp/ipykernel_<pid>/<hash>.py; the model sees <cell>.
_CELL_FILE = re.compile(r'File "[^"]*/ipykernel_\d+/\d+\.py"')
_OMITTED = re.compile(r"\[… (\d+) frames omitted …\]")
KEEP_FRAMES = 20
MUTATION_SCAN_CHARS = 1_000_000  # a bigger cell is data (pasted literals), not edits


def _trim_traceback(error: BaseException) -> int:
    """Cut a very deep traceback to its first and last frames (formatting a
    million-frame RecursionError would take minutes); return the frames cut."""
    frames = []
    tb = error.__traceback__
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    if len(frames) <= 4 * KEEP_FRAMES:
        return 0
    kept = frames[:KEEP_FRAMES] + frames[-KEEP_FRAMES:]
    chain = None
    for old in reversed(kept):
        chain = types.TracebackType(chain, old.tb_frame, old.tb_lasti, old.tb_lineno)
    error.__traceback__ = chain
    return len(frames) - len(kept)


def _out_of_memory(exc: BaseException) -> bool:
    """The kernel's memory limit refused an allocation: a MemoryError, or a library that
    could not be mapped or allocate under RLIMIT_DATA or RLIMIT_AS (ENOMEM, "failed to map
    segment")."""
    import errno

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, MemoryError) or getattr(seen, "errno", None) == errno.ENOMEM:
            return True
        text = str(seen)
        if "failed to map segment" in text or "Cannot allocate memory" in text:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _memory_limit_text() -> str:
    """What the kernel's memory limit is, for the host's message."""
    import resource

    soft = resource.getrlimit(resource.RLIMIT_DATA)[0]
    if soft == resource.RLIM_INFINITY:
        return "out of memory"
    return f"over the kernel's memory limit of {soft:,} bytes"


class OutputCap:
    """Per-cell budget shared by stdout, stderr and displays: head live, tail kept."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.reset()

    def reset(self) -> None:
        self.used = 0
        self.total = 0
        self.tail: deque[tuple[Any, str]] = deque()
        self.tail_len = 0
        self.tail_limit = max(self.limit - TAIL_ROOM, 0)

    def write(self, original: Any, text: str) -> int:
        n = len(text)
        self.total += n
        room = self.limit - self.used
        if room >= n:
            self.used += n
            original(text)
            return n
        if room > 0:
            original(text[:room])
            self.used += room
            text = text[room:]
        self._keep(original, text)
        return n

    def _keep(self, original: Any, text: str) -> None:
        if self.tail_limit <= 0:
            return
        text = text[-self.tail_limit :]
        self.tail.append((original, text))
        self.tail_len += len(text)
        while self.tail and self.tail_len - len(self.tail[0][1]) >= self.tail_limit:
            self.tail_len -= len(self.tail.popleft()[1])

    def finish(self, first: Any) -> int:
        """Emit the marker and the kept tail; return the characters dropped."""
        if self.used < self.limit or self.total <= self.used:
            return 0
        chunks = list(self.tail)
        kept = sum(len(t) for _, t in chunks)
        excess = kept - self.tail_limit
        if excess > 0 and chunks:
            original, text = chunks[0]
            chunks[0] = (original, text[excess:])
            kept -= excess
        dropped = self.total - self.used - kept
        first(MARKER.format(n=dropped))
        for original, text in chunks:
            original(text)
        self.reset()
        self.used = self.limit  # anything after the marker still counts
        return dropped


def estimate_size(value: Any) -> int | None:
    """A cheap upper-ish estimate, to skip values over budget before serialising; None when
    only the object's own code could tell (no model-written `__len__`/`__sizeof__` runs)."""
    try:
        kind = type(value)
        module = str(kind.__dict__.get("__module__") or "")
        if module.startswith("pandas") and hasattr(value, "memory_usage"):
            usage = value.memory_usage(index=True, deep=False)
            return int(usage.sum()) if hasattr(usage, "sum") else int(usage)
        if module.startswith(("numpy", "pyarrow")) and hasattr(value, "nbytes"):
            return int(value.nbytes)
        if kind in (list, tuple, set, frozenset, dict, deque):
            n = len(value)
            if n == 0:
                return sys.getsizeof(value)
            items = list(value.items() if kind is dict else value)[:8]
            each = sum(_shallow(x) for x in items) / len(items)
            return int(sys.getsizeof(value) + n * each)
        if kind in (str, bytes, bytearray, int, float, complex, bool):
            return sys.getsizeof(value)
        return None
    except Exception:
        return None


def _shallow(item: Any) -> int:
    size = summary.sizeof_without_user_code
    if type(item) is tuple:
        return sum(size(x) for x in item)
    return size(item)


class CaveKernel:
    """State and handlers of the runtime's side of the kernel."""

    def __init__(self, shell: Any, config: dict[str, Any]) -> None:
        self.shell = shell
        self.kernel = shell.kernel
        self.ns = shell.user_ns
        self.config = config
        self.hidden = set(shell.user_ns_hidden) | set(summary.HIDDEN_NAMES)
        self.injected: set[str] = set()
        self.comm: Any = None
        self.parts: dict[str, list[Any]] = {}  # request id -> buffer parts received so far
        self.cap = OutputCap(int(config.get("output_limit", 200_000)))
        self._before: dict[str, str] = {}
        self._started = 0.0
        self._code = ""
        self._formatted: tuple[BaseException, str] | None = None
        self._pending_report: dict[str, Any] | None = None
        self._result_text: str | None = None
        # A frame result's name for the table view (results.py), set as it is displayed.
        self.kept_results = results.KeptResults(self.ns) if results is not None else None
        self._result_frame: str | None = None
        self._hooked_reply = False
        self.definitions = persist.Definitions() if persist is not None else None
        self._undigestable: set[int] = set()  # ids of objects whose digest hung

    # -- installation ----------------------------------------------------------------
    def install(self) -> None:
        self.shell.events.register("pre_run_cell", self.pre_run_cell)
        self.shell.events.register("post_run_cell", self.post_run_cell)
        self.kernel.comm_manager.register_target("cave", self.open_comm)
        # A cell runs as written (and as the host's checker read it): no automagic turning
        # `hist -f PATH` into `%hist`, no autocall turning `f x` into `f(x)`.
        self.shell.automagic = False
        self.shell.autocall = 0
        self._cap_streams()
        self._bounded_results()
        interval = self.config.get("switch_interval")
        if interval:
            sys.setswitchinterval(float(interval))
        self._fatal_errors_to_launcher()
        self._compact_tracebacks()
        if tracebacks is not None:  # "'(' was never closed", not "incomplete input"
            tracebacks.precise_syntax_errors(self.shell)
        if display is not None:  # a cell's output must not depend on a terminal
            display.pin_display()
        if figure_render is not None:  # the model is told what a figure shows
            figure_render.note_figures(self.shell)
        self._report_in_reply()
        if self.config.get("own_kernel"):
            self._result_in_report()
            # Nobody else listens to a kernel the runtime launched: no echo of each
            # cell's code, and no sleep before the reply (the host waits for idle,
            # which IOPub delivers after every output anyway).
            self.kernel._publish_execute_input = lambda *args, **kwargs: None
            if hasattr(self.kernel, "_execute_sleep"):
                self.kernel._execute_sleep = 0

    def _result_in_report(self) -> None:
        """The last value's text goes in the cell report instead of its own IOPub
        message (the host appends it after the cell's other output, where it belongs)."""
        hooks = getattr(self.shell.displayhook, "register_hook", None)
        if hooks is None or not self._hooked_reply:
            return
        agent = self

        def keep(msg: Any) -> None:
            data = msg.get("content", {}).get("data") or {}
            agent._result_text = data.get("text/plain")
            return None  # suppresses the execute_result message

        hooks(keep)

    def _report_in_reply(self) -> None:
        finish = getattr(self.kernel, "finish_metadata", None)
        if finish is None:
            return
        agent = self

        def finish_metadata(parent: Any, metadata: Any, reply_content: Any) -> Any:
            metadata = finish(parent, metadata, reply_content)
            report, agent._pending_report = agent._pending_report, None
            if report is not None and isinstance(metadata, dict):
                metadata["cave"] = report
            return metadata

        self.kernel.finish_metadata = finish_metadata
        self._hooked_reply = True

    def _compact_tracebacks(self) -> None:
        """IPython's verbose tracebacks cost seconds on deep stacks and are replaced
        by the runtime's short form anyway: format once, the short way."""
        shell = self.shell
        agent = self

        def showtraceback(exc_tuple: Any = None, *args: Any, **kwargs: Any) -> None:
            try:
                etype, value, _ = exc_tuple if exc_tuple else sys.exc_info()
                if value is None:
                    return
                text = agent.format_error(value)
                shell._showtraceback(etype, value, text.splitlines())
            except Exception:
                pass

        def showsyntaxerror(*args: Any, **kwargs: Any) -> None:
            showtraceback()

        shell.showtraceback = showtraceback
        shell.showsyntaxerror = showsyntaxerror
        shell.showindentationerror = showsyntaxerror

    def format_error(self, error: BaseException) -> str:
        cached = self._formatted
        if cached is not None and cached[0] is error:
            return cached[1]
        total = _trim_traceback(error)
        text = tracebacks.format_exception(error)
        if total:
            text = _OMITTED.sub(lambda m: f"[… {int(m.group(1)) + total:,} frames omitted …]", text)
        text = _CELL_FILE.sub("File <cell>", text)
        self._formatted = (error, text)
        return text

    def _fatal_errors_to_launcher(self) -> None:
        """faulthandler on the kernel's real stderr (the launcher keeps its tail), so a
        segfault's report names the line; ipykernel redirects fd 2 into its own pipe."""
        import faulthandler

        fd = getattr(sys.stderr, "_original_stdstream_copy", None)
        try:
            self._fatal_file = (
                open(fd, "w", closefd=False)  # noqa: SIM115 - kept open for faulthandler
                if isinstance(fd, int)
                else sys.__stderr__
            )
            # sys.__stderr__ may be None: faulthandler then falls back to sys.stderr.
            faulthandler.enable(file=self._fatal_file, all_threads=False)  # type: ignore[arg-type]
        except Exception:
            pass

    def _cap_streams(self) -> None:
        cap = self.cap
        for stream in (sys.stdout, sys.stderr):
            original = stream.write

            def write(text: Any, _original: Any = original) -> int:
                if not isinstance(text, str):
                    return _original(text)  # the stream's own TypeError
                return cap.write(_original, text)

            stream.write = write  # type: ignore[method-assign]
        self._stdout_write = sys.stdout.write
        publisher = self.shell.display_pub
        publish = publisher.publish

        def capped_publish(data: Any, *args: Any, **kwargs: Any) -> Any:
            text = data.get("text/plain", "") if isinstance(data, dict) else ""
            if cap.used + len(text) > cap.limit:
                cap.total += len(text)
                cap._keep(lambda t: publish({"text/plain": t}), text)
                return None
            cap.used += len(text)
            cap.total += len(text)
            return publish(data, *args, **kwargs)

        publisher.publish = capped_publish

    def _bounded_results(self) -> None:
        bounded_repr = summary.bounded_repr

        agent = self

        def compute_format_data(result: Any) -> tuple[dict[str, str], dict[str, Any]]:
            if agent.kept_results is not None:
                hidden = agent._user_hidden()
                agent._result_frame = agent.kept_results.name_for(
                    result, lambda name: summary.is_user_name(name, hidden)
                )
            module = type(result).__module__ or ""
            if module.startswith(("pandas", "numpy", "pyarrow")):
                text = repr(result)  # bounded by their print options
            else:
                text = bounded_repr(result, 20_000)
            return {"text/plain": text}, {}

        self.shell.displayhook.compute_format_data = compute_format_data

    # -- cells --------------------------------------------------------------------------
    def _user_hidden(self) -> set[str]:
        return self.hidden - self.injected

    def pre_run_cell(self, info: Any) -> None:
        self._pending_report = None
        self._result_text = None
        self._result_frame = None
        self.cap.reset()
        self._code = getattr(info, "raw_cell", "") or ""
        self._before = summary.fingerprints(self.ns, self._user_hidden())
        self._started = time.perf_counter()

    def post_run_cell(self, result: Any) -> None:
        duration = time.perf_counter() - self._started
        dropped = 0
        try:
            dropped = self.cap.finish(sys.stdout.write)
            hidden = self._user_hidden()
            after = summary.fingerprints(self.ns, hidden)
            before = self._before
            changed = [n for n, fp in after.items() if before.get(n) != fp]
            maybe: set[str] = set()
            if mutation and len(self._code) <= MUTATION_SCAN_CHARS:
                maybe = mutation.mutation_targets(self._code) & set(after)
            changed += [n for n in after if n in maybe and n not in changed]
            deleted = [n for n in before if n not in after]
            self._record_definitions(changed)
            error = result.error_before_exec or result.error_in_exec
            report: dict[str, Any] = {
                "op": "cell",
                "changed": changed,
                "deleted": deleted,
                "names": list(after)[:10_000],
                "duration": duration,
                "dropped": dropped,
            }
            if self._result_text is not None:
                report["result"] = self._result_text
            if self._result_frame is not None and error is None:
                report["result_frame"] = self._result_frame
            if error is not None:
                report["error_type"] = type(error).__name__
                report["error"] = self.format_error(error)
                if isinstance(error, MemoryError):
                    report["memory"] = _memory()
            self._report(report)
        except BaseException as exc:  # never break the kernel's own reply
            self._report(
                {"op": "cell", "broken": f"{type(exc).__name__}: {exc}", "dropped": dropped}
            )

    def _record_definitions(self, changed: list[str]) -> None:
        """Keep the source of the functions and classes the cell defined (dumps use it)."""
        if self.definitions is None or not changed:
            return
        try:
            code = self.shell.transform_cell(self._code)
        except Exception:
            return
        self.definitions.record(code, self.ns, changed)

    def _report(self, report: dict[str, Any]) -> None:
        """The cell report rides in the execute_reply's metadata (no extra message);
        a kernel whose reply path we could not hook sends it on the comm instead."""
        if self._hooked_reply:
            self._pending_report = report
        else:
            self.send(report)

    # -- the comm ------------------------------------------------------------------------
    def open_comm(self, comm: Any, msg: Any) -> None:
        self.comm = comm
        comm.on_msg(self.on_msg)

    def send(self, data: dict[str, Any], buffers: list[Any] | None = None) -> None:
        if self.comm is not None:
            self.comm.send(data, buffers=buffers or None)

    def on_msg(self, msg: Any) -> None:
        data = msg["content"]["data"]
        buffers = list(msg.get("buffers") or [])
        op = data.get("op")
        if op == "part":  # one piece of a later request's buffers (a gateway's size limit)
            self.parts.setdefault(str(data.get("key")), []).extend(buffers)
            return
        if data.get("assemble") is not None:
            buffers = self._assemble(str(data.get("id")), list(data["assemble"]))
        reply: dict[str, Any] = {"op": "reply", "id": data.get("id"), "ok": True}
        out: list[Any] = []
        try:
            handler = getattr(self, f"op_{op}", None)
            if handler is None:
                raise ValueError(f"unknown op {op!r}")
            result = handler(data, buffers)
            if result is not None:
                extra, out = result
                reply.update(extra)
        except BaseException as exc:
            reply.update(
                ok=False, error=f"{type(exc).__name__}: {exc}", error_type=type(exc).__name__
            )
            out = []
            if isinstance(exc, KeyboardInterrupt):
                reply["error_type"] = "KeyboardInterrupt"
        self.send(reply, out)

    def _assemble(self, key: str, counts: list[int]) -> list[Any]:
        """The buffers of request *key*, joined from the parts sent before it."""
        parts, buffers, at = self.parts.pop(key, []), [], 0
        for count in counts:
            own, at = parts[at : at + count], at + count
            buffers.append(own[0] if len(own) == 1 else b"".join(bytes(p) for p in own))
        return buffers

    # -- operations -------------------------------------------------------------------------
    def op_hello(self, data: dict[str, Any], buffers: list[Any]) -> Any:
        import os

        info = {
            "pid": os.getpid(),
            "uid": os.getuid() if hasattr(os, "getuid") else None,
            "cwd": os.getcwd(),
            "python": sys.version.split()[0],
        }
        return info, []

    def op_inject(self, data: dict[str, Any], buffers: list[Any]) -> Any:
        name = data["name"]
        try:
            value = transport.decode_in_kernel(data["codec"], data.get("meta") or {}, buffers)
        except Exception as exc:
            if not _out_of_memory(exc):
                raise
        else:
            self.ns[name] = value
            self.injected.add(name)
            return None
        import gc  # out of memory: what was half built goes (outside the except) first

        buffers.clear()
        gc.collect()
        raise MemoryError(_memory_limit_text())

    def op_inject_many(self, data: dict[str, Any], buffers: list[Any]) -> Any:
        """`op_inject` for many values in one message (each takes `nbuf` of the buffers, in
        order); `errors` holds, per value, None or why it was not bound."""
        errors: list[str | None] = []
        at = 0
        for item in data["items"]:
            count = int(item.get("nbuf") or 0)
            own, at = buffers[at : at + count], at + count
            try:
                self.op_inject(item, own)
                errors.append(None)
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
        return {"errors": errors}, []

    def op_retrieve_many(self, data: dict[str, Any], buffers: list[Any]) -> Any:
        """`op_retrieve` for many names in one message: per name its reply (with `nbuf`,
        how many of the buffers, in order, are its own)."""
        items: list[dict[str, Any]] = []
        out: list[Any] = []
        for name in data["names"]:
            request = {"name": name, "trusted": data.get("trusted"), "limit": data["limit"]}
            try:
                extra, own = self.op_retrieve(request, [])
                extra.setdefault("ok", True)
            except Exception as exc:
                extra, own = {"ok": False, "error_type": type(exc).__name__, "error": str(exc)}, []
            extra["nbuf"] = len(own)
            items.append(extra)
            out.extend(own)
        return {"items": items}, out

    def op_retrieve(self, data: dict[str, Any], buffers: list[Any]) -> Any:
        name = data["name"]
        if name not in self.ns or (name in self.hidden and name not in self.injected):
            return {"ok": False, "error_type": "KeyError", "error": self._missing(name)}, []
        value = self.ns[name]
        type_name = transport.describe_type(value)
        try:
            codec, meta, out = transport.encode_for_host(
                value, trusted=bool(data.get("trusted")), limit=int(data["limit"])
            )
        except transport.TransferError as exc:
            return {
                "ok": False,
                "error_type": "TransferError",
                "error": str(exc),
                "type_name": type_name,
            }, []
        return {"codec": codec, "meta": meta, "type_name": type_name}, out

    def op_detail(self, data: dict[str, Any], buffers: list[Any]) -> Any:
        """The detail view of one name, computed here: only its strings cross to the host."""
        import dataclasses

        name = data["name"]
        if name not in self.ns or (name in self.hidden and name not in self.injected):
            return {"ok": False, "error_type": "KeyError", "error": self._missing(name)}, []
        detail = sys.modules["_cave_detail"].object_detail(name, self.ns[name])
        return {"detail": dataclasses.asdict(detail)}, []

    def _frame(self, data: dict[str, Any]) -> tuple[Any, Any]:
        """The frame a table request names, and its sort key (KeyError if none)."""
        name = data["name"]
        if name not in self.ns or (name in self.hidden and name not in self.injected):
            raise KeyError(self._missing(name))
        windows = sys.modules["_cave_frame_window"]
        sort = data.get("sort")
        key = None if sort is None else windows.SortKey(int(sort[0]), bool(sort[1]))
        return self.ns[name], key

    def op_frame_window(self, data: dict[str, Any], buffers: list[Any]) -> Any:
        """Rows [start, stop) of a frame for the table view: their Arrow IPC stream only."""
        try:
            obj, key = self._frame(data)
        except KeyError as exc:
            return {"ok": False, "error_type": "KeyError", "error": str(exc.args[0])}, []
        windows = sys.modules["_cave_frame_window"]
        try:
            window = windows.frame_window(obj, int(data["start"]), int(data["stop"]), key)
        except windows.NotATable as exc:
            return {"ok": False, "error_type": "NotATable", "error": str(exc)}, []
        _codec, _meta, out = transport.encode_arrow(window.table)
        return {"window": window.meta()}, out

    def op_frame_find(self, data: dict[str, Any], buffers: list[Any]) -> Any:
        """The next cell of a frame holding a text, for the table view's search."""
        try:
            obj, key = self._frame(data)
        except KeyError as exc:
            return {"ok": False, "error_type": "KeyError", "error": str(exc.args[0])}, []
        windows = sys.modules["_cave_frame_window"]
        try:
            cell = windows.find(obj, str(data["text"]), int(data["row"]), int(data["column"]), key)
        except windows.NotATable as exc:
            return {"ok": False, "error_type": "NotATable", "error": str(exc)}, []
        return {"cell": None if cell is None else list(cell)}, []

    def _missing(self, name: str) -> str:
        names = [n for n in self.ns if summary.is_user_name(n, self._user_hidden())]
        return str(summary.missing_name_message(name, names))

    def op_summary(self, data: dict[str, Any], buffers: list[Any]) -> Any:
        """`summarize` per name, as `summarize_namespace` does, but able to stop: the
        host interrupts a walk stuck in some object's `__repr__`/`__len__`, and
        names it says to skip (they hung before) or, in safe mode, objects of types
        outside the standard data libraries get their type name only."""
        descriptions = data.get("descriptions") or {}
        skip = set(data.get("skip") or [])
        safe = bool(data.get("safe"))
        limit = data.get("limit", 500)  # None: every name
        hidden = self._user_hidden()
        rows: list[dict[str, Any]] = []
        stuck: str | None = None
        for name in list(self.ns):
            if not summary.is_user_name(name) or (name in hidden and name not in descriptions):
                continue
            if limit is not None and len(rows) >= int(limit):
                break
            obj = self.ns.get(name)
            description = descriptions.get(name, "")
            careful = safe or stuck is not None  # after a hang, only library types
            if name in skip or (careful and not _plain_type(obj)):
                why = "not described: describing it hung before" if name in skip else "…"
                rows.append(_bare_row(name, obj, description, why))
                continue
            try:
                rows.append(summary.summarize(name, obj, description).to_dict())
            except KeyboardInterrupt:
                stuck = name
                rows.append(_bare_row(name, obj, description, "not described: it took too long"))
            except Exception as exc:
                rows.append(_bare_row(name, obj, description, f"<{type(exc).__name__}>"))
        if stuck is None and not safe and links is not None:
            try:  # lookup keys and links between frames: a hint, never an error
                links.annotate(self.ns, rows)
            except (Exception, KeyboardInterrupt):
                pass
        return {"rows": rows, "stuck": stuck}, []

    def op_persistable(self, data: dict[str, Any], buffers: list[Any]) -> Any:
        """Every user name as a dump keeps it (`_cave_persist.describe`), without a cap.
        A digest that hangs (the host interrupts it) ends the digests: the rest go without."""
        limit = int(data.get("digest_below") or 0)
        skip = set(data.get("skip_digest") or ())  # held unchanged by the snapshot already
        hidden = self._user_hidden()
        rows: list[dict[str, Any]] = []
        for name in [n for n in list(self.ns) if summary.is_user_name(n, hidden)]:
            if name not in self.ns:
                continue
            obj = self.ns[name]
            below = 0 if name in skip or id(obj) in self._undigestable else limit
            try:
                row = persist.describe(name, obj, self.definitions, below)
            except KeyboardInterrupt:  # never digested again while the name holds it
                limit = 0
                self._undigestable.add(id(obj))
                row = persist.describe(name, obj, self.definitions, 0)
            rows.append(row.to_dict())
        return {"rows": rows}, []

    def op_pickle(self, data: dict[str, Any], buffers: list[Any]) -> Any:
        """The dill bytes of one name, at most `limit` of them: a dump writes them as they
        are (the host never unpickles them; a trusted load unpickles them in a kernel)."""
        name = data["name"]
        if name not in self.ns or (name in self.hidden and name not in self.injected):
            return {"ok": False, "error_type": "KeyError", "error": self._missing(name)}, []
        import dill

        value = self.ns[name]
        limit = int(data["limit"])
        sink = persist.CappedBuffer(limit)
        try:
            dill.dump(value, sink, recurse=True)
        except persist.CappedBuffer.Full:
            return {"ok": False, "error": f"its pickle is over {limit:,} bytes"}, []
        kind = type(value)
        info = {"type_name": transport.describe_type(value), "module": kind.__module__}
        return info, [sink.getbuffer()]

    def op_figure(self, data: dict[str, Any], buffers: list[Any]) -> Any:
        """One name's matplotlib Figure drawn as PNG, SVG or PDF (`_cave_figure_render`):
        only the file's bytes go back, at most `limit` of them."""
        name = data["name"]
        if name not in self.ns or (name in self.hidden and name not in self.injected):
            return {"ok": False, "error_type": "KeyError", "error": self._missing(name)}, []
        try:
            out = figure_render.render(self.ns[name], str(data["format"]), int(data["limit"]))
        except (figure_render.NotAFigure, figure_render.RenderedTooBig) as exc:
            return {"ok": False, "error_type": "NotAFigure", "error": str(exc)}, []
        return {"ok": True}, [out]

    def op_stream_parquet(self, data: dict[str, Any], buffers: list[Any]) -> Any:
        """One name's lazy frame streamed to a Parquet file here (`_cave_lazy`): the kernel
        writes it; only its path, rows and bytes go back (`streamed` None: no lazy frame)."""
        name = data["name"]
        if name not in self.ns or (name in self.hidden and name not in self.injected):
            return {"ok": False, "error_type": "KeyError", "error": self._missing(name)}, []
        lazy = sys.modules["_cave_lazy"]
        try:
            done = lazy.stream_parquet(
                self.ns[name], str(data["path"]), overwrite=bool(data.get("overwrite"))
            )
        except FileExistsError as exc:
            return {"ok": False, "error_type": "FileExistsError", "error": str(exc)}, []
        except lazy.NotStreamed as exc:
            return {"ok": False, "error_type": "NotStreamed", "error": str(exc)}, []
        except lazy.StreamError as exc:
            return {"ok": False, "error_type": "StreamError", "error": str(exc)}, []
        return {"ok": True, "streamed": None if done is None else done.to_dict()}, []

    def op_pickle_many(self, data: dict[str, Any], buffers: list[Any]) -> Any:
        """`op_pickle` for many names in one message (a snapshot's values the kernel keeps
        to itself), at most `total` bytes in all: per name its reply, with `nbuf`."""
        items: list[dict[str, Any]] = []
        out: list[Any] = []
        left = int(data["total"])
        for name in data["names"]:
            request = {"name": name, "limit": max(0, min(int(data["limit"]), left))}
            try:
                reply = self.op_pickle(request, [])
                extra, own = reply if reply is not None else ({}, [])
                extra.setdefault("ok", True)
            except Exception as exc:
                extra, own = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}, []
            left -= sum(memoryview(b).nbytes for b in own)
            extra["nbuf"] = len(own)
            items.append(extra)
            out.extend(own)
        return {"items": items}, out

    def op_display_width(self, data: dict[str, Any], buffers: list[Any]) -> Any:
        """Print frames `width` columns wide from the next cell on (the host's log width)."""
        if display is not None and hasattr(display, "set_width"):
            display.set_width(int(data["width"]))
        return None

    def op_delete(self, data: dict[str, Any], buffers: list[Any]) -> Any:
        name = data["name"]
        if name not in self.ns or name in self._user_hidden():
            return {"ok": False, "error_type": "KeyError", "error": self._missing(name)}, []
        del self.ns[name]
        self.injected.discard(name)
        return None

    def op_reset(self, data: dict[str, Any], buffers: list[Any]) -> Any:
        for name in [n for n in self.ns if n not in self.hidden and not n.startswith("__")]:
            del self.ns[name]
        self.injected.clear()
        if self.definitions is not None:
            self.definitions.clear()
        if self.kept_results is not None:
            self.kept_results.clear()
        return None

    def op_checkpoint(self, data: dict[str, Any], buffers: list[Any]) -> Any:
        """Serialise the names a cell changed. The host interrupts a value whose pickling
        hangs (a model-written `__getstate__`): it and the names after it are not saved."""
        budget = int(data["budget"])
        entries: list[dict[str, Any]] = []
        out: list[Any] = []
        stopped = False
        for name in data["names"]:
            if name not in self.ns:
                continue
            value = self.ns[name]
            entry: dict[str, Any] = {"name": name}
            entries.append(entry)
            if stopped:
                entry["error"] = "not saved: the checkpoint was stopped (it took too long)"
                continue
            if isinstance(value, types.ModuleType):
                entry.update(codec="module", meta={"module": value.__name__}, nbytes=0, buffers=[])
                continue
            estimate = estimate_size(value)
            if estimate is not None and estimate > budget:
                entry["error"] = f"about {estimate / 1e6:,.1f} MB, over the checkpoint budget"
                continue
            try:
                codec, meta, payload = self._serialise(value, budget)
            except persist.CappedBuffer.Full:
                entry["error"] = "over the checkpoint budget"
                continue
            except KeyboardInterrupt:
                stopped = True
                entry["error"] = "not saved: saving it took too long (stopped)"
                continue
            except BaseException as exc:
                entry["error"] = f"not serialisable: {type(exc).__name__}: {exc}"[:300]
                continue
            size = sum(memoryview(p).nbytes for p in payload)
            if size > budget:
                entry["error"] = f"{size / 1e6:,.1f} MB, over the checkpoint budget"
                continue
            budget -= size
            if data.get("keep"):  # kept here, on the kernel's machine: only sizes travel
                entry.update(codec=codec, meta=meta, nbytes=size, buffers=[])
                entry["kept"] = _keep_here(str(data["keep"]), name, payload)
                continue
            entry.update(
                codec=codec,
                meta=meta,
                nbytes=size,
                buffers=list(range(len(out), len(out) + len(payload))),
            )
            out.extend(payload)
        return {"entries": entries}, out

    def op_drop_checkpoint(self, data: dict[str, Any], buffers: list[Any]) -> Any:
        """Remove the checkpoint kept on this machine (the runtime stops)."""
        import shutil

        shutil.rmtree(_kept_folder(str(data["keep"])), ignore_errors=True)
        return {}, []

    def _serialise(self, value: Any, budget: int) -> tuple[str, dict[str, Any], list[Any]]:
        try:
            packed = transport.encode_arrow(value)
        except transport.TransferError:
            packed = None
        if packed is not None:
            return packed
        import dill

        sink = persist.CappedBuffer(budget)
        dill.dump(value, sink, recurse=True)
        return "dill", {}, [sink.getbuffer()]

    def op_restore(self, data: dict[str, Any], buffers: list[Any]) -> Any:
        failed: dict[str, str] = {}
        restored: list[str] = []
        for entry in data["entries"]:
            name = entry["name"]
            try:
                if entry.get("kept"):
                    payload = _kept(str(data["keep"]), name, int(entry["kept"]))
                else:
                    payload = [buffers[i] for i in entry.get("buffers", [])]
                self.ns[name] = transport.decode_in_kernel(
                    entry["codec"], entry.get("meta") or {}, payload
                )
                restored.append(name)
            except BaseException as exc:
                failed[name] = f"{type(exc).__name__}: {exc}"[:300]
        return {"restored": restored, "failed": failed}, []


def _kept_folder(key: str) -> str:
    """Where the checkpoint of runtime *key* is kept on the kernel's machine: the temporary
    folder, which outlives the kernel (a gateway restarts kernels, not machines)."""
    import os
    import tempfile

    if not re.fullmatch(r"[0-9a-f]{8,64}", key):
        raise ValueError("bad checkpoint key")
    return os.path.join(tempfile.gettempdir(), f"cave-checkpoint-{key}")


def _keep_here(key: str, name: str, payload: list[Any]) -> int:
    """Write *name*'s checkpoint buffers to this machine's disk; how many there are."""
    import os

    folder = _kept_folder(key)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    for index, part in enumerate(payload):
        path = os.path.join(folder, f"{name}.{index}")
        with open(path + ".tmp", "wb") as handle:
            handle.write(memoryview(part))
        os.replace(path + ".tmp", path)
    return len(payload)


def _kept(key: str, name: str, count: int) -> list[Any]:
    """*name*'s checkpoint buffers, as `_keep_here` wrote them."""
    import os

    folder = _kept_folder(key)
    parts = []
    for index in range(count):
        with open(os.path.join(folder, f"{name}.{index}"), "rb") as handle:
            parts.append(handle.read())
    return parts


_PLAIN_MODULES = frozenset(
    {"builtins", "datetime", "decimal", "fractions", "collections", "types", "functools",
     "re", "pathlib", "uuid", "numpy", "pandas", "pyarrow", "enum", "typing"}
)  # fmt: skip


def _plain_type(obj: Any) -> bool:
    """Describing *obj* runs no model-written code (its type comes from a known library)."""
    kind = type(obj)
    if kind is type or isinstance(obj, types.FunctionType | types.ModuleType):
        return True
    return (getattr(kind, "__module__", "") or "").split(".", 1)[0] in _PLAIN_MODULES


def _bare_row(name: str, obj: Any, description: str, preview: str) -> dict[str, Any]:
    kind = type(obj)
    return summary.VarInfo(
        name=name,
        kind="type" if kind is type else "variable",
        type_name=getattr(kind, "__name__", "?"),
        preview=preview,
        description=description,
    ).to_dict()


def _memory() -> dict[str, int]:
    try:
        with open("/proc/self/statm") as fh:
            size, rss = (int(x) for x in fh.read().split()[:2])
        import resource

        page = resource.getpagesize()
        return {"vms": size * page, "rss": rss * page}
    except Exception:
        return {}


def install(shell: Any, config: dict[str, Any]) -> CaveKernel:
    agent = CaveKernel(shell, config)
    agent.install()
    sys.modules[__name__].agent = agent  # type: ignore[attr-defined]
    return agent
