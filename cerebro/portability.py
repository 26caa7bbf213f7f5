"""Export formats and backups (issue 5).

- ``json``: the bundle upstream Go cerebro reads and writes (``version``, ``exported_at``, ``meta`` with
  ``config.*``, ``nodes`` in every status, ``edges``); no archive, vectors or inbox, as upstream.
- ``jsonl``: one record per line (meta — configuration only —, nodes, edges, archive), sorted and byte-stable across
  runs — no export time, no edge row ids, no brain's own records — so two people's exports of a shared brain merge
  as text in git.
- ``sqlite``: a consistent copy taken with SQLite's backup API while other processes write.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from cerebro import clock, config, metadata

if TYPE_CHECKING:
    from collections.abc import Sequence

    from cerebro.db.types import Connection
    from cerebro.store.interface import Store

EXPORT_VERSION = "1"  # upstream's ExportVersion, unchanged through schema v7
NODE_COLUMNS = (
    "id",
    "type",
    "subtype",
    "content",
    "metadata",
    "importance",
    "decay_rate",
    "access_count",
    "times_reinforced",
    "status",
    "embedding_model",
    "created_at",
    "last_accessed",
    "last_reinforced",
    "updated_at",
    "last_surfaced",
    "provenance_root",
    "origin_actor",
    "origin_channel",
    "origin_session",
    "origin_host",
)
EDGE_COLUMNS = (
    "id",
    "source_id",
    "target_id",
    "relation",
    "weight",
    "metadata",
    "created_at",
    "valid_at",
    "invalid_at",
)
ARCHIVE_COLUMNS = (
    "id",
    "type",
    "subtype",
    "content",
    "metadata",
    "importance",
    "status",
    "archive_reason",
    "original_created_at",
    "archived_at",
)
# Inbox candidates travel in no export (they are quarantined); a brain merged into another keeps them (realpath).
INBOX_COLUMNS = (
    "id",
    "type",
    "subtype",
    "content",
    "metadata",
    "importance",
    "created_at",
    "origin_actor",
    "origin_channel",
    "origin_session",
    "origin_host",
)
_TIME_FIELDS = {
    "created_at",
    "last_accessed",
    "last_reinforced",
    "updated_at",
    "last_surfaced",
    "valid_at",
    "invalid_at",
    "original_created_at",
    "archived_at",
}


def _rfc3339(value: Any) -> object:  # noqa: ANN401 - a stored value: text, a datetime or NULL
    """Storage layout → RFC 3339 (what Go's encoder writes); anything unparseable passes through."""
    if value in (None, ""):
        return None
    parsed = clock.parse_optional(value)
    return clock.rfc3339(parsed) if parsed else value


_STORED_INSTANT = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$")


def _meta_items(store: Store, conn: Connection) -> list[tuple[str, str]]:
    """``schema_meta`` as exported: an instant (the convention boundaries) in RFC 3339 like every other time in
    the file, not the storage layout (issue 16: one timestamp format). Import ignores these keys."""
    return [
        (key, str(_rfc3339(value)) if _STORED_INSTANT.match(value or "") else value)
        for key, value in store.reads.meta_items(conn)
        # No program and no weaker protection travel with a file (ADR 0026, ADR 0027).
        if key.removeprefix("config.") not in config.LOCAL_ONLY
    ]


def _record(row: Sequence[object], columns: tuple[str, ...], *, omit_empty: tuple[str, ...] = ()) -> dict[str, Any]:
    record: dict[str, Any] = {}
    for name, stored in zip(columns, row, strict=True):
        value = stored
        if name in _TIME_FIELDS:
            value = _rfc3339(stored)
        elif name == "metadata":
            value = metadata.load(stored)
        elif name == "provenance_root":
            value = bool(stored)
        if name in omit_empty and value in (None, ""):
            continue
        record[name] = value
    return record


def bundle(store: Store, conn: Connection) -> dict[str, Any]:
    """Upstream's JSON bundle."""
    meta = dict(_meta_items(store, conn))
    return {
        "version": EXPORT_VERSION,
        "exported_at": clock.rfc3339(clock.now()),
        "meta": meta,
        "nodes": [
            _record(r, NODE_COLUMNS, omit_empty=("subtype", "metadata"))
            for r in store.reads.rows(conn, "nodes", NODE_COLUMNS, "created_at, id")
        ],
        "edges": [
            _record(r, EDGE_COLUMNS, omit_empty=("metadata",))
            for r in store.reads.rows(conn, "edges", EDGE_COLUMNS, "id")
        ],
    }


def jsonl_lines(store: Store, conn: Connection) -> list[str]:
    """Sorted, byte-stable lines: meta by key, nodes by id, edges by (source, target, relation), archive."""

    def line(kind: str, record: dict[str, Any]) -> str:
        return json.dumps({"kind": kind, **record}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    # Only what an import takes (configuration): a brain's own records — its path on this machine, when its migrations
    # ran, its embedding settings — differ between two people's brains of one project and made every merge conflict.
    meta = [(k, v) for k, v in _meta_items(store, conn) if k.startswith("config.")]
    lines = [line("meta", {"key": k, "value": v}) for k, v in meta]
    lines += [line("node", _record(r, NODE_COLUMNS)) for r in store.reads.rows(conn, "nodes", NODE_COLUMNS, "id")]
    edge_columns = EDGE_COLUMNS[1:]  # row ids differ between brains: the triple is the key
    lines += [
        line("edge", _record(r, edge_columns))
        for r in store.reads.rows(conn, "edges", edge_columns, "source_id, target_id, relation")
    ]
    lines += [
        line("archive", _record(r, ARCHIVE_COLUMNS))
        for r in store.reads.rows(conn, "nodes_archive", ARCHIVE_COLUMNS, "id")
    ]
    return lines
