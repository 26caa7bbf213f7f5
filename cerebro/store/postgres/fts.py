"""The keyword lane of a team brain: PostgreSQL's full-text search (ADR 0030).

``nodes.keywords`` is a generated ``tsvector`` with a GIN index over active memories, so the database keeps it in
step: nothing to index, unindex or rebuild here. A query is the brain file's terms
(``cerebro.store.fts.query_terms``: stop words dropped, punctuation trimmed), each turned into a tsquery by
``plainto_tsquery`` — which reads any text as plain words, so no user text is ever query syntax — stemmed and as
written (the column holds both: ``cerebro.db.pg_schema``), all joined with OR. PostgreSQL has no BM25, so
:func:`search` computes it, and returns it negated so that, as FTS5's, lower is better.
"""

from __future__ import annotations

import math
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


# BM25's constants, as SQLite's FTS5 uses them: term-frequency saturation and length normalisation.
K1, B = 1.2, 0.75
# The average memory length is estimated from this many active memories (one bounded read a query).
LENGTH_SAMPLE = 1000


def search(
    conn: Connection,
    query: str,
    limit: int,
    *,
    drop_stop_words: bool = True,
    subtype: Any = ...,  # noqa: ANN401 - ... (any subtype), None or "" (none), or a subtype
) -> list[tuple[str, float]]:
    """Active memories matching any term, best first: [(id, -bm25)] (lower is better, as FTS5's).

    PostgreSQL ranks with ``ts_rank``/``ts_rank_cd``, which know neither a term's rarity nor saturation (LoCoMo
    held-out R@10 0.626 with ``ts_rank_cd``, against the brain file's 0.667). This computes Okapi BM25 itself over
    the matches the GIN index finds: each term's inverse document frequency from the index's own counts, its
    frequency in a memory from the memory's ``tsvector`` positions, the memory's length against the average."""
    terms = query_terms(query, drop_stop_words=drop_stop_words)
    if not terms or limit <= 0:
        return []
    one = f"(plainto_tsquery('{TEXT_SEARCH_CONFIG}', ?) || plainto_tsquery('simple', ?))"
    term_params = [term for term in terms for _ in range(2)]
    counts = conn.execute(
        "SELECT "
        + ", ".join([f"(SELECT COUNT(*) FROM nodes WHERE status = 'active' AND keywords @@ {one})"] * len(terms))
        + ", (SELECT COUNT(*) FROM nodes WHERE status = 'active')",
        tuple(term_params),
    ).fetchone()
    total = int(counts[-1])
    idf = [math.log((total - df + 0.5) / (df + 0.5) + 1.0) for df in (int(c) for c in counts[:-1])]
    condition, params = "", cast(tuple[Any, ...], ())
    if subtype is not ...:
        condition, params = (
            (" AND subtype = ?", (subtype,)) if subtype else (" AND (subtype IS NULL OR subtype = '')", ())
        )
    lexemes = f"tsvector_to_array(to_tsvector('{TEXT_SEARCH_CONFIG}', ?) || to_tsvector('simple', ?))"
    term_rows = ", ".join([f"(CAST(? AS double precision), {lexemes})"] * len(terms))
    matches = " || ".join([one] * len(terms))
    rows = conn.execute(
        f"WITH terms (idf, lexemes) AS (VALUES {term_rows}), "
        "hits AS (SELECT id, rowid, keywords FROM nodes "
        f"WHERE status = 'active' AND keywords @@ ({matches}){condition}), "
        f"average AS (SELECT GREATEST(AVG(length(keywords)), 1) AS len FROM "
        f"(SELECT keywords FROM nodes WHERE status = 'active' LIMIT {LENGTH_SAMPLE}) AS sample) "
        f"SELECT h.id, SUM(t.idf * f.tf * {K1 + 1} / (f.tf + {K1} * (1 - {B} + {B} * length(h.keywords) / a.len))) "
        "AS score FROM hits h CROSS JOIN average a CROSS JOIN terms t CROSS JOIN LATERAL "
        "(SELECT COALESCE(SUM(array_length(u.positions, 1)), 0) AS tf FROM unnest(h.keywords) AS u "
        "WHERE u.lexeme = ANY(t.lexemes)) AS f GROUP BY h.id, h.rowid ORDER BY score DESC, h.rowid LIMIT ?",
        (
            *(value for weight, term in zip(idf, terms, strict=True) for value in (weight, term, term)),
            *term_params,
            *params,
            int(limit),
        ),
    ).fetchall()
    return [(r[0], -float(r[1])) for r in rows]
