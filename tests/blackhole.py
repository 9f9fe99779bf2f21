"""A TCP proxy that can stop answering: the half-open connection of the timeout tests.

``BlackHoleProxy`` forwards a local port to a server (PostgreSQL, Redis) in a thread of its own.
``black_hole()`` stops it forwarding in either direction without closing anything: a client's
connections stay open and its writes are taken (the kernel's buffers), but nothing answers, new
connections are accepted and never forwarded. That is what a client sees of a server behind a NAT
that forgot it, a pulled cable or a frozen machine, where the kernel's own keepalives and user
timeouts may take minutes or, against a live peer kernel (as here), never fire: only a timeout of
the client's own ends the wait.
"""

from __future__ import annotations

import selectors
import socket
import threading
from urllib.parse import urlsplit, urlunsplit


class BlackHoleProxy:
    """Forwards ``127.0.0.1:port`` to ``host:target_port`` until ``black_hole()``; ``forward()`` resumes."""

    def __init__(self, host: str, port: int):
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.forwarding = threading.Event()
        self.forwarding.set()
        self.stopping = threading.Event()
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ, None)
        self.sockets: list[socket.socket] = [self.listener]
        self.thread = threading.Thread(target=self._run, name="black-hole-proxy", daemon=True)
        self.thread.start()

    def url_for(self, url: str) -> str:
        """``url`` (``scheme://user@host:port/path``) pointed at the proxy instead."""
        parts = urlsplit(url)
        netloc = f"{parts.username}@" if parts.username else ""
        return urlunsplit((parts.scheme, f"{netloc}127.0.0.1:{self.port}", parts.path, parts.query, parts.fragment))

    def black_hole(self) -> None:
        self.forwarding.clear()

    def forward(self) -> None:
        self.forwarding.set()

    def close(self) -> None:
        if self.stopping.is_set():
            return
        self.stopping.set()
        self.thread.join(5)
        for sock in self.sockets:
            sock.close()
        self.selector.close()

    def _run(self) -> None:
        while not self.stopping.is_set():
            if not self.forwarding.is_set():
                self.stopping.wait(0.05)  # nothing read, nothing accepted into the forwarding: silence
                continue
            for key, _ in self.selector.select(0.05):
                if key.data is None:
                    self._accept()
                else:
                    self._pass(key.fileobj, key.data)

    def _accept(self) -> None:
        client, _ = self.listener.accept()
        try:
            server = socket.create_connection(self.target, timeout=5)
        except OSError:
            client.close()
            return
        for sock in (client, server):
            sock.setblocking(False)
            self.sockets.append(sock)
        self.selector.register(client, selectors.EVENT_READ, server)
        self.selector.register(server, selectors.EVENT_READ, client)

    def _pass(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            data = source.recv(65536)
            if data:
                sink.setblocking(True)
                sink.sendall(data)
                sink.setblocking(False)
                return
        except OSError:
            pass
        for sock in (source, sink):  # one side closed: close the pair
            try:
                self.selector.unregister(sock)
            except (KeyError, ValueError):
                pass
            sock.close()


def within(seconds: float, call, *args):
    """``call(*args)``'s result, or its exception, from a thread of its own; a test failure when it
    has not returned after ``seconds`` (the hang the timeout tests look for: closing the proxy then
    lets the thread go)."""
    import concurrent.futures

    import pytest

    pool = concurrent.futures.ThreadPoolExecutor(1)
    try:
        return pool.submit(call, *args).result(timeout=seconds)
    except concurrent.futures.TimeoutError:
        pytest.fail(f"{getattr(call, '__name__', call)} still waits after {seconds} s: no timeout bounds it")
    finally:
        pool.shutdown(wait=False)
