"""``cerebro mcp --http HOST:PORT``: streamable HTTP that no other local user can reach (ADR 0020).

- **Loopback only** unless ``--allow-remote``: a host that is not a loopback address (``127.0.0.0/8``,
  ``::1``, ``localhost``) is refused before anything binds. Requests must carry a loopback ``Host`` header
  (the SDK's DNS-rebinding protection), so a web page cannot reach the server through a rebound name.
- **A bearer token** on every request: ``Authorization: Bearer <token>``, compared in constant time; without
  it, 401. Any local user can connect to a loopback port, so the port alone protects nothing. The token
  (32 random bytes, URL-safe) lives in ``CEREBRO_HOME/mcp-token``: written aside with ``O_EXCL|O_NOFOLLOW``
  and mode 0600, then hard-linked into place (it appears whole or not at all; two servers starting together
  agree on one token), and reused by later starts. A token file that is a symlink, not ours, or readable by
  others is refused with the fix. ``cerebro mcp --rotate-token`` replaces it (renamed over it, whole); a running
  server reads the file again when it changes, so a token that leaked stops working at once, without a restart.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import secrets
import socket
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cerebro import paths
from cerebro.errors import InvalidInput, quote

if TYPE_CHECKING:
    from collections.abc import Callable

    from starlette.types import ASGIApp, Receive, Scope, Send

    from cerebro.mcp.server import CerebroServer

TOKEN_FILE = "mcp-token"  # noqa: S105 - a file or token name, not a secret
ENDPOINT = "/mcp"


def token_path() -> Path:
    return paths.home() / TOKEN_FILE


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # another name: it may resolve anywhere


def parse_address(text: str, *, allow_remote: bool = False) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6; port 0 picks a free one) → (host, port); a host that is not
    loopback is refused unless ``allow_remote``."""
    host, sep, port_text = text.strip().rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not sep or not host or not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise InvalidInput(f"--http takes HOST:PORT, e.g. 127.0.0.1:8765, got {quote(text)}")
    if not is_loopback(host) and not allow_remote:
        raise InvalidInput(
            f"--http {quote(host)} is not a loopback address: other machines could reach your memory. Use "
            "127.0.0.1, or add --allow-remote if you mean it (the bearer token is still required)"
        )
    return host, int(port_text)


def _read_token(path: Path) -> str:
    try:
        # O_NONBLOCK: a FIFO planted there must not hang the start (the type is checked before anything is read)
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InvalidInput(
            f"cannot read the MCP token file {path} ({exc.strerror}): delete it; the next start makes a new one"
        ) from None
    info = os.fstat(fd)  # before it is read as text: a folder or a FIFO there is refused, not read
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        os.close(fd)
        raise InvalidInput(
            f"the MCP token file {path} is not a private file of yours (mode {stat.S_IMODE(info.st_mode):o}): "
            "delete it; the next start makes a new one"
        )
    with os.fdopen(fd, "rb") as handle:
        token = handle.read().decode("utf-8", "replace").strip()
    if len(token) < 32 or "\ufffd" in token:
        raise InvalidInput(
            f"the MCP token file {path} holds no usable token: delete it; the next start makes a new one"
        )
    return token


