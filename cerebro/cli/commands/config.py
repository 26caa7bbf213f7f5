"""config set|get|list|reset — per-brain settings stored in the brain itself."""

from __future__ import annotations

from typing import Annotated

from cyclopts import App, Parameter

from cerebro.cli.common import open_brain
from cerebro.cli.output import emit

app = App(
    name="config",
    help="""View and change this brain's configuration.

    Examples
      cerebro config list
      cerebro config set recall_threshold 0.35
      cerebro config reset recall_threshold
    """,
)


@app.command(name="set")
def config_set(
    key: Annotated[str, Parameter(help="Config key")], value: Annotated[str, Parameter(help="New value")]
) -> None:
    """Set a key for this brain.

    Examples
      cerebro config set recall_threshold 0.35
      cerebro config set stop_guard_enabled true
    """
    with open_brain() as brain:
        change = brain.config_set(key, value)
    emit(change.to_dict(), f"Set {change.key} = {_shown(change.value)} (was: {_shown(change.previous)})")


def _shown(value: object) -> object:
    """A value as the terminal may show it: text with control characters (a received brain's rerank_command may
    hold an escape sequence) quoted with escapes."""
    if isinstance(value, str) and any(ord(c) < 32 or ord(c) == 127 for c in value):
        from cerebro.errors import quote

        return quote(value)
    return value


@app.command(name="get")
def config_get(key: Annotated[str, Parameter(help="Config key")]) -> None:
    """Show a key's effective value and where it comes from.

    Examples
      cerebro config get recall_threshold
      cerebro config get prime_token_budget --format json
    """
    with open_brain() as brain:
        entry = brain.config_get(key)
    text = (
        f"{entry.key} = {_shown(entry.value)} (default)"
        if entry.source == "default"
        else f"{entry.key} = {_shown(entry.value)} (default: {entry.default})"
    )
    emit({k: v for k, v in entry.to_dict().items() if k != "description"}, text)  # typed values


@app.command(name="list")
def config_list() -> None:
    """Show every key with its value, source and meaning.

    Examples
      cerebro config list
      cerebro config list --format json
    """
    with open_brain() as brain:
        entries = brain.config_list()

    def md() -> str:
        width = max(len(e.key) for e in entries)
        lines = ["# Cerebro Configuration", ""]
        for e in entries:
            mark = "" if e.source == "default" else f"  (set; default {e.default})"
            lines.append(f"{e.key.ljust(width)}  {_shown(e.value)}{mark}")
            lines.append(f"{' ' * width}  {e.description}")
        lines += ["", "Set with: cerebro config set <key> <value>"]
        return "\n".join(lines)

    emit({"settings": [e.to_dict() for e in entries]}, md, items="settings")


@app.command(name="reset")
def config_reset(
    key: Annotated[str | None, Parameter(help="Config key to reset")] = None,
    *,
    all_: Annotated[bool, Parameter(name="--all", help="Reset every key")] = False,
) -> None:
    """Return a key (or, with --all, every key) to its default.

    Examples
      cerebro config reset recall_threshold
      cerebro config reset --all
    """
    with open_brain() as brain:
        keys = brain.config_reset(key, all=all_)
    emit({"reset": keys}, ("Reset " + ", ".join(keys)) if keys else "Nothing to reset (already defaults).")
