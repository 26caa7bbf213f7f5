"""export, backup."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

from cyclopts import Parameter

from cerebro.cli.context import open_brain
from cerebro.cli.output import emit
from cerebro.errors import InvalidInput


def export(
    *,
    format: Annotated[str, Parameter(name=["--format", "-f"], help="json (upstream's bundle), jsonl (sorted, git-friendly), sql or sqlite")] = "json",
    output: Annotated[Path | None, Parameter(name=["--output", "-o"], help="Write here (required for sqlite; default stdout)")] = None,
) -> None:
    """Export the brain. On this command --format names the dump format; the command prints no report."""
    if format not in ("json", "jsonl", "sql", "sqlite"):
        raise InvalidInput(f"unknown export format {format!r}: use json, jsonl, sql or sqlite")
    if format == "sqlite" and output is None:
        raise InvalidInput("export --format sqlite needs -o FILE")
    if output is not None and output.exists():
        raise InvalidInput(f"{output} already exists: choose another path (nothing was overwritten)")
    with open_brain() as brain:
        if format == "sqlite":
            brain.export_sqlite(output)  # type: ignore[arg-type]
            return
        data = brain.export(format)
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n" if format == "json" else "".join(f"{line}\n" for line in data)  # jsonl, sql
    if output is None:
        sys.stdout.write(text)
        return
    import os

    fd = os.open(output, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


def backup(
    *,
    output: Annotated[Path | None, Parameter(name=["--output", "-o"], help="Write the copy here instead of CEREBRO_HOME/backups")] = None,
) -> None:
    """A consistent copy of the brain (safe while agents write)."""
    with open_brain() as brain:
        target = brain.backup(output)
    emit({"backup": str(target)}, f"Backup written to {target}")


def import_(
    file: Annotated[Path, Parameter(help="A json bundle (cerebro's or upstream's) or a jsonl export")],
    *,
    on_conflict: Annotated[str, Parameter(help="skip (keep what the brain has) or replace (update in place)")] = "skip",
) -> None:
    """Import memories; the whole file is checked first and written in one transaction."""
    from cerebro.cli.progress import reporter
    from cerebro.logs import warn

    update, finish = reporter("embedding")
    with open_brain() as brain:
        report = brain.import_file(file, on_conflict=on_conflict, progress=update)
    finish()
    if report["config_refused"]:
        warn(f"not imported (set them yourself if you trust the file): {', '.join(report['config_refused'])}")
    emit(
        report,
        f"Imported: {report['nodes_imported']} nodes, {report['edges_imported']} edges "
        f"(skipped {report['nodes_skipped']} nodes, {report['edges_skipped']} edges)",
    )
