"""``schema_meta``: the brain's key/value store (versions, embedding settings, boundaries, config, counters)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cerebro.store.sql import changed, dialect, execute, text

if TYPE_CHECKING:
    from cerebro.db.types import Session, Transaction


def get(db: Transaction, key: str, default: str | None = None) -> str | None:
    row = execute(db, "SELECT value FROM schema_meta WHERE key = :k", {"k": key}).fetchone()
    return row[0] if row is not None else default


def get_many(session: Session, prefix: str) -> dict[str, str]:
    # A range query rather than LIKE, so '_' and '%' in keys are not wildcards.
    rows = session.execute(
        text("SELECT key, value FROM schema_meta WHERE key COLLATE BINARY >= :lo AND key COLLATE BINARY < :hi"),
        {"lo": prefix, "hi": prefix + "\U0010ffff"},
    ).all()
    return dict(rows)


def put(db: Transaction, key: str, value: str) -> None:
    execute(
        db,
        "INSERT INTO schema_meta (key, value) VALUES (:k, :v) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        {"k": key, "v": value},
    )


def delete(session: Session, key: str) -> bool:
    return changed(session, "DELETE FROM schema_meta WHERE key = :k", {"k": key}) > 0


def delete_prefix(session: Session, prefix: str) -> int:
    return changed(
        session,
        "DELETE FROM schema_meta WHERE key COLLATE BINARY >= :lo AND key COLLATE BINARY < :hi",
        {"lo": prefix, "hi": prefix + "\U0010ffff"},
    )


# Upstream's IncrMeta: a missing or non-integer value becomes 1. Named parameters: the same text runs on the
# ORM session and on a raw DB-API connection (store/bookkeeping.py).
INCREMENT = (
    "INSERT INTO schema_meta (key, value) VALUES (:k, '1') ON CONFLICT(key) DO UPDATE SET value = "
    "CASE WHEN CAST(value AS INTEGER) || '' = value THEN CAST(CAST(value AS INTEGER) + 1 AS TEXT) ELSE '1' END"
)


# PostgreSQL's CAST of a non-number is an error, not 0: the same rule, by pattern.
INCREMENT_POSTGRESQL = (
    "INSERT INTO schema_meta (key, value) VALUES (:k, '1') ON CONFLICT(key) DO UPDATE SET value = "
    "CASE WHEN schema_meta.value ~ '^(0|-?[1-9][0-9]{0,17})$' "
    "THEN CAST(CAST(schema_meta.value AS BIGINT) + 1 AS TEXT) ELSE '1' END"
)


def increment_sql(db: Transaction) -> str:
    return INCREMENT_POSTGRESQL if dialect(db) == "postgresql" else INCREMENT


def increment(session: Session, key: str) -> None:
    session.execute(text(increment_sql(session)), {"k": key})
