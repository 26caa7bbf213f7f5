"""Help text for `cerebro hook`; the hooks themselves run before Cyclopts (cerebro.integration.claude_code.hooks)."""

from __future__ import annotations

from typing import Annotated

from cyclopts import Parameter


def hook(
    name: Annotated[str, Parameter(help="prime, post-compact or session-end")],
    *,
    event: Annotated[str | None, Parameter(help="prime only: sessionstart or userpromptsubmit")] = None,
) -> None:
    """Claude Code hooks, each run once per session (the session id comes from the hook's stdin JSON).

    prime injects session-start context within config prime_token_budget; post-compact re-arms prime;
    session-end runs gc. A hook always exits 0: it never breaks a session.
    """
    from cerebro.integration.claude_code import hooks

    hooks.run([name, *(["--event", event] if event else [])])
