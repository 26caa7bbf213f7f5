"""``cerebro doctor``: every problem with a project's Claude Code + cerebro setup, each with the command that
fixes it. Plain functions returning :class:`Check` results; nothing here prints.

Doctor writes nothing — not to the brain, not to ``CEREBRO_HOME``, not to the project:

- databases (the brain, the metrics file) are copied as bytes into a temporary folder and inspected there:
  SQLite never opens the originals, so no lock, no ``-wal``/``-shm`` file, no journal switch and no
  ``Brain.open`` (which would tighten file modes or upgrade the schema) touches them;
- what must run cerebro for real — the hook commands whose start-up is timed, the embedding probe — runs in
  subprocesses against a scratch ``CEREBRO_HOME`` in a temporary folder (holding the copy of the brain), so
  their session claims, ``last_surfaced`` stamps and model caches land there and are deleted with it.

The checks, in order: ``cli-on-path``, ``hooks``, ``hook-latency``, ``brain``, ``embedder``, ``file-modes``,
``metrics``, ``end-of-session``. Each is ``ok``, ``warn`` or ``fail`` (``skip`` when not run); a warning or
failure carries the exact command that fixes it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from cerebro.doctor.base import (  # noqa: F401 - the package's public names
    CHECK_NAMES,
    FAIL,
    OK,
    SKIP,
    WARN,
    Check,
    _guard,
    default_budgets,
    passed,
)
from cerebro.doctor.brain import check_brain
from cerebro.doctor.embedder import check_embedder
from cerebro.doctor.files import check_end_of_session, check_file_modes, check_metrics
from cerebro.doctor.latency import check_hook_latency
from cerebro.doctor.setup import check_cli_on_path, check_hooks


def run_checks(
    project: str | os.PathLike[str],
    *,
    latency: bool = True,
    budgets: dict[str, tuple[float, float]] | None = None,
) -> list[Check]:
    """Every check, in order. ``latency=False`` reports ``hook-latency`` as skipped (it runs cerebro six
    times)."""
    directory = Path(project).absolute()
    checks: list[tuple[str, Callable[[], Check]]] = [
        ("cli-on-path", check_cli_on_path),
        ("hooks", lambda: check_hooks(directory)),
        (
            "hook-latency",
            (lambda: check_hook_latency(directory, budgets=budgets))
            if latency
            else (lambda: Check("hook-latency", SKIP, "not measured (--no-latency)")),
        ),
        ("brain", lambda: check_brain(directory)),
        ("embedder", lambda: check_embedder(directory)),
        ("file-modes", lambda: check_file_modes(directory)),
        ("metrics", lambda: check_metrics(directory)),
        ("end-of-session", check_end_of_session),
    ]
    return [_guard(name, work) for name, work in checks]
