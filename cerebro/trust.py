"""Which reranker commands the user of this machine approved, for which brain (ADR 0026).

A brain's configuration travels with it — in a SQL dump loaded with ``sqlite3``, a ``sqlite`` export, a backup,
a copy a teammate sends — and ``rerank_command`` is a program recall runs. So a command stored in a brain runs
only when this machine's user approved that exact command for that brain file: ``cerebro config set
rerank_command …`` (or ``Brain.config_set``) approves it, recording a digest in ``CEREBRO_HOME/
trusted-commands.json`` (0600). A brain that arrives with a command — or whose command was changed behind
cerebro's back — keeps it, but recall skips the reranker with a notice until the user sets it here.
A command from ``CEREBRO_RERANK_COMMAND`` needs no approval: the environment is the user's own.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from cerebro import paths

FILE_NAME = "trusted-commands.json"


def _file() -> Path:
    return paths.home() / FILE_NAME


def _brain_key(brain: str | os.PathLike[str]) -> str:
    if isinstance(brain, str) and "://" in brain:  # a team brain's location (ADR 0030): no file to resolve
        return brain
    return os.path.realpath(brain)


def _digest(command: str) -> str:
    return hashlib.sha256(command.strip().encode("utf-8")).hexdigest()


def _read() -> dict[str, str]:
    try:
        data = json.loads(_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # none yet, or unreadable: nothing is approved
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}


def approve(brain: str | os.PathLike[str], command: str) -> None:
    """Record that the user approved ``command`` as the reranker of ``brain`` (one command a brain)."""
    approved = _read()
    approved[_brain_key(brain)] = _digest(command)
    with paths.written_in_one_step(_file(), overwrite=True) as partial:
        partial.write_text(json.dumps(approved, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def approved(brain: str | os.PathLike[str], command: str) -> bool:
    """Whether this machine's user approved exactly ``command`` for ``brain``."""
    return _read().get(_brain_key(brain)) == _digest(command)
