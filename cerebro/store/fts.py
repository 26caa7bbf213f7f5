"""The FTS5 keyword lane's write side. Only *active* nodes are indexed; sync is done here, not by triggers."""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any, cast

from cerebro.store.sql import changed, execute, text

if TYPE_CHECKING:
    from cerebro.db.types import Connection, Session, Transaction
    from cerebro.store.warm_keywords import WarmKeywords
    from cerebro.store.warm_rows import RowsCopy
    from cerebro.values import Node


def available(db: Transaction) -> bool:
    return execute(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name='nodes_fts'").fetchone() is not None


# A memory's keyword row has its memory's rowid (revision py0006, ADR 0066): FTS5 cannot search its UNINDEXED
# node_id, and a delete by it read the whole index (12 ms at 100,000 memories) — for every update, supersession,
# forget, gc and import. Rows another tool wrote (Go cerebro) may have other rowids: a delete that finds nothing at the
# memory's own rowid looks for them by id, in FTS5's content table (a plain scan, for those only).
_INDEX_AT_ROWID = (
    "INSERT INTO nodes_fts (rowid, node_id, content, subtype) SELECT n.rowid, :id, :c, :s FROM nodes n "
    "WHERE n.id = :id AND NOT EXISTS (SELECT 1 FROM nodes_fts f WHERE f.rowid = n.rowid)"
)
_UNINDEX_AT_ROWID = "DELETE FROM nodes_fts WHERE rowid = (SELECT rowid FROM nodes WHERE id = :id) AND node_id = :id"
_UNINDEX_ELSEWHERE = "DELETE FROM nodes_fts WHERE rowid IN (SELECT id FROM nodes_fts_content WHERE c0 = :id)"
_OWN_TEXT = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'nodes_fts_content'"


def index(db: Transaction, node_id: str, content: str, subtype: str | None) -> None:
    params = {"id": node_id, "c": content, "s": subtype or ""}
    if not changed(db, _INDEX_AT_ROWID, params):  # its rowid taken by a row another tool wrote: one of its own
        execute(db, "INSERT INTO nodes_fts (node_id, content, subtype) VALUES (:id, :c, :s)", params)


def unindex(db: Transaction, node_id: str, *, indexed: bool = True) -> None:
    """Drop a memory's keyword row. ``indexed=False``: the memory is not active, so it has no row but one at its own
    rowid left by a mistake (not looked for elsewhere: a scan, for what should not be there)."""
    if not changed(db, _UNINDEX_AT_ROWID, {"id": node_id}) and indexed:
        # An index keeping its text elsewhere (external content) has no content table: FTS5's own scan finds the row.
        own = execute(db, _OWN_TEXT).fetchone() is not None
        execute(db, _UNINDEX_ELSEWHERE if own else "DELETE FROM nodes_fts WHERE node_id = :id", {"id": node_id})


def reindex(db: Transaction, node_id: str, content: str, subtype: str | None) -> None:
    unindex(db, node_id)
    index(db, node_id, content, subtype)


# ----------------------------------------------------------------------------- reads (DB-API)

# English function words dropped from keyword queries: with per-token OR, "the" or "did" would pull in
# half the brain. Measured on LoCoMo (ADR 0010). If a query is nothing but stop words, they are kept.
# fmt: off
STOP_WORDS = frozenset([
    "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "aren't", "as",
    "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "can't",
    "cannot", "could", "couldn't", "did", "didn't", "do", "does", "doesn't", "doing", "don't", "down", "during",
    "each", "few", "for", "from", "further", "had", "hadn't", "has", "hasn't", "have", "haven't", "having", "he",
    "he'd", "he'll", "he's", "her", "here", "here's", "hers", "herself", "him", "himself", "his", "how", "how's",
    "i", "i'd", "i'll", "i'm", "i've", "if", "in", "into", "is", "isn't", "it", "it's", "its", "itself", "let's",
    "me", "more", "most", "mustn't", "my", "myself", "no", "nor", "not", "of", "off", "on", "once", "only", "or",
    "other", "ought", "our", "ours", "ourselves", "out", "over", "own", "same", "shan't", "she", "she'd", "she'll",
    "she's", "should", "shouldn't", "so", "some", "such", "than", "that", "that's", "the", "their", "theirs",
    "them", "themselves", "then", "there", "there's", "these", "they", "they'd", "they'll", "they're", "they've",
    "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "wasn't", "we", "we'd", "we'll",
    "we're", "we've", "were", "weren't", "what", "what's", "when", "when's", "where", "where's", "which", "while",
    "who", "who's", "whom", "why", "why's", "will", "with", "won't", "would", "wouldn't", "you", "you'd", "you'll",
    "you're", "you've", "your", "yours", "yourself", "yourselves",
])
# fmt: on
_EDGE_PUNCTUATION = "\"'“”‘’.,;:!?()[]{}<>"


_POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)


