"""An in-memory copy of the keyword index for long-lived processes: FTS5's BM25 ranking of a query, from memory.

At 100,000 memories FTS5 spends ~1.5 ms a recall ranking a query's matches (a few thousand rows for a query of common
words), most of it reading each match's length from ``nodes_fts_docsize``, a B-tree seek a row; the work grows with the
matches. The copy holds what ``bm25()`` reads — each token's postings (row, occurrences in the row), each row's length
in tokens, the row and token totals — taken once from FTS5's own tables, and ranks with the same arithmetic in the
same order: the same doubles, ties in rowid order as SQLite's sorter leaves them. The answer is FTS5's, bit for bit
(``tests/retrieval/test_warm_keywords.py`` compares them), in ~0.1–0.3 ms at 100,000 memories (ADR 0044).

It answers only queries whose every quoted term is at most one token, as the tokenizer cuts it (asked of a private
in-memory FTS5 table made with the same ``tokenize`` option, once a term); a phrase of several tokens ("HS-049") is
left to FTS5, which knows where each token stands. The copy is current while the keyword index is what it was when
the copy was read — its averages and structure records change with every write to it (the structure record counts
the segments written) and the schema cookie with a re-created table — so each query first compares those with the
copy's (one statement); a stale copy is dropped. A new one is built on a thread of its own, on its own connection,
once FTS5's ranking at one state of the index has cost a share of what a build costs (ski rental: a brain written
between a few recalls never builds), and checked against FTS5 before it is used. Until then FTS5 answers, with the
same ranking.
"""

from __future__ import annotations

import math
import re
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from cerebro.db.types import Connection

# Below this many indexed memories FTS5 ranks a query in ~0.03 ms: the copy is not worth its memory and its thread.
KEYWORDS_FROM = 5_000
# FTS5's bm25() constants (fts5_aux.c): k1, b.
K1 = 1.2
B = 0.75
_TERMS_KEPT = 50_000  # query terms whose tokens are remembered; then forgotten all at once
CHECKED_TOKENS = 4  # frequent and rare tokens a new copy is checked against FTS5 with (KeywordCopy.agrees)
CHECKED_ROWS = 2_000  # the most rows a token checked may have
# When a copy is worth building (ski rental): once FTS5's ranking at one state of the index has cost this share of what
# a build would (~0.02 s + 3 µs a row of CPU: ~0.05 s at 10,000 memories, ~0.3 s at 100,000), the copy is built. A
# server whose brain is written between a few recalls (an agent's remember, recall, recall) never pays for copies it
# would barely use; a process that keeps recalling pays at most (1 + 1/share)× what knowing the future would cost.
BUILD_SHARE = 0.25
BUILD_SECONDS_FIXED = 0.02
BUILD_SECONDS_PER_ROW = 3e-6
# The only table layout the copy reads: cerebro's keyword index, with the default or an explicit tokenizer.
_LAYOUT = re.compile(
    r"CREATE VIRTUAL TABLE nodes_fts USING fts5\(node_id UNINDEXED, content, subtype(?:, tokenize = '([^']*)')?\)"
)
_STAMP_SQL = (
    "SELECT (SELECT block FROM nodes_fts_data WHERE id = 1), (SELECT block FROM nodes_fts_data WHERE id = 10), "
    "(SELECT schema_version FROM pragma_schema_version)"
)


def current_stamp(conn: Connection) -> tuple[Any, ...] | None:
    """What changes whenever the keyword index does (None when there is none to read): its averages record (rows and
    tokens), its structure record (with a counter of the segments ever written) and the schema cookie."""
    try:
        return tuple(conn.execute(_STAMP_SQL).fetchone())
    except Exception:  # noqa: BLE001 - no keyword index: FTS5's own path reports nothing either
        return None


