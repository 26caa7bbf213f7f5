"""``cerebro mcp --http``: loopback only unless asked, and no request without the bearer token it generates."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.mcp.helpers import cli, run, server_env

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}},
}


def start(home: Path, project: Path, *extra: str, **env_extra: str) -> tuple[subprocess.Popen[str], str]:
    env = {**{k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}, **server_env(home), **env_extra}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.mcp.launch", "mcp", "--project", str(project), "--http", "127.0.0.1:0", *extra],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    for line in proc.stderr:  # the server says where it listens once the socket is bound
        found = re.search(r"streamable HTTP on (http://127\.0\.0\.1:\d+/mcp)", line)
        if found:
            return proc, found.group(1)
    proc.wait(timeout=30)
    raise AssertionError(f"the HTTP server did not start (exit {proc.returncode})")


def stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()


def post(url: str, headers: dict[str, str]) -> tuple[int, str]:
    request = urllib.request.Request(
        url,
        data=json.dumps(INIT).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_requests_need_the_generated_bearer_token(home: Path, fake_brain_path: Path, project: Path) -> None:
    proc, url = start(home, project)
    try:
        token_file = home / "mcp-token"
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        token = token_file.read_text().strip()
        assert len(token) >= 40
        status, body = post(url, {})
        assert status == 401 and "unauthorized" in body
        assert post(url, {"Authorization": "Bearer not-the-token"})[0] == 401
        assert post(url, {"Authorization": token})[0] == 401  # the scheme is required
        assert post(url, {"Authorization": f"Bearer {token}"})[0] == 200
        # a rebound name is refused even with the token (DNS-rebinding protection)
        assert post(url, {"Authorization": f"Bearer {token}", "Host": "attacker.example:80"})[0] == 421

        async def body() -> None:
            from mcp import ClientSession
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
            async with (
                client,
                streamable_http_client(url, http_client=client) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                assert len((await session.list_tools()).tools) == 14
                stored = await session.call_tool("remember", {"content": "Served over streamable HTTP"})
                assert not stored.is_error, stored
                found = await session.call_tool("recall", {"query": "streamable HTTP"})
                assert found.structured_content["results"][0]["id"] == stored.structured_content["id"]
                bad = await session.call_tool("get", {"id": "00000000"})
                assert bad.is_error and bad.content[0].text.startswith("cerebro: error: no node found")

        run(body)
    finally:
        stop(proc)
    proc, url = start(home, project)  # the token is kept across starts
    try:
        assert (home / "mcp-token").read_text().strip() == token
        assert post(url, {"Authorization": f"Bearer {token}"})[0] == 200
    finally:
        stop(proc)


def test_a_rotated_token_takes_effect_in_the_running_server(home: Path, fake_brain_path: Path, project: Path) -> None:
    """A token that leaked stayed valid for good: ``--rotate-token`` replaces it, and a running server reads the file
    again when it changes — the old token is refused at once, the new one let in, without a restart. A token file
    that is gone admits no one (fail closed) until a restart makes a new one."""
    proc, url = start(home, project)
    try:
        token_file = home / "mcp-token"
        old = token_file.read_text().strip()
        assert post(url, {"Authorization": f"Bearer {old}"})[0] == 200
        refused = cli(home, "mcp", "--rotate-token", "--global", check=False, timeout=60)
        assert refused.returncode == 2 and refused.stderr.startswith("cerebro: error: --rotate-token alone")
        assert token_file.read_text().strip() == old  # a refused command rotated nothing
        rotated = cli(home, "mcp", "--rotate-token", timeout=60)
        assert rotated.stdout.strip() == f"a new bearer token is in {token_file}"
        new = token_file.read_text().strip()
        assert new != old and len(new) >= 40 and stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert post(url, {"Authorization": f"Bearer {old}"})[0] == 401
        assert post(url, {"Authorization": f"Bearer {new}"})[0] == 200
        token_file.unlink()
        assert post(url, {"Authorization": f"Bearer {new}"})[0] == 401
    finally:
        stop(proc)


def test_a_connection_that_never_finishes_its_headers_is_closed(
    home: Path, fake_brain_path: Path, project: Path
) -> None:
    """uvicorn waits for ever on a client that sends a header line now and then: a few hundred of them held every
    file descriptor, and no real client could connect (a review). No token is needed to open a connection."""
    import socket
    import time

    proc, url = start(home, project, TEST_MCP_HEADER_SECONDS="0.5")
    try:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        slow = socket.create_connection(("127.0.0.1", port), timeout=30)
        slow.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        deadline = time.monotonic() + 30
        closed = False
        while not closed and time.monotonic() < deadline:  # a header line every 0.2 s: the limit is on the whole
            time.sleep(0.2)
            try:
                slow.sendall(b"X-Slow: 1\r\n")
                slow.settimeout(0.01)
                closed = slow.recv(1) == b""
            except TimeoutError:
                continue
            except OSError:
                closed = True
        assert closed
        token = (home / "mcp-token").read_text().strip()
        assert post(url, {"Authorization": f"Bearer {token}"})[0] == 200  # a prompt client is served
    finally:
        stop(proc)


def test_a_call_holding_half_an_emoji_is_answered_as_over_stdio(
    home: Path, fake_brain_path: Path, project: Path
) -> None:
    """The SDK's parser refused a body whose JSON escapes a lone surrogate ("Parse error", id null): the call was never
    answered over HTTP, while stdio repairs it (a review). It is read with U+FFFD in the broken character's place."""
    proc, url = start(home, project)
    try:
        token = (home / "mcp-token").read_text().strip()
        headers = {
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }

        def send(raw: bytes, session: str | None = None) -> tuple[int, str, str | None]:
            extra = {"Mcp-Session-Id": session} if session else {}
            request = urllib.request.Request(url, data=raw, method="POST", headers={**headers, **extra})
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    return response.status, response.read().decode(), response.headers.get("mcp-session-id")
            except urllib.error.HTTPError as exc:
                return exc.code, exc.read().decode(), None

        status, _, session = send(json.dumps(INIT).encode())
        assert status == 200 and session
        send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}', session)
        call = (
            b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "remember", '
            b'"arguments": {"content": "deploys go out on Tuesdays \\ud83d"}}}'
        )
        status, body, _ = send(call, session)
        assert status == 200 and '"isError":false' in body.replace(" ", ""), body
        stored = re.search(r'"id":"([0-9a-f-]{36})"', body)
        assert stored is not None, body
    finally:
        stop(proc)
    shown = cli(home, "get", stored.group(1), "-p", str(project), "--format", "json")
    assert json.loads(shown.stdout)["content"] == "deploys go out on Tuesdays \ufffd"


