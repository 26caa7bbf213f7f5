"""The Brain's portability side: export and backup (import, realpath migration and re-embedding follow)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cerebro.errors import InvalidInput

FORMATS = ("json", "jsonl", "sqlite")


class ExportMixin:
    def export(self, format: str = "json") -> Any:
        """``json`` → the bundle (dict); ``jsonl`` → list of lines. Read in one snapshot: consistent while
        others write. For ``sqlite`` use :meth:`export_sqlite`."""
        from cerebro import portability

        if format not in ("json", "jsonl"):
            raise InvalidInput(f"unknown export format {format!r}: use json, jsonl or sqlite")
        with self._snapshot() as conn:
            return portability.bundle(conn) if format == "json" else portability.jsonl_lines(conn)

    def export_sqlite(self, target: str | Path) -> Path:
        """A consistent copy of the brain file at ``target`` (must not exist), mode 0600."""
        from cerebro import portability

        return portability.copy_sqlite(self.path, Path(target))

    def backup(self, target: str | Path | None = None) -> Path:
        """A timestamped copy under ``CEREBRO_HOME/backups`` (or at ``target``)."""
        from cerebro import portability

        return portability.copy_sqlite(self.path, Path(target) if target else portability.backup_path(self.path))
