"""A TCP proxy in front of a real server that misbehaves on demand (fault injection).

Modes: ``pass`` forwards; ``delay`` holds each server response back for ``delay_s``;
``cut`` forwards ``cut_after`` bytes of server responses, then drops the connection (a
server dying mid-call); ``refuse`` closes every new connection at once (a server down).
Listens on 127.0.0.1 only.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time


class FaultProxy:
    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.mode = "pass"
        self.delay_s = 0.0
        self.cut_after = 0
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self._closed = True
        self._server.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            if self.mode == "refuse":
                client.close()
                continue
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            budget = [self.cut_after if self.mode == "cut" else None]
            threading.Thread(target=self._pipe, args=(client, upstream, None), daemon=True).start()
            threading.Thread(
                target=self._pipe, args=(upstream, client, budget), daemon=True
            ).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, budget: list | None) -> None:
        try:
            while data := source.recv(65536):
                if budget is not None and budget[0] is not None:
                    if len(data) >= budget[0]:
                        sink.sendall(data[: budget[0]])
                        break
                    budget[0] -= len(data)
                if budget is not None and self.mode == "delay":
                    time.sleep(self.delay_s)
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
