"""A scripted OpenAI-compatible chat server on 127.0.0.1 for tests.

Each request takes the next behaviour from a queue:
  ("reply", text, finish_reason, usage)   a normal answer, streamed or not as asked
  ("status", code, headers, body)          an HTTP error (429 with Retry-After, 500, …)
  ("drop",)                                 headers sent, then the connection is cut
  ("stall", pieces)                         headers and *pieces* text chunks sent, then
                                            nothing (the connection held open until the
                                            server closes); pieces=0: no first token
`delay_first` holds back every streamed reply's first chunk (seconds).
Every request body is recorded in `.requests`, its headers (lower-cased names) in `.headers`;
GET `/props` answers `.props` when set (as llama.cpp's server does), the paths in `.gets`.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _Handler(BaseHTTPRequestHandler):
    server: ScriptedOpenAIServer  # type: ignore[assignment]
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:
        """`/props` as llama.cpp's server answers it, when the test set `props`; else 404."""
        self.server.gets.append(self.path)
        found = self.path == "/props" and self.server.props is not None
        data = json.dumps(self.server.props if found else {"error": "not found"}).encode()
        self.send_response(200 if found else 404)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        self.server.requests.append(body)
        self.server.headers.append({k.lower(): v for k, v in self.headers.items()})
        try:
            behaviour = self.server.script.popleft()
        except IndexError:
            behaviour = ("status", 500, {}, {"error": {"message": "script exhausted"}})
        kind = behaviour[0]
        if kind == "status":
            _, code, headers, payload = behaviour
            data = json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
            return
        if kind == "stall":
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for i in range(behaviour[1]):
                self._write_chunk(f"data: {json.dumps(_chunk(f'part{i} ', None))}\n\n".encode())
            self.wfile.flush()
            self.server.closing.wait()
            self.close_connection = True
            return
        if kind == "drop":
            if body.get("stream"):
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                self._write_chunk(f"data: {json.dumps(_chunk('partial ', None))}\n\n".encode())
                self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
            return
        _, text, finish, usage = behaviour
        if body.get("stream"):
            self._stream(text, finish, usage, body)
        else:
            payload = {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "test"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": finish,
                    }
                ],
                "usage": usage,
            }
            data = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    def _stream(self, text: str, finish: str, usage: dict[str, int], body: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        pieces = [text[i : i + 7] for i in range(0, len(text), 7)] or [""]
        self.wfile.flush()
        time.sleep(self.server.delay_first)
        for i, piece in enumerate(pieces):
            last = i == len(pieces) - 1
            chunk = _chunk(piece, finish if last else None)
            self._write_chunk(f"data: {json.dumps(chunk)}\n\n".encode())
        include_usage = (body.get("stream_options") or {}).get("include_usage")
        if include_usage:
            chunk = _chunk(None, None)
            chunk["choices"] = []
            chunk["usage"] = usage
            self._write_chunk(f"data: {json.dumps(chunk)}\n\n".encode())
        self._write_chunk(b"data: [DONE]\n\n")
        self._write_chunk(b"")
        self.wfile.flush()
        self.close_connection = True

    def _write_chunk(self, data: bytes) -> None:
        """One HTTP/1.1 chunk (an empty one ends the body)."""
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")


def _chunk(text: str | None, finish: str | None) -> dict[str, Any]:
    delta: dict[str, Any] = {"role": "assistant"}
    if text is not None:
        delta["content"] = text
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": "test",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


class ScriptedOpenAIServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script: deque[tuple[Any, ...]] = deque()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.props: dict[str, Any] | None = None  # GET /props answers this (llama.cpp's)
        self.gets: list[str] = []  # the paths asked with GET
        self.delay_first = 0.0  # seconds before a streamed reply's first chunk
        self.closing = threading.Event()  # set on exit: stalled replies end
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def __enter__(self) -> ScriptedOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.closing.set()
        self.shutdown()
        self.server_close()
