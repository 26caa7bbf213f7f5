"""Helpers for the MCP server tests: the official SDK client over stdio, against ``cerebro mcp`` run in a
subprocess (through :mod:`tests.mcp.launch`, so the ``fake`` embedder works there).

This folder has no ``__init__.py`` on purpose: as a package it would be importable as ``mcp`` (pytest puts
``tests/`` on ``sys.path``) and shadow the SDK."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
BUSY_TIMEOUT_MS = "200"  # a held lock turns into BrainBusy in a few seconds, not forty


def server_env(home: Path, **extra: str) -> dict[str, str]:
    """The server's environment on top of the SDK's safe default one (HOME, PATH, …)."""
    return {"CEREBRO_HOME": str(home), "PYTHONPATH": str(REPO), "CEREBRO_BUSY_TIMEOUT_MS": BUSY_TIMEOUT_MS, **extra}


def cli(home: Path, *args: str, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """The cerebro CLI in another process (with the fake embedders), as a hook or a user would run it."""
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    env.update(server_env(home))
    done = subprocess.run(
        [sys.executable, "-m", "tests.mcp.launch", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if check:
        assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    return done


class Client:
    """The official ``ClientSession`` with assertions for cerebro's answers."""

    def __init__(self, session: Any, errlog: Path) -> None:
        self.session = session
        self.errlog = errlog

    async def call(self, name: str, **arguments: Any) -> Any:
        return await self.session.call_tool(name, arguments)

    async def ok(self, name: str, **arguments: Any) -> dict[str, Any]:
        """Structured content of a successful call (its text is under the key ``_text``)."""
        result = await self.call(name, **arguments)
        assert not result.is_error, (name, result.content, self.errlog.read_text())
        assert isinstance(result.structured_content, dict)
        assert len(result.content) == 1 and result.content[0].type == "text"
        return {**result.structured_content, "_text": result.content[0].text}

    async def error(self, name: str, **arguments: Any) -> str:
        """The one-line message of a failed call: ``cerebro: error: …``, never an internal error."""
        result = await self.call(name, **arguments)
        assert result.is_error, (name, result)
        text = result.content[0].text
        assert text.startswith("cerebro: error: "), text
        assert "\n" not in text, text
        assert "internal error" not in text, text
        return text


@asynccontextmanager
async def serve(
    home: Path,
    project: Path | None = None,
    *args: str,
    roots: list[str] | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> AsyncIterator[Client]:
    """``cerebro mcp [--project DIR] ARGS…`` over stdio, initialised; ``roots``: file:// URIs the client
    offers when asked."""
    import mcp_types as types
    from mcp import ClientSession, StdioServerParameters, stdio_client

    argv = ["-m", "tests.mcp.launch", "mcp", *(["--project", str(project)] if project else []), *args]
    params = StdioServerParameters(
        command=sys.executable, args=argv, env=server_env(home, **(env or {})), cwd=str(cwd) if cwd else None
    )
    callback = None
    if roots is not None:

        async def callback(context: Any) -> types.ListRootsResult:
            return types.ListRootsResult(roots=[types.Root(uri=uri) for uri in roots])

    errlog = home.parent / f"mcp-server-{os.urandom(4).hex()}.log"
    with open(errlog, "w") as err:
        async with (
            stdio_client(params, errlog=err) as (read, write),
            ClientSession(read, write, list_roots_callback=callback) as session,
        ):
            await session.initialize()
            yield Client(session, errlog)


def run(work: Any) -> Any:
    """Run an async test body (``anyio.run``)."""
    import anyio

    return anyio.run(work)


def frame_parts(text: str) -> tuple[str, list[str]]:
    """(nonce, the memories' bodies) of a framed answer — the delimiters exactly as the header announces."""
    import re

    header = re.search(r"between <memory-([0-9a-f]+) …> and </memory-\1>", text)
    assert header, text
    nonce = header.group(1)
    bodies = re.findall(rf"<memory-{nonce}[^>\n]*>\n(.*?)\n</memory-{nonce}>", text, flags=re.DOTALL)
    return nonce, bodies


def dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False)