def _new_token_file(path: Path, put: Callable[[Path, Path], None]) -> None:
    """A new token written aside (private, never through a planted link), then ``put`` in place whole."""
    paths.ensure_private_dir(path.parent)
    aside = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            os.fchmod(handle.fileno(), 0o600)
            handle.write(secrets.token_urlsafe(32) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        put(aside, path)
    finally:
        if os.path.lexists(aside):
            os.unlink(aside)


def _link_unless_there(aside: Path, path: Path) -> None:
    try:
        os.link(aside, path)
    except FileExistsError:
        pass  # another server made it meanwhile: use theirs


def ensure_token(path: Path | None = None) -> str:
    """The bearer token, made on first use (see the module docstring)."""
    path = path or token_path()
    if not os.path.lexists(path):
        _new_token_file(path, _link_unless_there)
    return _read_token(path)


def rotate_token(path: Path | None = None) -> Path:
    """Replace the bearer token with a new one (clients holding the old one get 401 from every running server)."""
    path = path or token_path()
    _new_token_file(path, os.replace)
    _read_token(path)  # the same checks a server makes of it
    return path


MAX_REPAIRED_BYTES = 4 * 1024 * 1024  # the SDK's own cap on a request body: past it, passed on as it came (it says 413)


class LenientSurrogates:
    """ASGI middleware, behind the token check: a POST body whose JSON escapes a lone surrogate (half an emoji) is
    passed on with U+FFFD in its place, as over stdio (:mod:`cerebro.mcp.wire`) — the SDK's parser refused it with
    "Parse error" and no id. Any other body, and one past the SDK's cap, goes on as it came."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        held: list[Any] = []  # the messages read so far, passed on in order
        size, more = 0, True
        while more:
            message = await receive()
            held.append(message)
            if message["type"] != "http.request":
                break  # a disconnect: passed on as it came
            size += len(message.get("body", b""))
            more = bool(message.get("more_body", False))
            if size > MAX_REPAIRED_BYTES:
                break
        if not more and held and held[-1]["type"] == "http.request":
            body = b"".join(m.get("body", b"") for m in held)
            held = [{"type": "http.request", "body": _repaired(body), "more_body": False}]

        async def replay() -> Any:  # noqa: ANN401 - an ASGI message
            return held.pop(0) if held else await receive()

        await self.app(scope, replay, send)


def _repaired(body: bytes) -> bytes:
    from cerebro import surrogates

    if not surrogates.ESCAPE.search(body):
        return body
    try:
        return json.dumps(surrogates.replaced(json.loads(body)), ensure_ascii=False).encode("utf-8")
    except (ValueError, RecursionError):
        return body  # not JSON: the SDK says so, as for any other


class BearerAuth:
    """ASGI middleware: HTTP requests without ``Authorization: Bearer <token>`` get 401 and never reach MCP. The
    token file is read again when it changes (``--rotate-token``); one that cannot be read then (deleted, made
    readable by others) admits no one until the server restarts and makes a new one."""

    def __init__(self, app: ASGIApp, path: Path) -> None:
        self.app = app
        self._path = path
        # The file's stamp before its token is read: a rotation in between shows as a change at the first request
        # (stamped after, the old token would have stood for the new file until the next rotation).
        self._seen = self._stamp()
        self._token: bytes | None = _read_token(path).encode("utf-8")

    def _stamp(self) -> tuple[int, int, int] | None:
        try:
            info = os.stat(self._path)
        except OSError:
            return None
        return (info.st_ino, info.st_mtime_ns, info.st_size)

    def _current(self) -> bytes | None:
        stamp = self._stamp()
        if stamp != self._seen:
            self._seen = stamp
            try:
                self._token = _read_token(self._path).encode("utf-8")
            except InvalidInput as exc:
                self._token = None
                print(f"cerebro mcp: {exc}; refusing every request until then", file=sys.stderr, flush=True)
        return self._token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._authorized(scope):
            body = json.dumps(
                {
                    "error": f"unauthorized: send 'Authorization: Bearer <token>' (the token is in "
                    f"CEREBRO_HOME/{TOKEN_FILE})"
                }
            ).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                        (b"www-authenticate", b'Bearer realm="cerebro"'),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)

    def _authorized(self, scope: Scope) -> bool:
        for name, value in scope.get("headers") or []:
            if name.lower() == b"authorization":
                scheme, _, given = value.partition(b" ")
                token = self._current()
                return token is not None and scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), token)
        return False


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise InvalidInput(f"cannot listen on {host}:{port} ({exc.strerror})") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


MAX_CONNECTIONS = 128
HEADER_SECONDS = 10.0  # a request's headers arrive within this, or the connection is closed


def _headers_in_time() -> type:
    """uvicorn's HTTP/1.1 protocol, closing a connection that has not finished a request's headers within
    :data:`HEADER_SECONDS` of connecting or of its last answer. uvicorn has no such limit: a client that sent a header
    line now and then held its connection (and a file descriptor) for ever — a few hundred of them, and a real
    client could not connect (a review). No token is needed to open a connection, so this comes before it."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeadersInTime(H11Protocol):
        _header_timer: Any = None

        def connection_made(self, transport: Any) -> None:  # noqa: ANN401 - an asyncio transport
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.cycle is not None and not self.cycle.response_complete:  # a request's headers are in
                self._disarm()
            elif self._header_timer is None and not self.transport.is_closing():
                self._arm()  # the next request of a kept-alive connection is arriving

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._header_timer = self.loop.call_later(HEADER_SECONDS, self._too_slow)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _too_slow(self) -> None:
            self._header_timer = None
            if (self.cycle is None or self.cycle.response_complete) and not self.transport.is_closing():
                self.transport.close()

    return HeadersInTime


def serve(server: CerebroServer, host: str, port: int) -> None:
    """Serve ``server`` (a :class:`cerebro.mcp.server.CerebroServer`) on ``host:port`` until interrupted."""
    import asyncio

    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    ensure_token()  # made (or its file checked) before anything binds
    security = None
    if not is_loopback(host):
        print(
            "cerebro mcp: warning: plain HTTP — the token and every memory cross the network unencrypted; reach it "
            "through an SSH tunnel or a TLS proxy",
            file=sys.stderr,
            flush=True,
        )
    if is_loopback(host):
        named = f"[{host}]" if ":" in host else host
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[f"{named}:*", "127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=[f"http://{named}:*", "http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        )
    app = server.server.streamable_http_app(streamable_http_path=ENDPOINT, host=host, transport_security=security)
    sock = _bind(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    print(
        f"cerebro mcp: streamable HTTP on http://{shown}:{bound}{ENDPOINT} — clients send "
        f"'Authorization: Bearer <token>'; the token is in {token_path()}",
        file=sys.stderr,
        flush=True,
    )
    config = uvicorn.Config(
        BearerAuth(LenientSurrogates(app), token_path()),
        log_level="warning",
        access_log=False,
        lifespan="on",
        http=_headers_in_time(),
        limit_concurrency=MAX_CONNECTIONS,  # past it, 503: a flood of idle sockets cannot use up the descriptors
    )
    server.start()
    try:
        asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))
    finally:
        sock.close()
        server.close()
