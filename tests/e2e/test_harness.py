"""The end-to-end harness itself, without the real client: the fake API's wire format, the parsing of the
client's output, the CPU load and the polling helper. (Runs everywhere; no npm needed.)"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from typing import Any

import pytest

from .client import SKILL_LIST_HEADER, ClaudeRun, load_cpu, offered_skills, wait_for
from .fake_api import FakeAnthropic


def _post(api: FakeAnthropic, path: str, body: dict[str, Any]) -> tuple[int, str, str]:
    request = urllib.request.Request(
        api.base_url + path,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers.get("content-type", ""), response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("content-type", ""), exc.read().decode()


def _sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def _request(tools: list[str], messages: list[dict[str, Any]], stream: bool = True) -> dict[str, Any]:
    return {
        "model": "claude-test",
        "max_tokens": 100,
        "stream": stream,
        "system": "sys",
        "tools": [{"name": name, "input_schema": {"type": "object"}} for name in tools],
        "messages": messages,
    }


def test_fake_api_streams_a_complete_message_and_records_the_request() -> None:
    with FakeAnthropic(reply_text="Hi there") as api:
        status, kind, text = _post(
            api, "/v1/messages?beta=true", _request(["Bash"], [{"role": "user", "content": "hello"}])
        )
    assert (status, kind) == (200, "text/event-stream")
    events = _sse(text)
    assert [name for name, _ in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert "".join(data["delta"]["text"] for name, data in events if name == "content_block_delta") == "Hi there"
    assert events[-2][1]["delta"]["stop_reason"] == "end_turn"
    [recorded] = api.requests
    assert (recorded.path, recorded.query, recorded.tool_names) == ("/v1/messages", "beta=true", ["Bash"])
    assert api.conversation_requests() == [recorded] and "hello" in recorded.text


def test_fake_api_answers_non_streaming_calls_token_counts_and_unknown_paths() -> None:
    with FakeAnthropic(reply_text="Title") as api:
        status, _, text = _post(api, "/v1/messages", _request([], [{"role": "user", "content": "x"}], stream=False))
        assert status == 200 and json.loads(text)["content"] == [{"type": "text", "text": "Title"}]
        status, _, text = _post(api, "/v1/messages/count_tokens", {"messages": []})
        assert status == 200 and json.loads(text)["input_tokens"] >= 1
        status, kind, text = _post(api, "/v1/elsewhere", {})
        assert (status, kind) == (404, "application/json") and json.loads(text)["type"] == "error"
        assert api.conversation_requests() == []  # a call that offers no tools is not the conversation


@pytest.mark.parametrize("status", [400, 500])
def test_fake_api_error_mode_answers_an_anthropic_error(status: int) -> None:
    with FakeAnthropic(mode="error", error_status=status) as api:
        got, kind, text = _post(api, "/v1/messages", _request(["Bash"], [{"role": "user", "content": "x"}]))
    assert (got, kind) == (status, "application/json")
    assert json.loads(text)["error"]["type"] == ("invalid_request_error" if status == 400 else "api_error")


def test_fake_api_tool_mode_asks_for_the_tool_then_records_its_result() -> None:
    with FakeAnthropic(
        mode="tool", tool_name="mcp__cerebro__recall", tool_input={"query": "deploy"}, final_text="All done"
    ) as api:
        first = _request(["Bash", "mcp__cerebro__recall"], [{"role": "user", "content": "recall"}])
        _, _, text = _post(api, "/v1/messages", first)
        events = _sse(text)
        start = next(data for name, data in events if name == "content_block_start")["content_block"]
        assert (start["type"], start["name"]) == ("tool_use", "mcp__cerebro__recall")
        partial = next(data for name, data in events if name == "content_block_delta")["delta"]["partial_json"]
        assert json.loads(partial) == {"query": "deploy"}
        assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
        second = _request(
            ["Bash", "mcp__cerebro__recall"],
            [
                *first["messages"],
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": start["id"],
                            "name": start["name"],
                            "input": {"query": "deploy"},
                        }
                    ],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": start["id"], "content": "the memory"}],
                },
            ],
            stream=False,
        )
        _, _, text = _post(api, "/v1/messages", second)
    assert json.loads(text)["content"] == [{"type": "text", "text": "All done"}]
    assert api.tool_results == ["the memory"]


def test_fake_api_rejects_an_unknown_mode() -> None:
    with pytest.raises(ValueError):
        FakeAnthropic(mode="sometimes")


def test_claude_run_parses_the_stream_json_output() -> None:
    stdout = (
        '{"type":"system","subtype":"hook_response","hook_event":"SessionStart","exit_code":0,'
        '"outcome":"success","session_id":"s-1"}\nnot json\n'
        '{"type":"system","subtype":"init","session_id":"s-1"}\n{"type":"result","is_error":false}\n'
    )
    debug = (
        "x [DEBUG] SessionEnd:other [cerebro hook session-end] cancelled\n"
        "x [DEBUG] Hooks: SessionStart:startup [c] finished with status 0 (20ms)\n"
        "x [DEBUG] memory index backfill: ENOENT: no such file or directory\n"
    )
    run = ClaudeRun.build(["claude"], 0, stdout, "SessionEnd hook [c] failed: Hook cancelled\n", debug, 1.0)
    assert run.session_id == "s-1"
    assert [e["hook_event"] for e in run.hook_responses] == ["SessionStart"]
    assert run.result == {"type": "result", "is_error": False}
    assert run.unparsed_lines == ["not json"]
    assert run.hook_trouble() == [debug.splitlines()[0], "SessionEnd hook [c] failed: Hook cancelled"]
    assert run.debug_lines("SessionStart", "status 0") == [debug.splitlines()[1]]


def test_offered_skills_reads_the_skill_list_of_a_request() -> None:
    body = json.dumps(
        {
            "messages": [
                {"content": f"x {SKILL_LIST_HEADER}\n\n- recall: R: r\n- cerebro:remember: S\n\nafter\n- not: a skill"}
            ]
        }
    )
    assert offered_skills(body) == ["recall", "cerebro:remember"]


def test_load_cpu_runs_the_hogs_and_ends_them() -> None:
    with load_cpu(2) as hogs:
        assert len(hogs) == 2 and all(hog.poll() is None for hog in hogs)
        pids = [hog.pid for hog in hogs]
    assert all(hog.poll() is not None for hog in hogs)
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_wait_for_returns_the_value_or_names_what_it_waited_for() -> None:
    calls = iter([0, 0, "ready"])
    assert wait_for(lambda: next(calls), timeout=5, interval=0.01) == "ready"
    with pytest.raises(AssertionError, match=r"waiting for the moon\nstate: dark"):
        wait_for(lambda: False, timeout=0.05, interval=0.01, what="the moon", diagnose=lambda: "state: dark")
