"""The keyword lane of a team brain: PostgreSQL's full-text search (ADR 0030).

``nodes.keywords`` is a generated ``tsvector``, and ``node_terms`` (lexeme → memory) its index, kept by triggers: the
database keeps both in step, so there is nothing to index, unindex or rebuild here. A query is the brain file's terms
(``cerebro.store.fts.query_terms``: stop words dropped, punctuation trimmed), each turned into a tsquery by
``plainto_tsquery`` — which reads any text as plain words, so no user text is ever query syntax — stemmed and as
written (the column holds both: ``cerebro.db.pg_schema``), all joined with OR. PostgreSQL has no BM25, so
:func:`search` computes it, and returns it negated so that, as FTS5's, lower is better.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from cerebro.db.pg_schema import TEXT_SEARCH_CONFIG
from cerebro.store.fts import query_terms

if TYPE_CHECKING:
    from cerebro.db.types import Connection, Session, Transaction


MAX_TERMS = 512  # distinct query terms the keyword lane looks up (a brain file's FTS5 takes any number)


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
    """The server's autovacuum keeps the index."""


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
    nodes: dict[str, Any] | None = None,  # left empty: the ranking reads no node rows here
    copy: Any = None,  # noqa: ANN401 - a brain file's in-memory keyword copy: the database ranks here
) -> list[tuple[str, float]]:
    """Active memories matching any term, best first: [(id, -bm25)] (lower is better, as FTS5's).

    PostgreSQL ranks with ``ts_rank``/``ts_rank_cd``, which know neither a term's rarity nor saturation (LoCoMo
    held-out R@10 0.626 with ``ts_rank_cd``, against the brain file's 0.667). This computes Okapi BM25 itself over
    the matches: each term's inverse document frequency from how many it matches, its frequency in a memory from
    the memory's ``tsvector`` positions, the memory's length against the average. The matches are looked up in
    ``node_terms`` (a B-tree: row-level security keeps a GIN index out of reach, as no full-text operator is
    leakproof — ADR 0030, amendment of 2026-12-03), then tested with ``@@``."""
    # At most MAX_TERMS distinct terms: the statement chains one tsquery per term, and ~5,000 of them (a pasted
    # document as the query) overflowed PostgreSQL's stack, ~11,000 its 65,535 parameters (a review).
    terms = query_terms(query, drop_stop_words=drop_stop_words)[:MAX_TERMS]
    if not terms or limit <= 0:
        return []
    # One statement, one read of the matches. A term matches a memory by its tsquery (every word of a hyphenated
    # term); its document frequency counts the memories it matches — all of them match the query, so they are all
    # among the hits, counted before the subtype filter — and its frequency in a memory is the positions of its
    # lexemes there (stemmed and as written).
    # Each term folded as the column folds the content (team revision py0007): "fts.py" is the words "fts py".
    config = TEXT_SEARCH_CONFIG
    one = f"(plainto_tsquery('{config}', cerebro_fold(?)) || plainto_tsquery('simple', cerebro_fold(?)))"
    lexemes = f"tsvector_to_array(to_tsvector('{config}', cerebro_fold(?)) || to_tsvector('simple', cerebro_fold(?)))"
    term_rows = ", ".join([f"({n}, {one}, {lexemes})" for n in range(len(terms))])
    matches = " || ".join([one] * len(terms))
    condition, params = "", cast(tuple[Any, ...], ())
    if subtype is not ...:
        condition, params = (
            (" AND tf.subtype = ?", (subtype,)) if subtype else (" AND (tf.subtype IS NULL OR tf.subtype = '')", ())
        )
    term_params = tuple(term for term in terms for _ in range(2))
    rows = conn.execute(
        f"WITH terms (n, query, lexemes) AS MATERIALIZED (VALUES {term_rows}), "
        # Each lexeme looked up in the index, each memory it names read by its key (OFFSET 0 keeps each lookup a
        # lookup: the planner's estimates of a project's rows are rough, ADR 0030); `@@` then tests those only.
        "named AS MATERIALIZED (SELECT DISTINCT k.node_id FROM (SELECT DISTINCT unnest(lexemes) AS lexeme FROM terms) "
        "AS w CROSS JOIN LATERAL (SELECT node_id FROM node_terms WHERE lexeme = w.lexeme OFFSET 0) AS k), "
        "hits AS MATERIALIZED (SELECT n.id, n.rowid, n.subtype, n.keywords, length(n.keywords) AS len FROM named "
        "CROSS JOIN LATERAL (SELECT id, rowid, subtype, keywords, status FROM nodes WHERE id = named.node_id OFFSET 0) "
        f"AS n WHERE n.status = 'active' AND n.keywords @@ ({matches})), "
        "df AS MATERIALIZED (SELECT t.n, COUNT(*) FILTER (WHERE h.keywords @@ t.query) AS df "
        "FROM terms t CROSS JOIN hits h GROUP BY t.n), "
        # tf carries what the score needs of its memory, so the last step joins nothing as large as the hits (a
        # word in every memory makes tens of thousands; a misestimated join of two such sets never finished).
        "tf AS MATERIALIZED (SELECT h.id, h.rowid, h.subtype, h.len, t.n, SUM(array_length(u.positions, 1)) AS tf "
        "FROM hits h CROSS JOIN LATERAL unnest(h.keywords) AS u "
        "JOIN (SELECT n, unnest(lexemes) AS lexeme FROM terms) AS t ON t.lexeme = u.lexeme "
        "GROUP BY h.id, h.rowid, h.subtype, h.len, t.n), "
        "total AS MATERIALIZED (SELECT COUNT(*) AS n FROM nodes WHERE status = 'active'), "
        "average AS MATERIALIZED (SELECT GREATEST(AVG(length(keywords)), 1) AS len FROM "
        f"(SELECT keywords FROM nodes WHERE status = 'active' LIMIT {LENGTH_SAMPLE}) AS sample) "
        "SELECT tf.id, SUM(ln((total.n - df.df + 0.5) / (df.df + 0.5) + 1.0) "
        f"* tf.tf * {K1 + 1} / (tf.tf + {K1} * (1 - {B} + {B} * tf.len / a.len))) AS score "
        "FROM tf JOIN df ON df.n = tf.n CROSS JOIN total CROSS JOIN average a "
        f"WHERE true{condition} GROUP BY tf.id, tf.rowid ORDER BY score DESC, tf.rowid LIMIT ?",
        (*(term for term in terms for _ in range(4)), *term_params, *params, int(limit)),
    ).fetchall()
    return [(r[0], -float(r[1])) for r in rows]