def test_each_session_writes_under_its_own_clients_name(home: Path, fake_brain_path: Path, project: Path) -> None:
    """The first client to call a tool named every later session's writes (a review): its name was kept once for
    the whole server."""
    proc, url = start(home, project)
    try:
        token = (home / "mcp-token").read_text().strip()

        async def body() -> None:
            from mcp import ClientSession, types
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            ids = {}
            for name in ("first-client", "second-client", "first-client"):
                client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
                async with (
                    client,
                    streamable_http_client(url, http_client=client) as (read, write),
                    ClientSession(read, write, client_info=types.Implementation(name=name, version="1")) as session,
                ):
                    await session.initialize()
                    stored = await session.call_tool("remember", {"content": f"written by {name} {len(ids)}"})
                    ids[stored.structured_content["id"]] = name
            async with (
                create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as client,
                streamable_http_client(url, http_client=client) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                for node_id, name in ids.items():
                    got = await session.call_tool("get", {"id": node_id})
                    assert got.structured_content["origin_actor"] == name, got.structured_content

        run(body)
    finally:
        stop(proc)


@pytest.mark.parametrize("address", ["0.0.0.0:0", "192.0.2.10:8765", "example.com:8765", "[::]:0"])
def test_a_host_that_is_not_loopback_is_refused(home: Path, fake_brain_path: Path, project: Path, address: str) -> None:
    done = cli(home, "mcp", "-p", str(project), "--http", address, check=False, timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith("cerebro: error: --http") and "not a loopback address" in done.stderr
    assert len(done.stderr.splitlines()) == 1 and not (home / "mcp-token").exists()


def test_a_token_file_others_could_read_or_a_symlink_is_refused(
    home: Path, fake_brain_path: Path, project: Path, tmp_path: Path
) -> None:
    home.mkdir(exist_ok=True)
    token_file = home / "mcp-token"
    token_file.write_text("x" * 43 + "\n")
    token_file.chmod(0o644)
    done = cli(home, "mcp", "-p", str(project), "--http", "127.0.0.1:0", check=False, timeout=60)
    assert done.returncode == 2 and "not a private file of yours" in done.stderr
    token_file.unlink()
    elsewhere = tmp_path / "planted"
    elsewhere.write_text("y" * 43 + "\n")
    elsewhere.chmod(0o600)
    token_file.symlink_to(elsewhere)
    done = cli(home, "mcp", "-p", str(project), "--http", "127.0.0.1:0", check=False, timeout=60)
    assert done.returncode == 2 and "cannot read the MCP token file" in done.stderr
    token_file.unlink()
    for planted in ("fifo", "folder"):  # a FIFO hung the start for ever; a folder said "Is a directory: 3"
        os.mkfifo(token_file, 0o600) if planted == "fifo" else token_file.mkdir(mode=0o700)
        done = cli(home, "mcp", "-p", str(project), "--http", "127.0.0.1:0", check=False, timeout=60)
        assert done.returncode == 2 and "not a private file of yours" in done.stderr, (planted, done.stderr)
        token_file.unlink() if planted == "fifo" else token_file.rmdir()


def test_the_guard_checks_the_token_the_file_holds_when_it_starts(home: Path) -> None:
    """The server read the token, then stamped the file: a rotation in between left it checking the old token against
    the new file's stamp — the leaked token kept working until the next rotation (a review). The guard now reads the
    file itself, stamped first. A token file that is not UTF-8 is refused as unusable, not an unexpected error."""
    from cerebro.errors import InvalidInput
    from cerebro.mcp import http

    path = home / "mcp-token"
    old = http.ensure_token(path)
    http.rotate_token(path)
    new = path.read_text().strip()
    guard = http.BearerAuth(lambda *a: None, path)
    assert guard._current() == new.encode() != old.encode()
    path.write_bytes(b"\xff" * 40)
    path.chmod(0o600)
    with pytest.raises(InvalidInput, match="holds no usable token"):
        http._read_token(path)
