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

        if format not in ("json", "jsonl", "sql"):
            raise InvalidInput(f"unknown export format {format!r}: use json, jsonl, sql or sqlite")
        with self._snapshot() as conn:
            if format == "sql":
                return portability.sql_statements(conn)
            return portability.bundle(conn) if format == "json" else portability.jsonl_lines(conn)

    def _rebuild_keyword_lane_if_asked(self) -> None:
        """After a sql dump was loaded: re-index every active node (the dump carries no FTS rows)."""
        from cerebro import portability
        from cerebro.store import reads

        with self._snapshot() as conn:
            if reads.meta(conn, portability.NEEDS_FTS_REBUILD) is None:
                return

        def write(session: Any) -> None:
            from cerebro.brain.validate import _text

            session.execute(_text("DELETE FROM nodes_fts"))
            session.execute(
                _text(
                    "INSERT INTO nodes_fts (node_id, content, subtype) "
                    "SELECT id, content, COALESCE(subtype, '') FROM nodes WHERE status = 'active'"
                )
            )
            session.execute(_text("DELETE FROM schema_meta WHERE key = :k"), {"k": portability.NEEDS_FTS_REBUILD})

        self._write(write)

    def export_sqlite(self, target: str | Path) -> Path:
        """A consistent copy of the brain file at ``target`` (must not exist), mode 0600."""
        from cerebro.db import backup

        return backup.copy(self.path, Path(target))

    def backup(self, target: str | Path | None = None) -> Path:
        """A timestamped copy under ``CEREBRO_HOME/backups`` (or at ``target``)."""
        from cerebro.db import backup

        return backup.copy(self.path, Path(target)) if target else backup.backup(self.path)


from cerebro.portability import _NODE_COLUMNS as _NODE_FIELDS  # noqa: E402 - one list of node columns
_ORIGIN = ("origin_actor", "origin_channel", "origin_session", "origin_host")


class ImportMixin:
    def import_file(
        self, path: str | Path, *, on_conflict: str = "skip", progress: Any = None
    ) -> dict[str, Any]:
        """Import a json bundle (ours or upstream's) or a jsonl export, validated whole first, written in one
        transaction. ``skip`` keeps existing nodes and edges; ``replace`` updates them in place (never
        delete-and-insert, which would cascade away their edges). Returns the counts."""
        from cerebro import importing

        if on_conflict not in ("skip", "replace"):
            raise InvalidInput("--on-conflict must be skip or replace")
        parsed = importing.read(Path(path))
        with self._snapshot() as conn:
            existing = {r[0] for r in conn.execute("SELECT id FROM nodes").fetchall()}
        importing.check_references(parsed, existing)
        for node in parsed.nodes:
            if all(node[k] is None for k in _ORIGIN):  # origin-less nodes are stamped by the import
                node["origin_actor"] = node["origin_channel"] = "import"
        to_write = [n for n in parsed.nodes if on_conflict == "replace" or n["id"] not in existing]
        dims = self._embedding_settings()[2]
        vectors: dict[str, Any] = {}
        failed = 0
        if dims > 0:
            active = [n for n in to_write if n["status"] == "active"]
            for start in range(0, len(active), 64):
                batch = active[start : start + 64]
                try:
                    for node, vector in zip(batch, self._embed([n["content"] for n in batch]), strict=True):
                        vectors[node["id"]] = vector
                except Exception:  # noqa: BLE001 - imported memories stay pending instead
                    failed += len(batch)
                if progress:
                    progress(min(start + len(batch), len(active)), len(active))
        _, model, _ = self._embedding_settings()

        def write(session: Any) -> dict[str, Any]:
            from cerebro.brain.validate import _text
            from cerebro.store import fts, meta, vec

            for key, value in parsed.config.items():
                meta.put(session, key, value)
            columns = ", ".join(_NODE_FIELDS)
            marks = ", ".join(f":{f}" for f in _NODE_FIELDS)
            update = ", ".join(f"{f} = excluded.{f}" for f in _NODE_FIELDS if f != "id")
            conflict = f"DO UPDATE SET {update}" if on_conflict == "replace" else "DO NOTHING"
            has_fts = fts.available(session)
            if dims > 0:
                vec.ensure_table(session, dims)
            nodes_done = 0
            for node in parsed.nodes:
                row = {**node, "embedding_model": model if node["id"] in vectors else ""}
                changed = session.execute(
                    _text(f"INSERT INTO nodes ({columns}) VALUES ({marks}) ON CONFLICT(id) {conflict}"), row
                ).rowcount
                if not changed:
                    continue
                nodes_done += 1
                if has_fts:
                    fts.unindex(session, node["id"])
                    if node["status"] == "active":
                        fts.index(session, node["id"], node["content"], node["subtype"])
                if dims > 0:
                    fresh = node["id"] not in existing
                    if node["id"] in vectors:
                        vec.upsert(session, node["id"], vectors[node["id"]], fresh=fresh)
                    elif not fresh:
                        vec.delete(session, node["id"])
            edge_conflict = (
                "DO UPDATE SET weight = excluded.weight, metadata = excluded.metadata, "
                "valid_at = excluded.valid_at, invalid_at = excluded.invalid_at"
                if on_conflict == "replace"
                else "DO NOTHING"
            )
            edges_done = 0
            for edge in parsed.edges:
                edges_done += session.execute(
                    _text(
                        "INSERT INTO edges (source_id, target_id, relation, weight, metadata, created_at, valid_at, "
                        "invalid_at) VALUES (:source_id, :target_id, :relation, :weight, :metadata, :created_at, "
                        f":valid_at, :invalid_at) ON CONFLICT(source_id, target_id, relation) {edge_conflict}"
                    ),
                    edge,
                ).rowcount
            archive_conflict = "DO NOTHING" if on_conflict == "skip" else (
                "DO UPDATE SET " + ", ".join(f"{c} = excluded.{c}" for c in importing.ARCHIVE_FIELDS if c != "id"))
            for row in parsed.archive:
                session.execute(
                    _text(
                        f"INSERT INTO nodes_archive ({', '.join(importing.ARCHIVE_FIELDS)}) VALUES "
                        f"({', '.join(':' + c for c in importing.ARCHIVE_FIELDS)}) ON CONFLICT(id) {archive_conflict}"
                    ),
                    row,
                )
            if failed:
                meta.put(session, "has_pending_embeddings", "true")
            return {
                "nodes_imported": nodes_done,
                "nodes_skipped": len(parsed.nodes) - nodes_done,
                "edges_imported": edges_done,
                "edges_skipped": len(parsed.edges) - edges_done,
                "config_imported": sorted(parsed.config),
                "config_refused": sorted(parsed.refused_config),
                "pending_embeddings": failed,
            }

        return self._write(write)
