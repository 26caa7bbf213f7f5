"""New memories: a ``nodes`` row written with plain SQL, in either kind of write transaction.

Writing a new memory needs no ORM object, and a one-shot ``cerebro add`` would pay ~290 ms of CPU to import
SQLAlchemy and SQLModel for one INSERT (ADR 0028). The row is the one the ``Node`` model would write: the same
columns, metadata as ``json.dumps`` text (the JSON column's serializer), times as ``clock.format_ts`` text (the
``StorageTime`` column's), ``NULL`` for what a new memory has not had yet (reinforcement, update, surfacing).
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any

from cerebro import clock, values
from cerebro.store.reads import NODE_COLUMNS
from cerebro.store.sql import execute

if TYPE_CHECKING:
    from datetime import datetime

    from cerebro.db.types import Transaction

_COLUMNS = [name.strip() for name in NODE_COLUMNS.split(",")]  # every column of a memory, as the hot path reads them
_INSERT = f"INSERT INTO nodes ({', '.join(_COLUMNS)}) VALUES ({', '.join(':' + c for c in _COLUMNS)})"


def new_id() -> str:
    return str(uuid.uuid4())


def node(  # noqa: PLR0913 - the keyword-only fields of a memory
    db: Transaction,
    *,
    content: str,
    type: str,
    subtype: str | None,
    importance: float,
    metadata: dict[str, Any] | None,
    provenance_root: bool,
    origin: values.Origin,
    embedding_model: str,
    now: datetime,
    node_id: str | None = None,
    created_at: datetime | None = None,
) -> str:
    """Insert an active memory; returns its id (``node_id``, or a new one)."""
    row = {
        "id": node_id or new_id(),
        "type": type,
        "subtype": subtype,
        "content": content,
        "metadata": None if metadata is None else json.dumps(metadata),
        "importance": importance,
        "decay_rate": values.DECAY_RATES.get(type, values.DEFAULT_DECAY_RATE),
        "access_count": 0,
        "times_reinforced": 0,
        "status": "active",
        "embedding_model": embedding_model,
        "created_at": clock.format_ts(created_at or now),
        "last_accessed": clock.format_ts(now),
        "last_reinforced": None,  # what a new memory has not had yet
        "updated_at": None,
        "last_surfaced": None,
        "provenance_root": 1 if provenance_root else 0,
        "origin_actor": origin.actor,
        "origin_channel": origin.channel,
        "origin_session": origin.session,
        "origin_host": origin.host,
    }
    execute(db, _INSERT, row)
    return str(row["id"])
