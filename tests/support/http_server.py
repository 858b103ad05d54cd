"""A real HTTP server (the standard library's) on 127.0.0.1, in its own process.

The tests' report endpoint, a receiver written for Paimon's ``http-report``: it appends
every request (path, headers, JSON body) to ``requests.jsonl`` and answers as
``answer.json`` says at that moment (status, body, delay, ``Location``): by default 200
with ``{"result": "SUCCESS"}``, Paimon's success, so a test can make it refuse, fail, hang
or redirect, then recover. Started and stopped by PID.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SUCCESS = '{"result": "SUCCESS"}'


class HttpServer:
    def __init__(self, state: Path) -> None:
        self.state = state
        state.mkdir(parents=True, exist_ok=True)
        self.answer(200)
        port_file = state / "port"
        port_file.unlink(missing_ok=True)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.http_server", str(state)],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=(state / "server.log").open("w"),
        )
        deadline = time.monotonic() + 30
        while not port_file.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((state / "server.log").read_text())
            time.sleep(0.05)
        self.port = int(port_file.read_text())

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def answer(
        self,
        status: int,
        body: str | None = None,
        delay_s: float = 0.0,
        location: str | None = None,
    ) -> None:
        """How the next requests are answered; ``body`` defaults to Paimon's success for a
        2xx status and to a maintenance note otherwise."""
        if body is None:
            body = SUCCESS if status < 300 else "the catalog is down for maintenance"
        answer = {"status": status, "body": body, "delay_s": delay_s, "location": location}
        (self.state / "answer.json").write_text(json.dumps(answer))

    def requests(self) -> list[dict]:
        log = self.state / "requests.jsonl"
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    def stop(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=30)


def _handler(state: Path) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            answer = json.loads((state / "answer.json").read_text())
            record = {
                "path": self.path,
                "headers": dict(self.headers.items()),
                "body": json.loads(body) if body else None,
                "answered": answer["status"],
            }
            with (state / "requests.jsonl").open("a") as log:
                log.write(json.dumps(record) + "\n")
            time.sleep(answer["delay_s"])
            self.send_response(answer["status"])
            if answer["location"]:
                self.send_header("Location", answer["location"])
            message = answer["body"].encode()
            self.send_header("Content-Length", str(len(message)))
            self.end_headers()
            self.wfile.write(message)

        def log_message(self, *args: object) -> None:
            pass

    return Handler


if __name__ == "__main__":
    state_dir = Path(sys.argv[1])
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state_dir))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    (state_dir / "port.tmp").write_text(str(server.server_address[1]))
    (state_dir / "port.tmp").rename(state_dir / "port")  # whole, or not yet there
    server.serve_forever()