class WarmKeywords:
    """A brain's keyword copy in one process (a :class:`cerebro.brain.handle.Handle` keeps one), with its builds."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._copy: KeywordCopy | None = None
        self._built: KeywordCopy | None = None  # a build's copy, adopted by the next query it is current for
        self._building = False
        # At one state of the index: (its stamp, queries asked, seconds FTS5 spent ranking them). A build starts at the
        # second ask once those seconds reach BUILD_SHARE of a build's, once a state.
        self._asked: tuple[tuple[Any, ...] | None, int, float] = (None, 0, 0.0)
        self._tried: tuple[Any, ...] | None = None  # the state a build was last started (or refused) at
        self._tokenizer: Tokenizer | None = None
        # A copy that ranked otherwise than FTS5 (KeywordCopy.agrees: this platform's SQLite rounds otherwise) means
        # every copy would: no more builds in this process.
        self._disagrees = False
        self.builds = 0

    def ranked(self, conn: Connection, terms: Sequence[str], k: int) -> list[tuple[int, float]] | None:
        """What ``SELECT rowid, bm25(nodes_fts) AS rank … MATCH <the terms, quoted, OR-ed> ORDER BY rank LIMIT k`` gives
        in ``conn``'s snapshot, or None: no current copy (a build may start), or a term the copy cannot answer for."""
        if any("\x00" in term for term in terms):
            return None  # FTS5 reads a MATCH text up to a NUL (and fails): left to it, to fail the same way
        stamp = current_stamp(conn)
        copy = self._copy
        if copy is None or copy.stamp != stamp:
            copy = self._current(stamp)
            if copy is None:
                return None
        tokenizer = self._tokenizer
        if tokenizer is None or tokenizer.option != copy.tokenize:
            tokenizer = self._tokenizer = Tokenizer(copy.tokenize)
        tokens = tokenizer.cut(terms)
        if any(len(found) > 1 for found in tokens):
            return None  # a phrase: where each token stands decides whether it matches
        # A term of no token ("—") is a phrase no row matches: FTS5 adds 0 for it, as if it were not there.
        return copy.ranked([found[0] for found in tokens if found], k)

    def _current(self, stamp: tuple[Any, ...] | None) -> KeywordCopy | None:
        """The copy for ``stamp``: the one a build has just made, if it is; else None, and maybe a build starts."""
        with self._lock:
            built, self._built = self._built, None
            if built is not None and built.stamp == stamp:
                self._copy = built
                return built
            self._copy = None
            _, asked, spent = self._asked if self._asked[0] == stamp else (stamp, 0, 0.0)
            self._asked = (stamp, asked + 1, spent)
            if stamp is None or asked < 1 or stamp == self._tried or self._building or self._disagrees:
                return None
            rows = _rows(stamp)
            if rows < KEYWORDS_FROM:  # known from the stamp: no thread, no NumPy
                self._tried = stamp
                return None
            if spent < BUILD_SHARE * (BUILD_SECONDS_FIXED + BUILD_SECONDS_PER_ROW * rows):
                return None
            self._tried = stamp
            self._building = True
        try:
            # NumPy imported here first, if this process has not yet: two threads importing it at once can meet a
            # half-made module (CPython gives one up rather than deadlock).
            import numpy  # noqa: F401

            threading.Thread(target=self._build, name="cerebro-keywords", daemon=True).start()
        except Exception:  # noqa: BLE001 - no NumPy, no thread: FTS5 goes on answering, and a later state may build
            with self._lock:
                self._building = False
        return None

    def spent(self, seconds: float) -> None:
        """FTS5 spent ``seconds`` ranking the query this copy was last asked for and did not answer (at the state of
        the index that ask read: the handle's lock keeps its queries one at a time)."""
        with self._lock:
            stamp, asked, spent = self._asked
            self._asked = (stamp, asked, spent + seconds)

    def _build(self) -> None:
        from cerebro.db.engine import connect_raw
        from cerebro.db.session import raw_read
        from cerebro.process import collector_paused

        copy: KeywordCopy | None = None
        disagrees = False
        try:
            # An existing file only: a brain removed under a running process must not come back as an empty one.
            conn = connect_raw(self._path, wal=False, create=False)
            try:
                with raw_read(conn), collector_paused():
                    copy = read_copy(conn, current_stamp(conn))
                    if copy is not None and not copy.agrees(conn):
                        copy, disagrees = None, True
            finally:
                conn.close()
        except Exception:  # noqa: BLE001 - FTS5 keeps answering
            copy = None
        with self._lock:
            self._building = False
            self._disagrees = self._disagrees or disagrees
            self.builds += 1
            self._built = copy


