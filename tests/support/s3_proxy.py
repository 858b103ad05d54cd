"""An HTTP proxy in front of the S3 server that misbehaves as loaded stores do (fault injection).

Each request is forwarded to the server unless a fault picks it. Faults apply to writes
(PUT, POST, DELETE) whose path contains ``only`` (e.g. ``_fscommit`` for the lock and the
ledger, ``.parquet`` for data), each drawn from a seeded random generator:

- ``delay_s``: hold the write back for a uniform time in ``[0, delay_s]`` before the store
  sees it (a slow or distant store: what makes two runs' writes interleave);
- ``slowdown``: answer ``503 SlowDown`` without forwarding (throttling);
- ``reset_before``: drop the connection without forwarding (a reset; nothing applied);
- ``reset_after``: forward, then drop the connection without answering (the store applied
  the write but the client never hears so, and retries it);
- ``strip_conditions``: remove ``If-None-Match`` / ``If-Match`` (a store that ignores
  conditional writes).

Listens on 127.0.0.1 only; counts what it did in ``counts``.
"""

from __future__ import annotations

import http.client
import random
import socket
import struct
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_WRITES = {"PUT", "POST", "DELETE"}
_HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "content-length"}
_SLOWDOWN = (
    b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message></Error>"
)


class S3FaultProxy:
    def __init__(self, target_port: int, seed: int = 0) -> None:
        self.target_port = target_port
        self.random = random.Random(seed)
        self.delay_s = 0.0
        self.slowdown = 0.0
        self.reset_before = 0.0
        self.reset_after = 0.0
        self.strip_conditions = False
        self.only = ""
        self.counts: Counter = Counter()
        self._lock = threading.Lock()
        proxy = self

        class Handler(_Handler):
            owner = proxy

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def configure(self, **faults: float | bool | str) -> None:
        for name, value in faults.items():
            if not hasattr(self, name):
                raise AttributeError(name)
            setattr(self, name, value)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def draw(self, method: str, path: str) -> tuple[str | None, float]:
        """The fault for one request (None: forward as is) and its delay."""
        if method not in _WRITES or self.only not in path:
            return None, 0.0
        with self._lock:
            roll = self.random.random()
            delay = self.random.uniform(0, self.delay_s)
        for fault, rate in (
            ("slowdown", self.slowdown),
            ("reset_before", self.reset_before),
            ("reset_after", self.reset_after),
        ):
            if roll < rate:
                self._count(fault)
                return fault, delay
            roll -= rate
        if delay:
            self._count("delayed")
        return None, delay

    def _count(self, what: str) -> None:
        with self._lock:
            self.counts[what] += 1


class _Handler(BaseHTTPRequestHandler):
    owner: S3FaultProxy
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _relay(self) -> None:
        body = self._read_body()
        fault, delay = self.owner.draw(self.command, self.path)
        if delay:
            threading.Event().wait(delay)
        if fault == "slowdown":
            self._answer(503, [("Content-Type", "application/xml")], _SLOWDOWN)
            return
        if fault == "reset_before":
            self._reset()
            return
        headers = {
            k: v
            for k, v in self.headers.items()
            if k.lower() not in _HOP_HEADERS
            and not (self.owner.strip_conditions and k.lower() in ("if-none-match", "if-match"))
        }
        if body is not None:
            headers["Content-Length"] = str(len(body))
        upstream = http.client.HTTPConnection("127.0.0.1", self.owner.target_port, timeout=120)
        try:
            upstream.request(self.command, self.path, body=body, headers=headers)
            response = upstream.getresponse()
            payload = response.read()
            answer = [
                (k, v)
                for k, v in response.getheaders()
                if k.lower() not in _HOP_HEADERS
                or (self.command == "HEAD" and k.lower() == "content-length")
            ]
        finally:
            upstream.close()
        if fault == "reset_after":
            self._reset()
            return
        self._answer(response.status, answer, payload)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _relay

    def _read_body(self) -> bytes | None:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = self.headers.get("Content-Length")
        return self.rfile.read(int(length)) if length is not None else None

    def _answer(self, status: int, headers: list[tuple[str, str]], payload: bytes) -> None:
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        if self.command != "HEAD":  # a HEAD answer keeps the object's Content-Length
            self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def _reset(self) -> None:
        """Close with a TCP reset: the client sees the connection drop mid-request."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        self.connection.close()
