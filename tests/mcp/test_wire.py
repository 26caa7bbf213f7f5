"""A request whose JSON escapes a lone UTF-16 surrogate (half an emoji, as a JavaScript client leaves one when it cuts
a string at a length): the SDK's parser refused the line and the server answered nothing, so the client's call
waited for ever. The server reads it with U+FFFD in the broken character's place."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path

from cerebro.mcp.wire import lenient_line
from tests.mcp.helpers import server_env


def test_a_lone_surrogate_becomes_a_replacement_character_and_nothing_else_changes() -> None:
    lone = '{"id": 2, "params": {"arguments": {"query": "abc \\ud83d def", "\\udc00k": ["\\ud800"]}}}\n'
    expected = {"id": 2, "params": {"arguments": {"query": "abc \ufffd def", "\ufffdk": ["\ufffd"]}}}
    assert json.loads(lenient_line(lone)) == expected
    for kept in (
        '{"query": "a whole pair: \\ud83d\\ude00"}\n',  # one character, which the SDK reads
        '{"query": "a backslash, then u: \\\\ud800"}\n',  # not an escape
        '{"query": "no escape at all"}\n',
    ):
        assert json.loads(lenient_line(kept)) == json.loads(kept)
    assert lenient_line('{"query": "\\ud800" this is not JSON\n') == '{"query": "\\ud800" this is not JSON\n'
    assert lenient_line("") == ""  # the end of the stream


def _exchange(process: subprocess.Popen, message: str) -> dict:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(message.encode() + b"\n")
    process.stdin.flush()
    ready, _, _ = select.select([process.stdout], [], [], 60)
    assert ready, "no answer"
    return json.loads(process.stdout.readline())


def test_the_server_answers_a_call_that_holds_half_an_emoji(home: Path, project: Path, tmp_path: Path) -> None:

    env = {**{k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}, **server_env(home)}
    subprocess.run(
        [sys.executable, "-m", "tests.mcp.launch", "init", "-p", str(project), "--embed-provider", "fake"],
        env=env,
        check=True,
        capture_output=True,
    )
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.mcp.launch", "mcp", "--project", str(project)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "js", "version": "1"}}
        hi = _exchange(server, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}))
        assert "result" in hi, hi
        server.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        arguments = '{"content": "deploys go out on Tuesdays \\ud83d", "type": "concept"}'
        call = '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "remember", "arguments": %s}}'
        answer = _exchange(server, call % arguments)
        assert answer["id"] == 2 and not answer.get("result", {"isError": True})["isError"], answer
        recalled = _exchange(
            server,
            call.replace('"remember"', '"recall"').replace('"id": 2', '"id": 3') % '{"query": "deploys on Tuesdays"}',
        )
        assert "deploys go out on Tuesdays \ufffd" in json.dumps(recalled["result"], ensure_ascii=False)
    finally:
        server.kill()
        server.wait()
