"""The keyword lane of a team brain: PostgreSQL's full-text search (ADR 0030).

``nodes.keywords`` is a generated ``tsvector`` with a GIN index over active memories, so the database keeps it in
step: nothing to index, unindex or rebuild here. A query is the brain file's terms
(``cerebro.store.fts.query_terms``: stop words dropped, punctuation trimmed), each turned into a tsquery by
``plainto_tsquery`` — which reads any text as plain words, so no user text is ever query syntax — stemmed and as
written (the column holds both: ``cerebro.db.pg_schema``), all joined with OR. Ranked by ``ts_rank_cd`` (cover
density: not BM25, which PostgreSQL lacks), returned negated so that, as with BM25, lower is better.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from cerebro.db.pg_schema import TEXT_SEARCH_CONFIG
from cerebro.store.fts import query_terms

if TYPE_CHECKING:
    from cerebro.db.types import Connection, Session, Transaction


def available(db: Transaction) -> bool:
    return True


def index(db: Transaction, node_id: str, content: str, subtype: str | None) -> None:
    """The generated column indexes a memory as it is written."""


def unindex(db: Transaction, node_id: str) -> None:
    """Only active memories are searched (the index is partial): nothing to remove."""


def reindex(db: Transaction, node_id: str, content: str, subtype: str | None) -> None:
    """The generated column follows the content."""


def rebuild(session: Session) -> None:
    """Nothing to rebuild: the database keeps the column and its index."""


def optimize(session: Session) -> None:
    """GIN's pending list is merged by the server's autovacuum."""


def search(
    conn: Connection,
    query: str,
    limit: int,
    *,
    drop_stop_words: bool = True,
    subtype: Any = ...,  # noqa: ANN401 - ... (any subtype), None or "" (none), or a subtype
) -> list[tuple[str, float]]:
    terms = query_terms(query, drop_stop_words=drop_stop_words)
    if not terms or limit <= 0:
        return []
    one = f"plainto_tsquery('{TEXT_SEARCH_CONFIG}', ?) || plainto_tsquery('simple', ?)"
    tsquery = " || ".join([one] * len(terms))
    condition, params = "", cast(tuple[Any, ...], ())
    if subtype is not ...:
        condition, params = (
            (" AND subtype = ?", (subtype,)) if subtype else (" AND (subtype IS NULL OR subtype = '')", ())
        )
    rows = conn.execute(
        f"SELECT id, ts_rank_cd(keywords, q) AS rank FROM nodes, ({'SELECT ' + tsquery} AS q) AS query "
        f"WHERE status = 'active' AND keywords @@ q{condition} ORDER BY rank DESC, rowid LIMIT ?",
        (*(term for term in terms for _ in range(2)), *params, int(limit)),
    ).fetchall()
    return [(r[0], -float(r[1])) for r in rows]