class Tokenizer:
    """The keyword index's tokenizer, asked through a private in-memory FTS5 table made with the same option."""

    def __init__(self, option: str | None) -> None:
        from cerebro.db.engine import driver

        self.option = option
        self._known: dict[str, list[str]] = {}
        self._lock = threading.Lock()
        self._conn = driver().connect(":memory:", check_same_thread=False, isolation_level=None)
        spec = f", tokenize = '{option}'" if option is not None else ""
        self._conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x{spec})")
        self._conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")

    def tokens(self, term: str) -> list[str]:
        """The tokens FTS5 cuts ``term`` into, in order."""
        return self.cut([term])[0]

    def cut(self, terms: Sequence[str]) -> list[list[str]]:
        """The tokens of each of ``terms``: those not cut before in one insert and one read (a query's new words)."""
        found = {term: self._known[term] for term in terms if term in self._known}
        new = [term for term in dict.fromkeys(terms) if term not in found]
        if new:
            for term in new:
                found[term] = []
            with self._lock:
                # Inserted, read and rolled back: FTS5 reads its pending rows, and a rollback discards them where a
                # commit of the insert (and of a delete after it) wrote index segments — 70 → 30 µs a query's words.
                try:
                    self._conn.execute("BEGIN")
                    self._conn.executemany("INSERT INTO t (rowid, x) VALUES (?, ?)", enumerate(new, start=1))
                    for number, token in self._conn.execute("SELECT doc, term FROM v ORDER BY doc, offset"):
                        found[new[number - 1]].append(token)
                finally:
                    if self._conn.in_transaction:  # whatever happened: the next cut must be able to begin
                        self._conn.execute("ROLLBACK")
            if len(self._known) + len(new) > _TERMS_KEPT:
                self._known.clear()
            self._known.update((term, found[term]) for term in new)
        return [found[term] for term in terms]


