"""JSON Schemas (draft 2020-12) of every command's ``--format json`` output, one file per command:
``<command>.json``, or ``<group>-<subcommand>.json`` (``config-list.json``); ``common.json`` holds the shared
definitions (a memory, an edge, a timestamp) and ``error.json`` the error object printed on stderr.

They are the contract scripts rely on: the suite validates every JSON output it sees against them
(``tests/helpers.check_json_contract``), and a change of shape is a change of schema, listed in the CHANGELOG.
Schemas carrying ``x-jsonl-items`` name the list that ``--format jsonl`` prints one item per line.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

FOLDER = Path(__file__).parent


def names() -> frozenset[str]:
    """Every schema's name (the file names without ``.json``)."""
    return frozenset(path.stem for path in FOLDER.glob("*.json"))


def name_for(command: Sequence[str]) -> str | None:
    """The schema's name for a command line (global options already lifted): ``["config", "list"]`` →
    ``"config-list"``, ``["recall", "q"]`` → ``"recall"``; None when the command has no schema."""
    if not command:
        return None
    known = names()
    if len(command) > 1 and f"{command[0]}-{command[1]}" in known:
        return f"{command[0]}-{command[1]}"
    return command[0] if command[0] in known else None
