"""A fake Anthropic Messages API on loopback, for driving the real Claude Code CLI in tests.

``FakeAnthropic`` listens on ``127.0.0.1:0`` (a free port per instance, so parallel tests never share one)
and answers ``POST /v1/messages`` (the client adds ``?beta=true``):

- ``mode="ok"``: a normal assistant reply (``reply_text``) — streamed as server-sent events when the request
  asks for ``"stream": true`` (``message_start``, ``content_block_start``, ``content_block_delta``…,
  ``content_block_stop``, ``message_delta``, ``message_stop``), else one JSON message.
- ``mode="error"``: an Anthropic error body with ``error_status`` (400 by default: the client does not retry
  it, so the turn fails at once; a 5xx is retried with back-off).
- ``mode="tool"``: scripted tool use. A request that offers the tool ``tool_name`` and has not yet sent its
  result gets a ``tool_use`` block (``tool_input``); the request that carries the ``tool_result`` gets the
  final text, and the result's content is recorded in ``tool_results``.

``POST /v1/messages/count_tokens`` answers a token estimate. Every other path is a 404 JSON error. Every
request is recorded (method, path, headers, parsed JSON body) in ``requests``.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import urlsplit

DEFAULT_REPLY = "Hello from the fake Anthropic API."
MODES = ("ok", "error", "tool")


@dataclass
class RecordedRequest:
    method: str
    path: str  # without the query string
    query: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or the raw text when it was not JSON

    @property
    def text(self) -> str:
        """The whole body as one string: what a test searches for primed context, skills and so on."""
        return self.body if isinstance(self.body, str) else json.dumps(self.body, ensure_ascii=False)

    @property
    def is_messages(self) -> bool:
        return self.method == "POST" and self.path == "/v1/messages"

    @property
    def tool_names(self) -> list[str]:
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        return [t.get("name", "") for t in tools or [] if isinstance(t, dict)]


@dataclass
class FakeAnthropic:
    mode: str = "ok"
    reply_text: str = DEFAULT_REPLY
    error_status: int = 400
    tool_name: str | None = None
    tool_input: dict[str, Any] = field(default_factory=dict)
    final_text: str = "Done: the tool answered."
    requests: list[RecordedRequest] = field(default_factory=list)
    tool_results: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {self.mode!r}")
        if self.mode == "tool" and not self.tool_name:
            raise ValueError("mode 'tool' needs tool_name")
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._counter = 0

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> Self:
        fake = self

        class Handler(_Handler):
            owner = fake

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "not started"
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # ------------------------------------------------------------------ what tests read

    @property
    def message_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.is_messages]

    def conversation_requests(self) -> list[RecordedRequest]:
        """The requests of the main conversation: the ones that offer the agent its tools (a title or
        summary side call offers none)."""
        return [r for r in self.message_requests if r.tool_names]

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            self._counter += 1
            return f"{prefix}_fake{self._counter:06d}"

    # ------------------------------------------------------------------ replies

    def reply_for(self, body: dict[str, Any]) -> tuple[int, list[dict[str, Any]] | dict[str, Any], str]:
        """(status, content blocks or error body, stop_reason)."""
        if self.mode == "error":
            kind = "invalid_request_error" if self.error_status < 500 else "api_error"
            return (
                self.error_status,
                {
                    "type": "error",
                    "error": {"type": kind, "message": "fake Anthropic API: scripted failure"},
                },
                "",
            )
        if self.mode == "tool" and self.tool_name in _tool_names(body):
            result = _tool_result(body)
            if result is None:
                block = {
                    "type": "tool_use",
                    "id": self._next_id("toolu"),
                    "name": self.tool_name,
                    "input": self.tool_input,
                }
                return 200, [block], "tool_use"
            with self._lock:
                self.tool_results.append(result)
            return 200, [{"type": "text", "text": self.final_text}], "end_turn"
        return 200, [{"type": "text", "text": self.reply_text}], "end_turn"


def _tool_names(body: dict[str, Any]) -> list[str]:
    return [t.get("name", "") for t in body.get("tools") or [] if isinstance(t, dict)]


def _tool_result(body: dict[str, Any]) -> Any:
    """The content of the last message's ``tool_result`` block, or None when the last message has none."""
    messages = body.get("messages") or []
    if not messages:
        return None
    content = messages[-1].get("content") if isinstance(messages[-1], dict) else None
    if not isinstance(content, list):
        return None
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            return block.get("content")
    return None


