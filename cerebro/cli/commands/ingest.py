"""cerebro ingest: Claude Code transcripts → the project's metrics database."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from cyclopts import Parameter

from cerebro import paths
from cerebro.cli.output import emit
from cerebro.cli_state import state
from cerebro.errors import InvalidInput

PROGRESS_FROM_FILES = 5  # fewer files finish before a progress line would be worth drawing


def ingest(
    *,
    force: Annotated[
        bool, Parameter(help="Re-read every transcript, even those unchanged since the last ingest")
    ] = False,
    session_dir: Annotated[
        Path | None,
        Parameter(name="--session-dir", help="Read transcripts from DIR (default ~/.claude/projects/<slug>/)"),
    ] = None,
) -> None:
    """Read this project's Claude Code transcripts into session metrics. Idempotent; bad lines are counted.

    Examples
      cerebro ingest
      cerebro ingest --force
      cerebro ingest --session-dir ~/.claude/projects/-home-me-app
    """
    from cerebro.cli.progress import reporter
    from cerebro.logs import warn
    from cerebro.metrics import ingest as metrics_ingest
    from cerebro.metrics.records import IngestReport
    from cerebro.metrics.store import metrics_path

    project_dir = paths.resolve_project_dir(state.project)
    if session_dir is not None and not session_dir.is_dir():
        raise InvalidInput(f"--session-dir {session_dir} is not a directory")
    directory = session_dir if session_dir is not None else metrics_ingest.find_session_dir(project_dir)
    files = metrics_ingest.transcript_files(directory)
    if files:
        update, finish = reporter("ingesting") if len(files) >= PROGRESS_FROM_FILES else (None, lambda: None)
        try:
            report = metrics_ingest.ingest_project(project_dir, session_dir=directory, force=force, progress=update)
        finally:
            finish()
    else:  # nothing to read: nothing written either (the metrics database is not created)
        report = IngestReport(metrics_path=str(metrics_path(project_dir)))
    for warning in report.warnings:
        warn(warning)

    data = {k: v for k, v in report.to_dict().items() if k != "warnings"} | {"session_dir": str(directory)}

    def md() -> str:
        if not files:
            return f"No session files found in {directory}"
        text = (
            f"Ingested {report.turns_ingested} turns and {report.tool_calls} tool calls "
            f"from {report.files_processed} files"
        )
        if report.malformed_lines:
            text += f" ({report.malformed_lines} malformed lines skipped)"
        return text

    if state.format != "md" or not state.quiet:
        emit(data, md)