class KeywordCopy:
    """One reading of the keyword index: each token's postings with their query-independent weights, totals."""

    def __init__(
        self,
        stamp: tuple[Any, ...] | None,
        tokenize: str | None,
        rowids: Any,  # noqa: ANN401 - NumPy int64, ascending: the rows (dense row i is FTS5 rowid rowids[i])
        lengths: Any,  # noqa: ANN401 - NumPy float64: each row's tokens, every column
        total_tokens: int,
        spans: dict[str, tuple[int, int]],  # token → its postings, [start, end)
        rows: Any,  # noqa: ANN401 - NumPy int32 dense rows, ascending within a token's postings
        counts: Any,  # noqa: ANN401 - NumPy float64 occurrences of the token in the row, every column
    ) -> None:
        import numpy as np

        self.stamp, self.tokenize = stamp, tokenize
        self._rowids, self._spans, self._rows = rowids, spans, rows
        self._total_rows = len(rowids)
        # bm25()'s term for a phrase of one token in a row is idf × f(k1 + 1) / (f + k1(1 − b + b·D/avgdl)): all but
        # the idf is the posting's own, computed once here exactly as fts5_aux.c computes it per row (the same
        # operations in the same order: the same doubles).
        average = float(total_tokens) / float(len(rowids))
        norms = K1 * ((1 - B) + (B * lengths) / average)
        self._weights = (counts * (K1 + 1.0)) / (counts + norms[rows])
        self._scores = np.zeros(len(rowids))  # a query's sums, row by row: zero between queries
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._rowids)

    def agrees(self, conn: Connection) -> bool:
        """Whether FTS5 ranks as this copy does in ``conn``'s snapshot (the one it was read in): the most frequent
        tokens, rare ones and pairs of them, k = 10. A platform whose compiler fuses a multiply and an add in FTS5's
        arithmetic (FMA: arm64 compilers may) rounds differently from NumPy — the copy would then be off by an ulp,
        and is not used. Only tokens that are their own token as query terms (porter: "deploi" stays "deploi") are
        asked, so that FTS5 reads the same postings."""
        from cerebro.store.fts import RANKING, build_match_query

        probes = CHECKED_TOKENS
        tokenizer = Tokenizer(self.tokenize)
        # Tokens of at most CHECKED_ROWS rows (FTS5 scores every match: a token in half the brain costs ~35 ms at
        # 100,000 memories), the most frequent of those and the rarest.
        spans = self._spans
        by_rows = sorted(spans, key=lambda t: spans[t][1] - spans[t][0])  # rarest first
        small = [t for t in by_rows if spans[t][1] - spans[t][0] <= CHECKED_ROWS] or by_rows[: 4 * probes]
        candidates = list(dict.fromkeys(small[: 64 * probes] + small[-64 * probes :]))  # the rarest, the most frequent
        own = [t for t, cut in zip(candidates, tokenizer.cut(candidates), strict=True) if cut == [t]]
        chosen = list(dict.fromkeys([*own[:probes], *own[-probes:]]))
        asked = [[token] for token in chosen] + [list(pair) for pair in zip(chosen, reversed(chosen), strict=True)]
        for tokens in asked:
            expected = [tuple(row) for row in conn.execute(RANKING, (build_match_query(tokens), 10)).fetchall()]
            if self.ranked(tokens, 10) != expected:
                return False
        return bool(asked)

    def ranked(self, tokens: Sequence[str], k: int) -> list[tuple[int, float]]:
        """[(rowid, bm25)] of the ``k`` best rows matching any of ``tokens`` (one query phrase each), best first."""
        import numpy as np

        # A token no row has adds 0 to every row's score in FTS5: it is left out.
        spans = [span for span in map(self._spans.get, tokens) if span is not None]
        if not spans or k <= 0:
            return []
        with self._lock:
            scores, matched = self._scores, []
            try:
                for start, end in spans:
                    rows, hits = self._rows[start:end], end - start
                    idf = math.log((self._total_rows - hits + 0.5) / (hits + 0.5))
                    # A token's postings hold a row once: the sums, token by token, are FTS5's, phrase by phrase.
                    scores[rows] += (idf if idf > 0.0 else 1e-6) * self._weights[start:end]
                    matched.append(rows)
                if len(matched) > 1:  # each row once: a sort of the matches, not a pass over every row
                    rows = np.sort(np.concatenate(matched))
                    rows = rows[np.concatenate(([True], rows[1:] != rows[:-1]))]
                ranks = -scores[rows]  # bm25() is −score: lower is better
            finally:
                for each in matched:
                    scores[each] = 0.0
        if len(rows) > k:  # the rows at or under the k-th rank, then the stable sort of those few
            near = ranks <= np.partition(ranks, k - 1)[k - 1]
            rows, ranks = rows[near], ranks[near]
        order = np.argsort(ranks, kind="stable")[:k]  # ties in rowid order, as SQLite's sorter returns them
        return list(zip(self._rowids[rows[order]].tolist(), ranks[order].tolist(), strict=True))


def read_copy(conn: Connection, stamp: tuple[Any, ...] | None) -> KeywordCopy | None:
    """The keyword index as ``conn``'s snapshot holds it, or None: no index, an unfamiliar layout, fewer than
    KEYWORDS_FROM rows, or parts that do not add up (then FTS5 keeps answering)."""
    import numpy as np

    if stamp is None or stamp[0] is None or stamp[1] is None:
        return None
    row = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'nodes_fts'").fetchone()
    layout = _LAYOUT.fullmatch(row[0].strip()) if row is not None and row[0] else None
    if layout is None:
        return None
    averages = _varints(stamp[0])
    if len(averages) != 4 or averages[0] < KEYWORDS_FROM:  # rows, then the tokens of each of the three columns
        return None
    sizes = conn.execute("SELECT id, sz FROM nodes_fts_docsize ORDER BY id").fetchall()
    if len(sizes) != averages[0]:
        return None
    rowids = np.fromiter((r[0] for r in sizes), dtype=np.int64, count=len(sizes))
    # A length is the sum of a row's column sizes, varints: one byte each below 128, the common case — then the
    # sizes of every row are one array (three bytes a row); else each row's varints are read.
    packed = b"".join(r[1] for r in sizes)
    sized = np.frombuffer(packed, dtype=np.uint8)
    if len(packed) == 3 * len(sizes) and not (sized & 0x80).any():
        lengths = sized.reshape(-1, 3).sum(axis=1, dtype=np.int64).astype(np.float64)
    else:
        lengths = np.fromiter((sum(_varints(r[1])) for r in sizes), dtype=np.float64, count=len(sizes))
    if int(lengths.sum()) != sum(averages[1:]):
        return None
    made = _postings(conn, rowids)
    if made is None:
        return None
    spans, rows, counts = made
    return KeywordCopy(stamp, layout.group(1), rowids, lengths, sum(averages[1:]), spans, rows, counts)