def _estimate_tokens(body: Any) -> int:
    return max(1, len(json.dumps(body)) // 4)


class _Handler(BaseHTTPRequestHandler):
    owner: FakeAnthropic
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read the records
        pass

    def _read_body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        text = raw.decode("utf-8", errors="replace")
        try:
            return json.loads(text) if text else None
        except json.JSONDecodeError:
            return text

    def _handle(self) -> None:
        split = urlsplit(self.path)
        body = self._read_body() if self.command in ("POST", "PUT", "PATCH") else None
        self.owner._record(RecordedRequest(self.command, split.path, split.query, dict(self.headers.items()), body))
        if self.command == "POST" and split.path == "/v1/messages" and isinstance(body, dict):
            self._messages(body)
        elif self.command == "POST" and split.path == "/v1/messages/count_tokens" and isinstance(body, dict):
            self._json(200, {"input_tokens": _estimate_tokens(body)})
        else:
            self._json(
                404,
                {
                    "type": "error",
                    "error": {
                        "type": "not_found_error",
                        "message": f"fake: no route {self.command} {split.path}",
                    },
                },
            )

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _handle

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", self.owner._next_id("req"))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _messages(self, body: dict[str, Any]) -> None:
        status, content, stop_reason = self.owner.reply_for(body)
        if status != 200:
            self._json(status, content)
            return
        assert isinstance(content, list)
        message_id = self.owner._next_id("msg")
        model = body.get("model") or "claude-fake"
        input_tokens = _estimate_tokens(body.get("messages"))
        output_tokens = max(1, len(json.dumps(content)) // 4)
        if not body.get("stream"):
            self._json(
                200,
                {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": content,
                    "stop_reason": stop_reason,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": input_tokens,
                        "output_tokens": output_tokens,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 0,
                    },
                },
            )
            return
        events: list[tuple[str, dict[str, Any]]] = [
            (
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": message_id,
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": [],
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": {
                            "input_tokens": input_tokens,
                            "output_tokens": 1,
                            "cache_creation_input_tokens": 0,
                            "cache_read_input_tokens": 0,
                        },
                    },
                },
            )
        ]
        for index, block in enumerate(content):
            if block["type"] == "text":
                events.append(
                    (
                        "content_block_start",
                        {
                            "type": "content_block_start",
                            "index": index,
                            "content_block": {"type": "text", "text": ""},
                        },
                    )
                )
                text = block["text"]
                middle = max(1, len(text) // 2)
                for piece in (text[:middle], text[middle:]):
                    if piece:
                        events.append(
                            (
                                "content_block_delta",
                                {
                                    "type": "content_block_delta",
                                    "index": index,
                                    "delta": {"type": "text_delta", "text": piece},
                                },
                            )
                        )
            else:  # tool_use: the input arrives as partial JSON
                events.append(
                    (
                        "content_block_start",
                        {
                            "type": "content_block_start",
                            "index": index,
                            "content_block": {**block, "input": {}},
                        },
                    )
                )
                events.append(
                    (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
                        },
                    )
                )
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        events.append(
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                    "usage": {"output_tokens": output_tokens},
                },
            )
        )
        events.append(("message_stop", {"type": "message_stop"}))
        data = "".join(f"event: {name}\ndata: {json.dumps(payload)}\n\n" for name, payload in events).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", self.owner._next_id("req"))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
