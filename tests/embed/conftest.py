"""Loopback HTTP servers that speak the Ollama and Voyage embedding protocols, for the embed tests.

Each server is a real ``ThreadingHTTPServer`` on 127.0.0.1 with an ephemeral port, run in a thread and
shut down by the fixture. It records every request (path, headers, JSON body) and answers through a
``responder(request, n)`` callable (``n`` is the 1-based request count). Request counts are bounded:
past ``MAX_REQUESTS`` it answers 400 (never retried), so a runaway client cannot loop forever.
"""

from __future__ import annotations

import hashlib
import json
import random
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

MAX_REQUESTS = 200

OLLAMA_ENV = ("CEREBRO_OLLAMA_URL", "OLLAMA_HOST", "CEREBRO_VOYAGE_URL", "CEREBRO_VOYAGE_API_KEY")


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    raw: bytes
    body: Any
    answer: Any = None  # the JSON the server sent back (when it sent JSON)


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict/list → JSON; bytes → as is; str → utf-8 text
    delay: float = 0.0  # seconds to wait before answering (released early when the fixture stops)
    raw: bytes | None = None  # written to the socket as is (status line and all), then the connection closes


def vector_for(text: str, dims: int) -> list[float]:
    """A deterministic, not-normalised vector derived from a hash of ``text``."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    rng = random.Random(seed)
    return [rng.uniform(-1.0, 1.0) for _ in range(dims)]


def ollama_ok(dims: int = 768) -> Callable[[Recorded, int], Reply]:
    def answer(request: Recorded, _n: int) -> Reply:
        prompt = request.body.get("prompt", "") if isinstance(request.body, dict) else ""
        return Reply(200, {"embedding": vector_for(prompt, dims)})

    return answer


def voyage_ok(dims: int = 1024, *, reverse: bool = False) -> Callable[[Recorded, int], Reply]:
    def answer(request: Recorded, _n: int) -> Reply:
        inputs = request.body.get("input", []) if isinstance(request.body, dict) else []
        data = [{"object": "embedding", "embedding": vector_for(t, dims), "index": i} for i, t in enumerate(inputs)]
        if reverse:
            data.reverse()
        return Reply(200, {"object": "list", "data": data, "model": request.body.get("model")})

    return answer


def truncated_json(text: str = '{"embedding": [0.25, 0.5', announced: int = 1000) -> Reply:
    """A 200 whose body stops short of its Content-Length: the connection dropped mid-answer."""
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {announced}\r\n\r\n"
    return Reply(raw=head.encode() + text.encode())


def scripted(*replies: Reply, then: Callable[[Recorded, int], Reply] | None = None) -> Callable[[Recorded, int], Reply]:
    """The n-th request gets ``replies[n-1]``; after the script, ``then`` (default: 400)."""

    def answer(request: Recorded, n: int) -> Reply:
        if n <= len(replies):
            return replies[n - 1]
        return then(request, n) if then else Reply(400, {"error": "script exhausted"})

    return answer


class _Handler(BaseHTTPRequestHandler):
    server: LoopbackServer

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        record = Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, raw, body)
        with self.server.lock:
            self.server.requests.append(record)
            n = len(self.server.requests)
        reply = (
            Reply(400, {"error": "too many requests for this test"})
            if n > MAX_REQUESTS
            else self.server.responder(record, n)
        )
        if reply.delay:
            self.server.release.wait(reply.delay)
        if reply.raw is not None:
            self.close_connection = True
            try:
                self.wfile.write(reply.raw)
                self.wfile.flush()
            except OSError:
                pass
            return
        if isinstance(reply.body, bytes):
            data, kind = reply.body, "application/json"
        elif isinstance(reply.body, str):
            data, kind = reply.body.encode("utf-8"), "text/plain"
        else:
            record.answer = reply.body
            data, kind = json.dumps(reply.body).encode("utf-8"), "application/json"
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client gave up (timeout): nothing to answer
            pass

    do_GET = do_POST

    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass


class LoopbackServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, responder: Callable[[Recorded, int], Reply], port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.responder = responder
        self.requests: list[Recorded] = []
        self.lock = threading.Lock()
        self.release = threading.Event()
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        self.running = True

    @property
    def port(self) -> int:
        return self.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def handle_error(self, request: Any, client_address: Any) -> None:  # a client that hung up is no error here
        pass

    def stop(self) -> None:
        if not self.running:
            return
        self.running = False
        self.release.set()
        self.shutdown()
        self.server_close()
        self._thread.join(timeout=5)


@pytest.fixture
def http_server() -> Iterator[Callable[..., LoopbackServer]]:
    """``start(responder, port=0)`` → a running LoopbackServer; every one is stopped at teardown."""
    started: list[LoopbackServer] = []

    def start(responder: Callable[[Recorded, int], Reply], port: int = 0) -> LoopbackServer:
        server = LoopbackServer(responder, port)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


@pytest.fixture(autouse=True)
def _clean_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No provider URL or key from the developer's shell leaks into these tests."""
    for name in OLLAMA_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def count_urlopen(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Count every request the network providers send (their only way out is http._OPENER)."""
    from cerebro.embed import http

    calls: list[Any] = []
    real = http._OPENER.open

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[0] if args else kwargs.get("fullurl"))
        return real(*args, **kwargs)

    monkeypatch.setattr(http._OPENER, "open", counting)
    return calls


def unit_mean(vectors: list[list[float]]) -> list[float]:
    """By hand: normalise each vector, sum, normalise the sum."""
    import math

    def norm(v: list[float]) -> list[float]:
        n = math.sqrt(sum(x * x for x in v))
        return [x / n for x in v]

    total = [0.0] * len(vectors[0])
    for v in vectors:
        for i, x in enumerate(norm(v)):
            total[i] += x
    return norm(total)