def _postings(conn: Connection, rowids: Any) -> tuple[dict[str, tuple[int, int]], Any, Any] | None:  # noqa: ANN401
    """(term → [start, end) of its postings, rows, counts) from fts5vocab over the index: per term its rows and
    instance totals (``row``), and every instance's row, term by term and row by row (``instance``: one text, as a
    list of 1.3 M rows cost ~3x more at 100,000 memories). Temporary tables of this connection: nothing is written to
    the brain."""
    import numpy as np

    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.cerebro_terms USING fts5vocab(main, nodes_fts, row)")
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.cerebro_instances USING fts5vocab(main, nodes_fts, instance)")
    vocabulary = conn.execute("SELECT term, doc, cnt FROM temp.cerebro_terms").fetchall()
    listed = conn.execute("SELECT group_concat(doc, ',') FROM temp.cerebro_instances").fetchone()[0] or ""
    docs = np.fromstring(listed, dtype=np.int64, sep=",") if listed else np.zeros(0, dtype=np.int64)
    instances = np.fromiter((r[2] for r in vocabulary), dtype=np.int64, count=len(vocabulary))
    if int(instances.sum()) != len(docs):
        return None
    # Rowids near 1…N (the common case): found by a table, not a search.
    if len(rowids) and rowids[0] >= 0 and rowids[-1] <= 4 * len(rowids):
        place = np.full(int(rowids[-1]) + 1, len(rowids), dtype=np.int64)
        place[rowids] = np.arange(len(rowids))
        dense = place[np.clip(docs, 0, len(place) - 1)]
    else:
        dense = np.searchsorted(rowids, docs)
    if len(docs) and (dense.max() >= len(rowids) or not np.array_equal(rowids[dense], docs)):
        return None  # an instance in a row without a length
    starts = np.concatenate(([0], np.cumsum(instances)[:-1])) if len(instances) else np.zeros(0, dtype=np.int64)
    falling = np.diff(dense) < 0
    falling[starts[1:] - 1] = False  # a new term starts over
    if falling.any():
        return None  # a term's instances not in row order: not the order this reading relies on
    # A posting starts where the row changes or a term starts; its count is how many instances follow.
    first = np.ones(len(docs), dtype=bool)
    first[1:] = dense[1:] != dense[:-1]
    first[starts] = True
    begins = np.flatnonzero(first)
    counts = np.diff(np.append(begins, len(docs))).astype(np.float64)
    rows = dense[begins].astype(np.int32)
    offsets = np.searchsorted(begins, np.append(starts, len(docs)))
    documents = np.fromiter((r[1] for r in vocabulary), dtype=np.int64, count=len(vocabulary))
    if not np.array_equal(np.diff(offsets), documents):
        return None  # FTS5 counts the term's rows otherwise
    bounds = offsets.tolist()
    return {r[0]: (bounds[i], bounds[i + 1]) for i, r in enumerate(vocabulary)}, rows, counts


def _rows(stamp: tuple[Any, ...]) -> int:
    """The rows the keyword index holds, from its stamp's averages record (0 if unreadable)."""
    averages = _varints(stamp[0]) if isinstance(stamp[0], bytes) else []
    return averages[0] if averages else 0


def _varints(blob: bytes) -> list[int]:
    """SQLite's varints (FTS5's records are written in them), in order."""
    values, at = [], 0
    while at < len(blob):
        value = 0
        for place in range(9):
            byte = blob[at]
            at += 1
            if place == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        values.append(value)
    return values
