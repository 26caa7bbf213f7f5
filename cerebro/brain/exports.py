"""Portability: export (json, jsonl, sql), sqlite copies and backups, and import, validated whole and
written in one transaction. The formats themselves are ``cerebro.portability`` and ``cerebro.importing``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cerebro import config
from cerebro.brain.embedding import tend_vector_index
from cerebro.brain.handle import Handle
from cerebro.errors import InvalidInput
from cerebro.portability import ARCHIVE_COLUMNS, NODE_COLUMNS  # one list of columns, out and in

if TYPE_CHECKING:
    from collections.abc import Callable

    from cerebro import importing
    from cerebro.db.types import Session

FORMATS = ("json", "jsonl", "sqlite")


def export(h: Handle, format: str) -> dict[str, Any] | list[str]:
    """``json`` → the bundle (dict); ``jsonl`` → list of lines. Read in one snapshot: consistent while
    others write. For ``sqlite`` use :meth:`export_sqlite`."""
    from cerebro import portability

    if format not in ("json", "jsonl", "sql"):
        raise InvalidInput(f"unknown export format {format!r}: use json, jsonl, sql or sqlite")
    with h.snapshot() as conn:
        if format == "sql":
            return h.store.dump.sql_statements(conn)
        return portability.bundle(h.store, conn) if format == "json" else portability.jsonl_lines(h.store, conn)


def rebuild_keyword_lane(h: Handle) -> None:
    """After a sql dump was loaded (``NEEDS_FTS_REBUILD`` set): re-index every active node (the dump carries no FTS
    rows), and clear the mark."""
    from cerebro.db.migrate import NEEDS_FTS_REBUILD

    def write(session: Session) -> None:
        h.store.keywords.rebuild(session)
        h.store.meta.delete(session, NEEDS_FTS_REBUILD)

    h.write(write)


def export_sqlite(h: Handle, target: str | Path, *, overwrite: bool) -> Path:
    """A consistent copy of the brain file at ``target``, mode 0600, written in one step; an existing ``target``
    is refused unless ``overwrite``. Without the settings only this machine's user may change (``config.LOCAL_ONLY``:
    the reranker, ``redact_secrets``), as every export: a backup keeps them (ADR 0027)."""
    from cerebro.db import backup as backups

    local = [config.META_PREFIX + key for key in sorted(config.LOCAL_ONLY)]
    return backups.copy(h.file("an export of the brain file"), Path(target), overwrite=overwrite, leave_out=local)


def backup(h: Handle, target: str | Path | None = None) -> Path:
    """A timestamped copy under ``CEREBRO_HOME/backups`` (or at ``target``)."""
    from cerebro.db import backup as backups

    path = h.file("a backup")
    return backups.copy(path, Path(target)) if target else backups.backup(path)


_ORIGIN = ("origin_actor", "origin_channel", "origin_session", "origin_host")


def import_file(
    h: Handle, path: str | Path, *, on_conflict: str, progress: Callable[[int, int], None] | None
) -> dict[str, Any]:
    """Import a json bundle (ours or upstream's) or a jsonl export, validated whole first, written in one
    transaction. ``skip`` keeps existing nodes and edges; ``replace`` updates them in place (never
    delete-and-insert, which would cascade away their edges); ``newer`` replaces a memory only with a later
    version of it (team sync's rule). Returns the counts."""
    from cerebro import importing

    if on_conflict not in CONFLICT_RULES:
        raise InvalidInput("--on-conflict must be skip, replace or newer")
    return import_records(h, importing.read(Path(path)), str(path), on_conflict=on_conflict, progress=progress)


CONFLICT_RULES = ("skip", "replace", "newer")


def _stamp(row: Any) -> str:  # noqa: ANN401 - a stored row: (id, updated_at, created_at)
    """When a memory last changed, as storage-layout text (comparable as text)."""
    return str(row[1] or row[2] or "")


def import_records(
    h: Handle,
    parsed: importing.Parsed,
    source: str,
    *,
    on_conflict: str,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Write validated records (an import's, a team sync's batch) into ``h`` in one transaction."""
    from cerebro import importing
    from cerebro.db.engine import dbapi_connection

    newer = on_conflict == "newer"
    with h.snapshot() as conn:
        stamps = {r[0]: _stamp(r) for r in h.store.reads.rows(conn, "nodes", ["id", "updated_at", "created_at"], "id")}
        # Memories archived here (forgotten, gc-ed): under "newer", only a version later than that comes back.
        gone = h.store.reads.rows(conn, "nodes_archive", ["id", "archived_at"], "id") if newer else []
    archived_here = {r[0]: str(r[1] or "") for r in gone}
    forgotten = {node_id: when for node_id, when in archived_here.items() if node_id not in stamps}
    existing = set(stamps)
    importing.check_references(parsed, existing)
    # Each record's secrets, redacted in place; counted (and warned of) only for the records the write stores: a
    # team push or an import run again must not report the secrets of memories it leaves as they are.
    record_kinds, edge_kinds = _scrub_records(h, source, parsed.nodes + parsed.archive, parsed.edges)
    found: list[str] = []
    for node in parsed.nodes:
        if all(node[k] is None for k in _ORIGIN):  # origin-less nodes are stamped by the import
            node["origin_actor"] = node["origin_channel"] = "import"
    replace = on_conflict == "replace"

    def wanted(node: dict[str, Any]) -> bool:
        version = _stamp((None, node["updated_at"], node["created_at"]))
        if node["id"] in forgotten:
            return version > forgotten[node["id"]]
        if node["id"] not in existing or replace:
            return True
        return newer and version > stamps[node["id"]]

    self_links = sum(edge["source_id"] == edge["target_id"] for edge in parsed.edges)
    if self_links:
        noun = "edge" if self_links == 1 else "edges"
        h.on_warning(f"{source}: skipped {self_links} {noun} linking a memory to itself")
    to_write = [n for n in parsed.nodes if wanted(n)]
    _, model, dims = h.embedding_settings()  # the model, read before embedding (embedding.embed_for_write)
    vectors: dict[str, Any] = {}
    failed = 0
    if dims > 0:
        active = [n for n in to_write if n["status"] == "active"]
        for start in range(0, len(active), 64):
            batch = active[start : start + 64]
            try:
                for node, vector in zip(batch, h.embed([n["content"] for n in batch]), strict=True):
                    vectors[node["id"]] = vector
            except Exception:  # noqa: BLE001 - imported memories stay pending instead
                failed += len(batch)
            if progress:
                progress(min(start + len(batch), len(active)), len(active))

    def write(session: Session) -> dict[str, Any]:
        # Another process switched the brain's model (reembed) while these were embedded: none is stored (the old
        # model's vectors in the new table mixed two vector spaces under one label); all are left pending.
        switched = bool(vectors) and h.store.meta.get(session, "embedding_model") not in (None, model)
        usable = {} if switched else vectors
        pending = failed + (len(vectors) if switched else 0)
        for key, value in parsed.config.items():
            h.store.meta.put(session, key, value)
        has_fts = h.store.keywords.available(session)
        h.store.vectors.ensure_table(session, dims)  # none without a provider (dims 0)
        # What is here now, under the write lock (the snapshot above may be stale): a memory new to this brain has no
        # keyword row or vector to drop first. A keyword row not found at its memory's rowid is looked for by id, a
        # scan of the index (ADR 0066): done for every record, that made a large import hold the lock for seconds.
        present = h.store.reads.node_ids(dbapi_connection(session.connection()))
        nodes_done = 0
        for index, node in enumerate(parsed.nodes):
            if node["id"] in forgotten and not wanted(node):
                continue  # forgotten here after this version was written
            row = {**node, "embedding_model": model if node["id"] in usable else ""}
            if not h.store.bulk.put_node(session, row, NODE_COLUMNS, replace=replace, newer_only=newer):
                continue
            found.extend(record_kinds[index])
            if node["id"] in forgotten:  # a later version than the forgetting: active again, out of the archive
                h.store.bulk.drop_archived(session, node["id"])
            nodes_done += 1
            fresh = node["id"] not in present
            if has_fts:
                if not fresh:
                    h.store.keywords.unindex(session, node["id"])
                if node["status"] == "active":
                    h.store.keywords.index(session, node["id"], node["content"], node["subtype"])
            if node["id"] in usable:
                h.store.vectors.upsert(session, node["id"], usable[node["id"]], fresh=fresh)
            elif not fresh:  # a replaced memory's vector was made from its old text (none to drop without a table)
                h.store.vectors.delete(session, node["id"])
        edges_done = 0
        for edge, kinds in zip(parsed.edges, edge_kinds, strict=True):
            # a link from a memory to itself is skipped: add_edge refuses one (it would cite itself)
            if edge["source_id"] != edge["target_id"] and h.store.bulk.put_edge(
                session, edge, replace=replace, changed_only=newer
            ):
                edges_done += 1
                found.extend(kinds)
        archived = 0
        for row, kinds in zip(parsed.archive, record_kinds[len(parsed.nodes) :], strict=True):
            stored = h.store.bulk.put_archived(session, row, ARCHIVE_COLUMNS, replace=replace or newer)
            if stored and archived_here.get(row["id"]) != str(row["archived_at"] or ""):  # not the same archiving again
                found.extend(kinds)
            if newer and row["id"] in existing and str(row["archived_at"] or "") > stamps[row["id"]]:
                # archived elsewhere after its last change here: it leaves every lane here too (team sync)
                gone = h.store.nodes.to_value(h.store.nodes.get_row(session, row["id"]))
                h.store.archive.move_out(session, gone, row["archive_reason"] or "redundant", row["archived_at"])
                archived += 1
        if pending:
            h.store.meta.put(session, "has_pending_embeddings", "true")
        report = {
            "nodes_imported": nodes_done,
            "nodes_skipped": len(parsed.nodes) - nodes_done,
            "edges_imported": edges_done,
            "edges_skipped": len(parsed.edges) - edges_done,
            "config_imported": sorted(parsed.config),
            "config_refused": sorted(parsed.refused_config),
            "pending_embeddings": pending,
            "secrets_redacted": len(found),
        }
        if newer:
            report["archived"] = archived
        return report

    done = h.write(write)
    if found:
        from cerebro.brain import secrets

        h.on_warning(secrets.notice(found, hint=False))
    tend_vector_index(h)
    return done


def _scrub_records(
    h: Handle, path: str, records: list[dict[str, Any]], edges: list[dict[str, Any]]
) -> tuple[list[list[str]], list[list[str]]]:
    """Check imported records against the size limit and redact their secrets in place — and the ``edges``'
    metadata's — as every write path does (ADR 0027); the kinds of secret found in each record and each edge."""
    from cerebro.brain import secrets
    from cerebro.brain.validate import _check_size

    redact, limit = secrets.policy(h, False)
    for record in records:
        try:
            _check_size(record["content"], limit)
            if record["metadata"] is not None and len(record["metadata"].encode("utf-8")) > limit:
                raise InvalidInput(f"metadata is more than this brain's max_content_bytes ({limit:,})")
        except InvalidInput as exc:
            raise InvalidInput(f"{path}: record {record['id'][:8]}: {exc}") from None
    record_kinds: list[list[str]] = [[] for _ in records]
    edge_kinds: list[list[str]] = [[] for _ in edges]
    if not redact:
        return record_kinds, edge_kinds
    for record, found in zip(records, record_kinds, strict=True):
        metadata = json.loads(record["metadata"]) if record["metadata"] is not None else None
        content, metadata, kinds = secrets.scrub(h, record["content"], metadata, redact=True, warn=False)
        if kinds:
            record["content"] = content
            record["metadata"] = json.dumps(metadata) if metadata is not None else None
            found.extend(kinds)
        for label in ("subtype", *_ORIGIN):  # shown and synced in clear, as the memory's other labels
            if isinstance(record.get(label), str):
                record[label], _, kinds = secrets.scrub_labels(record[label], None, redact=True)
                found.extend(kinds)
    for edge, found in zip(edges, edge_kinds, strict=True):
        metadata = json.loads(edge["metadata"]) if edge["metadata"] is not None else None
        if metadata:
            _, metadata, kinds = secrets.scrub(h, None, metadata, redact=True, warn=False)
            if kinds:
                edge["metadata"] = json.dumps(metadata)
                found.extend(kinds)
    return record_kinds, edge_kinds
