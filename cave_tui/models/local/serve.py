"""The embedded model's server process: llama.cpp (xllamacpp) on 127.0.0.1, owned by one cave.

    python -m cave_tui.models.local.serve --model M.gguf --port P --alias A --parent PID

It serves until SIGTERM or until its parent process ends, however that ends (`kill -9`
included): it waits on the parent through a pidfd (Linux) or kqueue (macOS/BSD), the
operating system's own notice of a process exit, so it never outlives the cave that owns it.
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import sys


def _wait_for_parent_or_signal(parent: int) -> None:
    """Block until *parent* exits or this process is asked to stop (SIGTERM, SIGINT)."""
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: None)
    if sys.platform == "linux":
        try:
            pidfd = os.pidfd_open(parent)
        except ProcessLookupError:
            return  # the parent is already gone
        select.select([pidfd, wake_r], [], [])
    elif sys.platform == "darwin" or "bsd" in sys.platform:
        queue = select.kqueue()
        watch = select.kevent(
            parent, filter=select.KQ_FILTER_PROC, flags=select.KQ_EV_ADD, fflags=select.KQ_NOTE_EXIT
        )
        reader = select.kevent(wake_r, filter=select.KQ_FILTER_READ, flags=select.KQ_EV_ADD)
        try:
            queue.control([watch, reader], 1, None)
        except ProcessLookupError:
            return
    else:
        raise SystemExit("the embedded model needs Linux (pidfd) or macOS/BSD (kqueue)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="cave-local-model")
    parser.add_argument("--model", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--alias", required=True)
    parser.add_argument("--parent", type=int, required=True)
    parser.add_argument("--threads", type=int, default=max(1, (os.cpu_count() or 2)))
    parser.add_argument("--ctx", type=int, default=8192)
    parser.add_argument("--n-predict", type=int, default=1024)
    parser.add_argument("--slot-dir", default=None, help="where slot states are saved and read")
    args = parser.parse_args(argv)
    if os.getppid() != args.parent:
        sys.exit("cave-local-model: the cave that started this server is gone")
    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = args.model
    params.n_ctx, params.n_parallel, params.n_predict = args.ctx, 1, args.n_predict
    params.cpuparams.n_threads = params.cpuparams_batch.n_threads = args.threads
    params.hostnames, params.port = ["127.0.0.1"], args.port
    params.model_alias = {args.alias}  # a set: a plain str would be split into characters
    params.warmup = False  # an empty decode at load: ~3 CPU-s and ~1 s that no answer needs
    params.endpoint_slots = False  # GET /slots (a monitor) is not needed; save/restore is
    if args.slot_dir:  # llama.cpp joins folder and file name without a separator
        params.slot_save_path = os.path.join(args.slot_dir, "")
    server = xlc.Server(params)  # serves from its own threads while it is referenced
    print(f"serving {args.model} on http://127.0.0.1:{args.port}/v1", file=sys.stderr, flush=True)
    _wait_for_parent_or_signal(args.parent)
    print(f"stopping {type(server).__name__}", file=sys.stderr, flush=True)
    os._exit(0)  # llama.cpp's threads need no orderly goodbye


if __name__ == "__main__":
    main()