def optimize(session: Session) -> None:
    """Merge the index into one segment: the segments holding replaced text are dropped, not kept beside it."""
    session.execute(text("INSERT INTO nodes_fts (nodes_fts) VALUES ('optimize')"))


def rebuild(session: Session) -> None:
    """Index every active node afresh (after a sql dump, which carries no keyword rows; on doctor's advice), in an
    index made as revision py0002 makes it when the brain has none (dropped by hand or by another tool)."""
    session.execute(
        text(
            "CREATE VIRTUAL TABLE IF NOT EXISTS nodes_fts "
            "USING fts5(node_id UNINDEXED, content, subtype, tokenize = 'porter unicode61')"
        )
    )
    session.execute(text("DELETE FROM nodes_fts"))
    session.execute(
        text(
            "INSERT INTO nodes_fts (rowid, node_id, content, subtype) "  # each row at its memory's rowid (ADR 0066)
            "SELECT rowid, id, content, COALESCE(subtype, '') FROM nodes WHERE status = 'active'"
        )
    )


def query_terms(query: str, *, drop_stop_words: bool = True) -> list[str]:
    """Whitespace tokens of the query, de-duplicated, stop words dropped (unless that leaves nothing).

    A possessive ``'s`` is cut ("Ada's" → "Ada"): quoted whole, it would be the phrase "ada s" and never
    match the name on its own.
    """
    tokens = [_POSSESSIVE.sub("", t.strip(_EDGE_PUNCTUATION)) for t in (query or "").split()]
    tokens = [t for t in tokens if t]  # what was only punctuation
    seen: dict[str, str] = {}
    for token in tokens:
        seen.setdefault(token.lower(), token)
    terms = list(seen.values())
    if drop_stop_words:
        kept = [t for t in terms if t.lower().strip(_EDGE_PUNCTUATION) not in STOP_WORDS]
        if kept:
            terms = kept
    return terms


def build_match_query(terms: list[str]) -> str | None:
    """Each term becomes a quoted FTS5 string (inner quotes doubled), joined with OR: user text can never
    form FTS5 syntax (NEAR, *, column filters, parentheses)."""
    quoted = ['"' + term.replace('"', '""') + '"' for term in terms]
    return " OR ".join(quoted) if quoted else None


def search(
    conn: Connection,
    query: str,
    limit: int,
    *,
    drop_stop_words: bool = True,
    subtype: Any = ...,  # noqa: ANN401 - ... (any subtype), None or "" (none), or a subtype
    nodes: dict[str, Node] | None = None,
    copy: WarmKeywords | None = None,
    rows: RowsCopy | None = None,
) -> list[tuple[str, float]]:
    """Active nodes matching the query, best BM25 first: [(node_id, bm25)] (lower bm25 is better).

    ``subtype``: ``...`` (default) no filter; ``None``/``""`` only nodes without one; else that subtype.
    ``nodes``: filled with every hit's node, read with its status (a row each, where recall read them again after).
    ``copy``: an in-memory copy of the index (a long-lived process's, ADR 0044), which ranks as FTS5 would when it can.
    ``rows``: an in-memory copy of the rows (ADR 0051), which tells the hits' node ids, statuses and nodes.
    Any FTS problem (no table, a query FTS5 still rejects) gives an empty lane, never an error.
    """
    terms = query_terms(query, drop_stop_words=drop_stop_words)
    match = build_match_query(terms)
    if match is None or limit <= 0:
        return []
    # The best hits first, then their rows by primary key: joining every match to ``nodes`` for its status
    # cost 14 ms of a recall at 100k memories (issue 18), though only active nodes are indexed. A page
    # that lost hits to the filter (a subtype, or an old brain's stray rows) is fetched again 4x deeper,
    # until it is enough or FTS5 has no more matches.
    # The ranking asks for rowids only: asked for node ids, FTS5 read the stored row of every hit that entered its
    # top-k heap on the way (~1 ms a recall at 10k memories); the best page's node ids are read after.
    k = int(limit) * (1 if subtype is ... else 4)
    asked, spent = copy, 0.0  # FTS5's ranking time is told to a copy that did not answer: it decides when to build
    while True:
        ranked = _copied(copy, conn, terms, k)
        if ranked is None:
            copy = None  # it will not answer the deeper pages either (and a page is not another ask)
            started = time.thread_time()  # this thread's CPU: other threads' work is not FTS5's
            try:
                ranked = conn.execute(RANKING, (match, k)).fetchall()
            except Exception:  # noqa: BLE001 - the keyword lane is best-effort by design
                return []
            spent += time.thread_time() - started
        read: dict[str, Any] = {}  # node id → its row (its Node, from a rows copy)
        keep = read if nodes is not None else None
        wanted = rows.active_hits([r[0] for r in ranked], subtype, keep) if rows is not None else None
        copied = wanted is not None
        if wanted is None:
            wanted = _active_node_ids(conn, [r[0] for r in ranked], subtype, keep)
        hits = [(wanted[rowid], float(rank)) for rowid, rank in ranked if rowid in wanted]
        if len(hits) >= limit or len(ranked) < k:
            if asked is not None and spent:
                asked.spent(spent)
            hits = hits[: int(limit)]
            if nodes is not None and copied:
                nodes.update({node_id: read[node_id] for node_id, _ in hits})
            elif nodes is not None:  # the nodes of the hits returned only (with a subtype the lane reads 4x deeper)
                from cerebro.store.reads import node_from_row

                nodes.update({node_id: node_from_row(read[node_id]) for node_id, _ in hits})
            return hits
        k *= 4


