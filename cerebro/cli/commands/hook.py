"""Help text for `cerebro hook`; the hooks themselves run before Cyclopts (cerebro.integration.claude_code.hooks)."""

from __future__ import annotations

from typing import Annotated

from cyclopts import Parameter


def hook(
    name: Annotated[
        str, Parameter(help="prime, post-compact, session-end, catch-up, or has-brain (the plugin's 0/1 gate)")
    ],
    *,
    event: Annotated[str | None, Parameter(help="prime only: sessionstart or userpromptsubmit")] = None,
) -> None:
    """Claude Code hooks, each run once per session (the session id comes from the hook's stdin JSON).

    prime injects session-start context within config prime_token_budget; post-compact re-arms prime;
    session-end records the session's end-of-session work (gc, then metrics ingest) and starts a detached
    worker that does it, so the hook returns at once; catch-up runs any such work still pending, in the
    foreground (logs: CEREBRO_HOME/logs/). A hook always exits 0: it never breaks a session.

    Examples
      echo '{"session_id": "s1"}' | cerebro hook prime --event sessionstart
      echo '{"session_id": "s1"}' | cerebro hook session-end
      cerebro hook catch-up
    """
    from cerebro.integration.claude_code import hooks

    hooks.run([name, *(["--event", event] if event else [])])


def stop_guard() -> None:
    r"""Claude Code Stop hook that blocks premature stops — off unless `config set stop_guard_enabled true`.

    Wire it yourself in .claude/settings.json (init and the plugin never do):
    {"hooks": {"Stop": [{"matcher": "", "hooks": [{"type": "command",
     "command": "cerebro stop-guard -p \"$CLAUDE_PROJECT_DIR\""}]}]}}
    Reads the Stop hook's JSON on stdin; prints {} (allow) or {"decision":"block","reason":…}; always exits 0.
    A message asking you to confirm something risky (push, deploy, delete…) always passes.

    Examples
      echo '{"last_assistant_message": "Shall I go on?"}' | cerebro stop-guard
      cerebro stop-guard -p "$CLAUDE_PROJECT_DIR" < stop-event.json
    """
    from cerebro.integration.claude_code import stop_guard as guard

    guard.run([])
