"""The fake OpenAI Responses API itself, without the real client (runs everywhere; no npm needed)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from .fake_openai import FakeOpenAI

NAMESPACE = {
    "type": "namespace",
    "name": "mcp__cerebro",
    "description": "Tools in the mcp__cerebro namespace.",
    "tools": [{"type": "function", "name": "recall", "parameters": {"type": "object"}}],
}


def _post(api: FakeOpenAI, path: str, body: dict[str, Any]) -> tuple[int, str, str]:
    request = urllib.request.Request(
        api.base_url + path, data=json.dumps(body).encode(), method="POST", headers={"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers.get("content-type", ""), response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("content-type", ""), exc.read().decode()


def _events(text: str) -> list[dict[str, Any]]:
    events = []
    for chunk in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        event = json.loads(lines["data"])
        assert event["type"] == lines["event"]
        events.append(event)
    return events


def _request(input_items: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"model": "gpt-fake", "stream": True, "input": input_items, "tools": tools or []}


def test_ok_mode_streams_one_assistant_message() -> None:
    with FakeOpenAI(reply_text="Hi") as api:
        status, kind, text = _post(api, "/responses", _request([{"type": "message", "role": "user", "content": "x"}]))
    assert (status, kind) == (200, "text/event-stream")
    events = _events(text)
    assert [e["type"] for e in events] == [
        "response.created",
        "response.output_item.added",
        "response.output_text.delta",
        "response.output_item.done",
        "response.completed",
    ]
    assert events[3]["item"]["content"] == [{"type": "output_text", "text": "Hi", "annotations": []}]
    assert events[-1]["response"]["usage"]["total_tokens"] >= 1
    [recorded] = api.responses_requests()
    assert recorded.path == "/v1/responses" and api.conversation_requests() == []  # no tools offered


def test_tool_mode_calls_a_namespaced_function_then_records_its_output() -> None:
    with FakeOpenAI(mode="tool", tool_name="mcp__cerebro__recall", tool_input={"query": "q"}, final_text="End") as api:
        first = _request([{"type": "message", "role": "user", "content": "x"}], [NAMESPACE])
        _, _, text = _post(api, "/responses", first)
        call = next(e["item"] for e in _events(text) if e["type"] == "response.output_item.done")
        assert (call["type"], call["namespace"], call["name"]) == ("function_call", "mcp__cerebro", "recall")
        assert json.loads(call["arguments"]) == {"query": "q"}
        second = _request(
            [
                *first["input"],
                {k: call[k] for k in ("type", "call_id", "namespace", "name", "arguments")},
                {"type": "function_call_output", "call_id": call["call_id"], "output": "the memory"},
            ],
            [NAMESPACE],
        )
        _, _, text = _post(api, "/responses", second)
    done = [e["item"] for e in _events(text) if e["type"] == "response.output_item.done"]
    assert done[0]["content"][0]["text"] == "End"
    assert api.tool_results == ["the memory"]
    assert api.conversation_requests()[0].tool_names == ["mcp__cerebro__recall"]


def test_a_plain_function_is_called_by_its_name() -> None:
    tool = {"type": "function", "name": "exec_command", "parameters": {"type": "object"}}
    with FakeOpenAI(mode="tool", tool_name="exec_command", tool_input={"cmd": "ls"}) as api:
        _, _, text = _post(api, "/responses", _request([], [tool]))
    call = next(e["item"] for e in _events(text) if e["type"] == "response.output_item.done")
    assert call["name"] == "exec_command" and "namespace" not in call


@pytest.mark.parametrize("status", [0, 400])
def test_error_mode_fails_the_response(status: int) -> None:
    with FakeOpenAI(mode="error", error_status=status) as api:
        got, _, text = _post(api, "/responses", _request([]))
    if status:
        assert got == 400 and json.loads(text)["error"]["type"] == "invalid_request_error"
    else:
        assert got == 200 and _events(text)[-1]["type"] == "response.failed"


def test_models_and_unknown_paths() -> None:
    with FakeOpenAI() as api:
        with urllib.request.urlopen(api.base_url + "/models", timeout=10) as response:
            assert json.loads(response.read())["data"] == []
        status, _, _ = _post(api, "/elsewhere", {})
    assert status == 404


def test_an_unknown_mode_or_a_tool_mode_without_a_tool_is_refused() -> None:
    with pytest.raises(ValueError):
        FakeOpenAI(mode="sometimes")
    with pytest.raises(ValueError):
        FakeOpenAI(mode="tool")