RANKING = "SELECT rowid, bm25(nodes_fts) AS rank FROM nodes_fts WHERE nodes_fts MATCH ? ORDER BY rank LIMIT ?"


def _copied(copy: WarmKeywords | None, conn: Connection, terms: list[str], k: int) -> list[tuple[int, float]] | None:
    """The copy's ranking (FTS5's, from memory), or None for FTS5 to give it: no copy, none current, or a failure —
    which must cost the recall its speed, never its keyword lane."""
    if copy is None:
        return None
    try:
        return copy.ranked(conn, terms, k)
    except Exception:  # noqa: BLE001 - FTS5 answers instead
        return None


def _active_node_ids(
    conn: Connection,
    rowids: list[int],
    subtype: Any,  # noqa: ANN401 - see search
    rows: dict[str, Any] | None = None,
) -> dict[int, str]:
    """{FTS rowid: node id} of the hits whose node is active (and of the subtype, when one is asked for): the node ids
    and the nodes' statuses in one statement (two cost ~0.07 ms more a recall at 10,000 memories); with ``rows``, the
    nodes' whole rows too, into it by node id."""
    from cerebro.store.reads import NODE_COLUMNS, chunks

    condition, params = "", cast(tuple[Any, ...], ())
    if subtype is not ...:
        condition, params = (
            (" AND n.subtype = ?", (subtype,)) if subtype else (" AND (n.subtype IS NULL OR n.subtype = '')", ())
        )
    # The node id is n.id (equal to the content table's by the join), then the row's other columns when asked for.
    columns = "".join(f", n.{name.strip()}" for name in NODE_COLUMNS.split(",")[1:]) if rows is not None else ""
    found: dict[int, str] = {}
    for part in chunks(rowids):
        marks = ",".join("?" * len(part))
        # "+status": the primary key, not idx_nodes_status (see reads.nodes_by_id). The node ids are read from the
        # table's own content table (FTS5's documented %_content: rowid "id", columns c0…): a B-tree seek a hit, where
        # a rowid lookup through the virtual table cost ~0.6 µs more each (~0.03 ms a recall at 10,000 memories).
        # A keyword index that keeps its text elsewhere (external content) has no content table: the virtual table.
        for table, rowid, node_id in (("nodes_fts_content", "id", "c0"), ("nodes_fts", "rowid", "node_id")):
            sql = (
                f"SELECT f.{rowid}, n.id{columns} FROM {table} f JOIN nodes n ON n.id = f.{node_id} "
                f"WHERE f.{rowid} IN ({marks}) AND +n.status = 'active'{condition}"
            )
            try:
                read = conn.execute(sql, (*part, *params)).fetchall()
                break
            except Exception as exc:
                if table == "nodes_fts" or "no such table" not in str(exc):
                    raise
        for row in read:
            found[row[0]] = row[1]
            if rows is not None:
                rows[row[1]] = row[1:]
    return found
