"""``inbox_candidates`` (upstream v7): quarantined memory candidates.

Only this module and ``cerebro.brain.inbox`` read or write the table. No search lane,
prime pass, list, gc sweep, forget or export reads it (the quarantine rule, spec §1): a candidate has no
keyword row and no vector until it is approved and becomes a node.

Raw SQL over a SQLAlchemy session: metadata is read through :func:`cerebro.metadata.load`, so a row
written elsewhere with metadata that is not a JSON object still lists, approves and discards.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

import cerebro  # cerebro.reports loads on first use: hooks never define the reports (ADR 0036)
from cerebro import clock, metadata, values
from cerebro.store import inserts, nodes
from cerebro.store.sql import text

if TYPE_CHECKING:
    import cerebro.reports
    from cerebro.db.types import Session

TABLE = "inbox_candidates"
_COLUMNS = (
    "id, type, subtype, content, metadata, importance, created_at, "
    "origin_actor, origin_channel, origin_session, origin_host"
)


def _to_value(row: Any) -> cerebro.reports.InboxCandidate:  # noqa: ANN401 - a row of the ORM or of a raw SELECT
    importance = row[5]
    return cerebro.reports.InboxCandidate(
        id=row[0],
        type=row[1],
        subtype=row[2],
        content=row[3],
        metadata=metadata.load(row[4]),
        importance=float(importance) if importance is not None else 0.5,
        created_at=clock.parse_optional(row[6]),
        origin=values.Origin(row[7], row[8], row[9], row[10]),
    )


def resolve_id(session: Session, prefix: str) -> str:
    """A full candidate id or a unique prefix of ≥4 characters → the full id (nodes are not searched)."""
    return nodes.resolve_prefix(session, prefix, table=TABLE, noun="inbox candidate")


def get(session: Session, candidate_id: str) -> cerebro.reports.InboxCandidate:
    row = session.execute(text(f"SELECT {_COLUMNS} FROM {TABLE} WHERE id = :id"), {"id": candidate_id}).first()
    if row is None:
        from cerebro.errors import NotFound, quote

        raise NotFound(f"no inbox candidate found with id {quote(candidate_id)}")
    return _to_value(row)


def insert(
    session: Session,
    *,
    content: str,
    type: str,
    subtype: str | None,
    importance: float,
    metadata_: dict[str, Any] | None,
    origin: values.Origin,
    now: datetime,
) -> str:
    candidate_id = inserts.new_id()
    session.execute(
        text(
            f"INSERT INTO {TABLE} ({_COLUMNS}) VALUES (:id, :type, :subtype, :content, :metadata, :importance, "
            ":created_at, :actor, :channel, :session, :host)"
        ),
        {
            "id": candidate_id,
            "type": type,
            "subtype": subtype,
            "content": content,
            "metadata": metadata.dumps(metadata_),
            "importance": importance,
            "created_at": clock.format_ts(now),
            "actor": origin.actor,
            "channel": origin.channel,
            "session": origin.session,
            "host": origin.host,
        },
    )
    return candidate_id


def list_all(session: Session, limit: int | None) -> list[cerebro.reports.InboxCandidate]:
    """Oldest first (ties in insertion order)."""
    sql = f"SELECT {_COLUMNS} FROM {TABLE} ORDER BY created_at, rowid"
    params: dict[str, Any] = {}
    if limit is not None:
        sql += " LIMIT :limit"
        params["limit"] = limit
    return [_to_value(row) for row in session.execute(text(sql), params).all()]


def delete(session: Session, candidate_id: str) -> None:
    session.execute(text(f"DELETE FROM {TABLE} WHERE id = :id"), {"id": candidate_id})
