"""``cerebro mcp``: serve this project's brain to any MCP client (stdio, or streamable HTTP) — ADR 0020."""

from __future__ import annotations

from typing import Annotated

from cyclopts import Parameter

from cerebro.cli_state import state


def mcp(
    *,
    global_: Annotated[
        bool,
        Parameter(name="--global", help="Also serve the global brain: recall searches it too unless told not to"),
    ] = False,
    http: Annotated[
        str | None,
        Parameter(
            help="Serve streamable HTTP on HOST:PORT (e.g. 127.0.0.1:8765) instead of stdio; loopback only, and "
            "every request needs the bearer token kept in CEREBRO_HOME/mcp-token"
        ),
    ] = None,
    allow_remote: Annotated[
        bool, Parameter(help="With --http: allow a host that is not loopback (the token is still required)")
    ] = False,
    rotate_token: Annotated[
        bool,
        Parameter(
            help="Replace the HTTP bearer token with a new one (running servers take it at once; clients holding "
            "the old one are refused); alone, rotate and exit"
        ),
    ] = False,
) -> None:
    """Serve this project's memory over the Model Context Protocol (stdio by default).

    The project is --project, else $CLAUDE_PROJECT_DIR, else the client's first root, else the current directory; it needs a brain (cerebro init). Tools: remember, recall, get, list, link, supersede, consolidate, forget, outcome, stats, inbox_add, inbox_list, inbox_approve, inbox_discard; the session prime is the prompt "prime" and the resource cerebro://prime. Writes made meanwhile by hooks, the CLI or other servers are seen by the next call.

    Examples
      cerebro mcp
      cerebro mcp --global -p ~/code/app
      cerebro mcp --http 127.0.0.1:8765
      cerebro mcp --rotate-token
    """
    from cerebro import process
    from cerebro.mcp.server import run

    if rotate_token:
        from cerebro.mcp import http as transport

        if http:
            transport.parse_address(http, allow_remote=allow_remote)  # a bad address changes nothing
        elif allow_remote or global_:
            from cerebro.errors import InvalidInput

            raise InvalidInput("--rotate-token alone rotates and exits: --global and --allow-remote need --http")
        rotated = transport.rotate_token()
        if not http:
            print(f"a new bearer token is in {rotated}", flush=True)
            return

    process.ONE_SHOT = False  # a server answers many calls: its connections go without mutexes (ADR 0043)
    run(project=state.project, include_global=global_, http=http, allow_remote=allow_remote)
