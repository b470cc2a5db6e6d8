"""A tiny HTTP server on 127.0.0.1 that answers GETs from a table of JSON routes (for probes)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _Handler(BaseHTTPRequestHandler):
    server: JsonRoutesServer  # type: ignore[assignment]

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.server.hits.append(self.path)
        if self.path not in self.server.routes:
            self.send_error(404)
            return
        data = json.dumps(self.server.routes[self.path]).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class JsonRoutesServer(ThreadingHTTPServer):
    """`with JsonRoutesServer({"/api/tags": {...}}) as s:` serves on `s.url` in the block."""

    def __init__(self, routes: dict[str, Any]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.routes = routes
        self.hits: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> JsonRoutesServer:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()
