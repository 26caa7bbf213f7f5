"""A fake OpenAI Responses API on loopback, for driving the real Codex CLI in tests.

Codex talks to a model provider over the Responses API: ``POST {base_url}/responses`` with ``"stream": true``,
answered with server-sent events (``response.created``, ``response.output_item.done`` per output item,
``response.completed``). ``FakeOpenAI`` listens on ``127.0.0.1:0`` (a free port per instance) and answers:

- ``mode="ok"``: one assistant message (``reply_text``).
- ``mode="error"``: a ``response.failed`` event (``error_status`` ≥ 400 answers that HTTP status instead).
- ``mode="tool"``: scripted tool use. A request that offers the function ``tool_name`` and does not yet carry
  its output gets a ``function_call`` item (``tool_input`` as the JSON ``arguments``); the request that
  carries the ``function_call_output`` gets ``final_text``, and the output is recorded in ``tool_results``.

``GET {base_url}/models`` answers an empty model list. Every other path is a 404 JSON error. Every request is
recorded (method, path, headers, parsed JSON body) in ``requests``.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import urlsplit

DEFAULT_REPLY = "Hello from the fake OpenAI API."
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
        return self.body if isinstance(self.body, str) else json.dumps(self.body, ensure_ascii=False)

    @property
    def is_responses(self) -> bool:
        return self.method == "POST" and self.path.endswith("/responses")

    @property
    def tool_names(self) -> list[str]:
        return _tool_names(self.body) if isinstance(self.body, dict) else []


@dataclass
class FakeOpenAI:
    mode: str = "ok"
    reply_text: str = DEFAULT_REPLY
    error_status: int = 0
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
        """What a Codex ``model_providers.<id>.base_url`` is set to (Codex appends ``/responses``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    # ------------------------------------------------------------------ what tests read

    def responses_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.is_responses]

    def conversation_requests(self) -> list[RecordedRequest]:
        """The turns of the agent's conversation: the requests that offer it tools."""
        return [r for r in self.responses_requests() if r.tool_names]

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            self._counter += 1
            return f"{prefix}_fake{self._counter:06d}"

    # ------------------------------------------------------------------ replies

    def events_for(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The server-sent events that answer one ``/responses`` request."""
        response_id = self._next_id("resp")
        events: list[dict[str, Any]] = [
            {"type": "response.created", "response": {"id": response_id, "status": "in_progress"}}
        ]
        if self.mode == "error":
            events.append(
                {
                    "type": "response.failed",
                    "response": {
                        "id": response_id,
                        "status": "failed",
                        "error": {"code": "invalid_request", "message": "fake OpenAI API: scripted failure"},
                    },
                }
            )
            return events
        item: dict[str, Any]
        text = self.reply_text
        if self.mode == "tool" and self.tool_name in _tool_names(body):
            output = _function_output(body)
            if output is None:
                namespace, name = _offered(body)[self.tool_name]
                item = {
                    "type": "function_call",
                    "id": self._next_id("fc"),
                    "call_id": self._next_id("call"),
                    **({"namespace": namespace} if namespace else {}),
                    "name": name,
                    "arguments": json.dumps(self.tool_input),
                    "status": "completed",
                }
                events += [
                    {"type": "response.output_item.added", "output_index": 0, "item": item},
                    {"type": "response.output_item.done", "output_index": 0, "item": item},
                ]
                return [*events, _completed(response_id, body)]
            with self._lock:
                self.tool_results.append(output)
            text = self.final_text
        item_id = self._next_id("msg")
        item = {
            "type": "message",
            "id": item_id,
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
        events += [
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {**item, "status": "in_progress", "content": []},
            },
            {
                "type": "response.output_text.delta",
                "item_id": item_id,
                "output_index": 0,
                "content_index": 0,
                "delta": text,
            },
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            _completed(response_id, body),
        ]
        return events


def _completed(response_id: str, body: Any) -> dict[str, Any]:
    tokens = max(1, len(json.dumps(body)) // 4)
    return {
        "type": "response.completed",
        "response": {
            "id": response_id,
            "status": "completed",
            "usage": {
                "input_tokens": tokens,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 1,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": tokens + 1,
            },
        },
    }


def _offered(body: dict[str, Any]) -> dict[str, tuple[str | None, str]]:
    """Every function the request offers: its full name → (namespace, name). A function inside a
    ``namespace`` tool (Codex groups each MCP server's tools so: namespace ``mcp__<server>``) is called by the
    model as that namespace plus its own name; its full name is ``<namespace>__<name>``."""
    offered: dict[str, tuple[str | None, str]] = {}
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace" and isinstance(tool.get("tools"), list):
            namespace = str(tool.get("name", ""))
            for inner in tool["tools"]:
                if isinstance(inner, dict) and inner.get("name"):
                    offered[f"{namespace.rstrip('_')}__{inner['name']}"] = (namespace, str(inner["name"]))
        elif tool.get("name"):
            offered[str(tool["name"])] = (None, str(tool["name"]))
    return offered


def _tool_names(body: dict[str, Any]) -> list[str]:
    return list(_offered(body))


def _function_output(body: dict[str, Any]) -> Any:
    """The output of the last ``function_call_output`` item of the input, or None when the input's last
    item is not one."""
    items = body.get("input") or []
    if not isinstance(items, list) or not items:
        return None
    last = items[-1]
    if isinstance(last, dict) and last.get("type") == "function_call_output":
        return last.get("output")
    return None


class _Handler(BaseHTTPRequestHandler):
    owner: FakeOpenAI
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
        if self.command == "POST" and split.path.endswith("/responses") and isinstance(body, dict):
            self._responses(body)
        elif self.command == "GET" and split.path.endswith("/models"):
            self._json(200, {"object": "list", "data": [], "models": []})
        else:
            self._json(404, {"error": {"type": "not_found", "message": f"fake: no route {self.command} {split.path}"}})

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _handle

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _responses(self, body: dict[str, Any]) -> None:
        if self.owner.mode == "error" and self.owner.error_status >= 400:
            self._json(
                self.owner.error_status,
                {"error": {"type": "invalid_request_error", "message": "fake OpenAI API: scripted failure"}},
            )
            return
        events = self.owner.events_for(body)
        data = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
