"""Read a project's Claude Code transcripts into its metrics database (spec §2.5).

Each changed ``*.jsonl`` file is re-parsed from byte 0 (so turn numbers stay stable and a grown file's
last turn is updated) and written in one transaction. A file whose stored offset is at least its size is
skipped unless ``force``. Called by ``cerebro ingest`` and by the session-end hook.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from cerebro import paths
from cerebro.metrics.parser import parse_file
from cerebro.metrics.records import IngestReport
from cerebro.metrics.store import MetricsStore, metrics_path

Progress = Callable[[int, int], None]  # (files done, files in total)

_NOT_ALPHANUMERIC = re.compile(r"[^A-Za-z0-9]")


def claude_code_slug(path: str) -> str:
    """Claude Code's own rule: every non-alphanumeric character becomes ``-``."""
    return _NOT_ALPHANUMERIC.sub("-", path)


def upstream_slug(path: str) -> str:
    """Upstream cerebro's narrower rule: only the separators become ``-``."""
    return "-" + path.lstrip(os.sep).replace(os.sep, "-")


def session_dir_candidates(project_dir: str | os.PathLike[str]) -> list[Path]:
    """Where the project's transcripts may be, most likely first: Claude Code's rule then upstream's, on
    the absolute path, then on the symlink-resolved one (Claude Code records the directory it was
    started in, which the shell may have reached through a symlink or not)."""
    absolute = os.path.abspath(os.fspath(project_dir))
    resolved = os.path.realpath(absolute)
    base = paths.claude_projects_dir()
    found: list[Path] = []
    for path in dict.fromkeys((absolute, resolved)):
        for slug in (claude_code_slug(path), upstream_slug(path)):
            if base / slug not in found:
                found.append(base / slug)
    return found


def find_session_dir(project_dir: str | os.PathLike[str]) -> Path:
    """The first candidate that exists; else Claude Code's rule (named in "no session files" messages)."""
    candidates = session_dir_candidates(project_dir)
    return next((c for c in candidates if c.is_dir()), candidates[0])


def transcript_files(session_dir: Path) -> list[Path]:
    """``*.jsonl`` directly in the folder (subagent transcripts in sub-folders are not read), lexical order."""
    if not session_dir.is_dir():
        return []
    return sorted(p for p in session_dir.glob("*.jsonl") if p.is_file())


def ingest_project(
    project_dir: str | os.PathLike[str],
    *,
    session_dir: str | os.PathLike[str] | None = None,
    force: bool = False,
    progress: Progress | None = None,
) -> IngestReport:
    """Ingest the project's transcripts. Creates the metrics database only when there is a file to read.

    Unreadable files become warnings in the report; database errors propagate (nothing half-written: each
    file is one transaction).
    """
    directory = Path(session_dir) if session_dir is not None else find_session_dir(project_dir)
    target = metrics_path(project_dir)
    report = IngestReport(metrics_path=str(target))
    files = transcript_files(directory)
    if not files:
        return report
    with MetricsStore.open(target, create=True) as store:
        for done, file in enumerate(files, start=1):
            _ingest_file(store, file, force=force, report=report)
            if progress is not None:
                progress(done, len(files))
    return report


def _ingest_file(store: MetricsStore, file: Path, *, force: bool, report: IngestReport) -> None:
    # The file itself, not the way to it: found through a symlinked home or session folder (or `--session-dir`
    # spelled another way) it was read again whole and remembered twice, a transcript for each spelling.
    key = os.path.realpath(file)
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:  # its name (bytes that are not UTF-8) cannot be stored: the other files still are
        report.warnings.append(f"skipped {os.fsencode(file.name)!r}: its name is not UTF-8 text")
        return
    try:
        size = file.stat().st_size
    except OSError as exc:
        report.warnings.append(f"cannot read {file.name}: {exc.strerror or exc}")
        return
    if not force and store.ingest_offset(key) >= size:
        return  # unchanged since the last ingest (a shrunk file waits for --force, as upstream)
    try:
        parsed = parse_file(file)
    except OSError as exc:
        report.warnings.append(f"failed to parse {file.name}: {exc.strerror or exc}")
        return
    report.malformed_lines += parsed.malformed_lines
    if not parsed.turns:
        # Nothing to store, but remember the size: the file is read again once it grows, not at every
        # ingest (upstream re-read it each time, re-counting its bad lines).
        store.set_ingest_offset(key, parsed.size, malformed_lines=parsed.malformed_lines)
        return
    turns, calls = store.save_parse(
        parsed.turns, parsed.tool_calls, file=key, size=parsed.size, malformed_lines=parsed.malformed_lines
    )
    report.files_processed += 1
    report.turns_ingested += turns  # what was stored: a session another transcript holds more of is left to it
    report.tool_calls += calls
