"""The sqlite-vec lane's table. Not part of the migration chain: its width comes from the brain's
``embedding_dimensions``, so the store creates it when that is above 0 (upstream's ``InitVectorTable``)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text


def exists(session: Any) -> bool:
    return (
        session.execute(text("SELECT 1 FROM sqlite_master WHERE type='table' AND name='vec_nodes'")).first()
        is not None
    )


def ensure_table(session: Any, dimensions: int) -> None:
    if dimensions <= 0:
        return
    session.execute(
        text(
            "CREATE VIRTUAL TABLE IF NOT EXISTS vec_nodes USING "
            f"vec0(node_id TEXT, embedding float[{int(dimensions)}] distance_metric=cosine)"
        )
    )


def count_missing_active(session: Any) -> int:
    """Active nodes with no vector row (upstream's pending predicate since 3.4.0)."""
    if not exists(session):
        return 0
    return session.execute(
        text(
            "SELECT COUNT(*) FROM nodes n WHERE n.status = 'active' "
            "AND NOT EXISTS (SELECT 1 FROM vec_nodes v WHERE v.node_id = n.id)"
        )
    ).scalar_one()
