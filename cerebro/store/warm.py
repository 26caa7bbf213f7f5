"""An in-memory copy of a brain's vectors for long-lived processes (the Python API, servers).

sqlite-vec's KNN is an exact scan, ~90 ms over 100k × 384 floats here; a NumPy matrix product over the
same vectors takes a few milliseconds. Loading the matrix costs several scans, so a ``Brain`` builds it
only when it is used again (the second recall in the same process) and the brain is big enough to gain;
one-shot CLI calls never do. ``PRAGMA data_version`` tells when any other connection has committed: the
copy is then dropped and rebuilt on a later query (ADR 0009).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cerebro.db.types import Connection

# Below this, loading buys nothing measurable. Above it, a long-lived process's recall saves the scan and ~50 vector
# point lookups a query: 4.9 → 1.9 ms of CPU at 1,000 memories (issue 18; it was 5,000 before, from a time when
# the copy cost more to keep than it saved).
MIN_VECTORS = 200
# From this many vectors a KNN query first shortlists rows by the Hamming distance between sign bits (48 bytes a
# vector, ~1 ms over 100k), then ranks the shortlist exactly: the exact scan reads every float (~9 ms wall and
# ~16 ms CPU at 100k, OpenBLAS threads included) and its cost grows with the brain. The shortlist is
# SHORTLIST_PER_K × k rows deep, at least SHORTLIST_MIN; at 100k memories it holds 99.9 % of the exact top 20
# (ADR 0032).
SHORTLIST_FROM = 20_000
SHORTLIST_MIN = 4_000
SHORTLIST_PER_K = 40


class WarmVectors:
    def __init__(self) -> None:
        self._version: int | None = None
        self._ids: list[str] = []
        self._rows: dict[str, int] = {}
        self._matrix: Any = None
        # Changes applied since the load (apply): vectors added after it, rows whose vector is gone.
        self._extra_ids: list[str] = []
        self._extra_rows: dict[str, int] = {}
        self._extra: Any = None  # (capacity × dims) float32, the first len(_extra_ids) rows in use
        self._removed: set[int] = set()  # row numbers in _matrix
        self._int8 = False  # the table stores int8 (ADR 0029): rows and KNN queries are int8 values too
        self._signs: Any = None  # (words × rows) uint64: each row's sign bits around _sign_origin (big brains only)
        self._sign_origin: Any = None
        # int8 storage: the rows as stored, until the exact integer scan (int8_scan, ADR 0040) is built from them or
        # refused; the scan is built by prepare_scan (a recall after the loading one, or a server's loader thread).
        # Once it is built (or while it is being built) a rewritten row moves to the extras: the scan holds the row.
        import threading

        self._int8_rows: Any = None
        self._scan: Any = None
        self._scan_lock = threading.Lock()
        self.uses = 0

    def __len__(self) -> int:
        """Vectors loaded (0 before a load or after a drop)."""
        return len(self._ids) + len(self._extra_ids) if self._matrix is not None else 0

    def _current(self, conn: Connection) -> bool:
        return self._matrix is not None and conn.execute("PRAGMA data_version").fetchone()[0] == self._version

    def ready(self, conn: Connection) -> bool:
        """True when the copy is loaded and nothing has changed since; else drop it (and maybe rebuild)."""
        self.uses += 1
        if self._current(conn):
            self.prepare_scan()  # this load serves a second recall: worth the scan
            return True
        self._matrix = self._scan = self._int8_rows = None
        if self.uses < 2:
            return False
        count = conn.execute("SELECT COUNT(*) FROM nodes WHERE status = 'active'").fetchone()[0]
        if count < MIN_VECTORS:
            return False
        return self.load(conn)

    def load(self, conn: Connection) -> bool:
        """Load every vector; False (nothing loaded) for an empty table."""
        import numpy as np

        from cerebro.store import vec

        version = conn.execute("PRAGMA data_version").fetchone()[0]
        dtype = "i1" if vec.element(conn) == vec.INT8 else "<f4"  # as stored (ADR 0029)
        stored = _shadow_rows(conn, dtype)
        if stored is None:
            rows = conn.execute("SELECT node_id, embedding FROM vec_nodes").fetchall()
            if not rows:
                return False
            stored = (
                [r[0] for r in rows],
                np.frombuffer(b"".join(r[1] for r in rows), dtype=dtype).reshape(len(rows), -1),
            )
        self._ids, matrix = stored  # never empty: the fast read gives None for a brain without vectors
        self._rows = {node_id: i for i, node_id in enumerate(self._ids)}
        self._matrix = _unit_rows(matrix.astype(np.float32, copy=False))
        self._int8 = dtype == "i1"
        # Kept writable (a rewrite before the scan is built changes its row): the fast read's rows are a fresh array.
        self._scan = None
        self._int8_rows = (matrix if matrix.flags.writeable else matrix.copy()) if self._int8 else None
        self._index_signs()
        self._extra_ids, self._extra_rows, self._extra, self._removed = [], {}, None, set()
        self._version = version
        return True

    def _index_signs(self) -> None:
        """The sign bits the shortlist reads, for a brain of SHORTLIST_FROM vectors or more (else none)."""
        self._signs = self._sign_origin = None
        if len(self._ids) >= SHORTLIST_FROM:
            # Signs around the mean row: the bits of uncentered vectors are much the same everywhere (every memory
            # shares the model's common direction) and would say little about which rows are near.
            import numpy as np

            self._sign_origin = self._matrix.mean(axis=0)
            blocks = [  # a block at a time: no second copy of the whole matrix
                _sign_words(self._matrix[start : start + 16384] - self._sign_origin)
                for start in range(0, len(self._ids), 16384)
            ]
            self._signs = np.ascontiguousarray(np.concatenate(blocks).T)  # words × rows: each word one run

    def apply(self, written: dict[str, Sequence[float] | None]) -> None:
        """Bring the loaded copy up to date with writes it did not load: {node_id: new vector, or None when
        the vector was deleted}. Idempotent: applying a change twice, or one the load already saw, is
        harmless. The caller knows these writes happened (its own commits); other processes' commits are
        caught by data_version."""
        import numpy as np

        if self._matrix is None:
            return
        for node_id, vector in written.items():
            row = self._rows.get(node_id)
            if vector is None:
                if row is not None:
                    self._removed.add(row)
                self._drop_extra(node_id)
                continue
            unit = _unit_rows(self._as_stored(vector)[None, :])[0]
            if unit.shape[0] != self._matrix.shape[1]:
                continue  # another model's width: the next full load sorts it out
            if row is not None:
                with self._scan_lock:  # not while a scan is being built from the rows
                    if self._scan is None:
                        self._matrix[row] = unit
                        if self._int8_rows is not None:
                            from cerebro.store.vec import int8_values

                            self._int8_rows[row] = int8_values(vector)
                        if self._signs is not None:  # else the shortlist would look for the row where it used to be
                            self._signs[:, row] = _sign_words((unit - self._sign_origin)[None, :])[0]
                        self._removed.discard(row)
                        continue
                self._removed.add(row)  # the scan holds the row as loaded: the new vector becomes an extra
            extra = self._extra_rows.get(node_id)
            if extra is None:
                extra = len(self._extra_ids)
                if self._extra is None or extra == len(self._extra):
                    grown = np.zeros((max(16, 2 * extra), self._matrix.shape[1]), dtype=np.float32)
                    if self._extra is not None:
                        grown[:extra] = self._extra[:extra]
                    self._extra = grown
                self._extra_ids.append(node_id)
                self._extra_rows[node_id] = extra
            self._extra[extra] = unit

    def _as_stored(self, vector: Sequence[float]) -> Any:  # noqa: ANN401 - a numpy vector
        """``vector`` as float32 — as the table gives it back (``vec``'s own int8 round trip, when it is int8)."""
        from cerebro.store import vec

        return vec.as_stored_array(vector, vec.INT8 if self._int8 else vec.FLOAT)

    def _drop_extra(self, node_id: str) -> None:
        extra = self._extra_rows.pop(node_id, None)
        if extra is None:
            return
        last = len(self._extra_ids) - 1
        if extra != last:  # move the last one into the hole
            moved = self._extra_ids[last]
            self._extra[extra] = self._extra[last]
            self._extra_ids[extra] = moved
            self._extra_rows[moved] = extra
        self._extra_ids.pop()

    def knn(self, vector: Sequence[float], k: int) -> list[tuple[str, float]]:
        """[(node_id, cosine distance)], nearest first — the same answer as ``vec.knn``: exact integer products over
        an int8 brain's rows once its scan is built (ADR 0040), else a float32 product; on a big brain without the scan,
        the exact order of a sign-bit shortlist (which holds the exact answer but for a rare straggler, ADR 0032)."""
        import numpy as np

        scan, extras = self._scan, len(self._extra_ids)  # read once: another thread may apply writes meanwhile
        gone = tuple(self._removed)  # once, too
        query = None
        if scan is None or extras:  # the float32 rows' query (the scan rounds its own)
            query = self._as_stored(vector)  # sqlite-vec compares the int8 query with int8 rows: so does this
            query /= max(float(np.linalg.norm(query)), 1e-12)
        if scan is not None:  # exact, every row: no shortlist; the rows that can be among the k, removed ones not
            rows, similarity = scan.nearest(vector, k, gone)
        else:
            rows = self._shortlist(query, k)
            similarity = _products(self._matrix if rows is None else self._matrix[rows], query)
            if gone:
                if rows is None:
                    similarity[list(gone)] = -np.inf
                else:
                    similarity[np.isin(rows, gone)] = -np.inf
        if extras:
            base = len(self._ids)
            similarity = np.concatenate([similarity, _products(self._extra[:extras], query)])
            rows = np.concatenate([np.arange(len(self._ids)) if rows is None else rows, np.arange(base, base + extras)])
        top = _best(similarity, rows, k, removed=bool(gone))
        base = len(self._ids)
        return [
            (self._ids[r] if r < base else self._extra_ids[r - base], float(1.0 - similarity[i]))
            for r, i in zip((top if rows is None else rows[top]).tolist(), top.tolist(), strict=True)
        ]

    def prepare_scan(self) -> None:
        """Build the exact integer scan of the loaded int8 rows, once a load (~20 ms at 10k memories, ~200 ms at 100k,
        so not for a load that serves one recall); a refusal is not tried again before the next load. One build at a
        time: a thread that finds one under way goes on with the float32 product."""
        from cerebro.store import int8_scan

        if self._scan is not None or self._int8_rows is None or len(self._ids) < int8_scan.SCAN_FROM:
            return
        if not self._scan_lock.acquire(blocking=False):
            return
        try:
            if self._scan is None and self._int8_rows is not None:
                self._scan = int8_scan.build(self._int8_rows)
                self._int8_rows = None  # the scan holds its own copy, and a refused one needs them no more
        finally:
            self._scan_lock.release()

    def _shortlist(self, query: Any, k: int) -> Any:  # noqa: ANN401 - numpy arrays
        """Row numbers whose sign bits are nearest the query's (ties at the cut all kept), or None: scan all."""
        import numpy as np

        depth = max(SHORTLIST_MIN, SHORTLIST_PER_K * k)
        if self._signs is None or depth >= len(self._ids):
            return None
        bits = _sign_words((query - self._sign_origin)[None, :])[0]
        distance = np.bitwise_count(self._signs[0] ^ bits[0]).astype(np.uint16)
        for word in range(1, len(bits)):
            distance += np.bitwise_count(self._signs[word] ^ bits[word])
        if self._removed:  # removed rows last, so that they take no place in the shortlist
            distance[np.fromiter(self._removed, dtype=np.int64)] = 64 * len(bits) + 1
        # The cut by counting (the smallest distance with `depth` rows at or under it): no sort of every row.
        cut = int(np.searchsorted(np.cumsum(np.bincount(distance)), depth))
        return np.flatnonzero(distance <= cut)

    def _vector(self, node_id: str) -> Any:  # noqa: ANN401 - a numpy row
        """The node's unit vector (a row of the loaded matrix or of the rows added since), or None."""
        extra = self._extra_rows.get(node_id)
        if extra is not None:
            return self._extra[extra]
        row = self._rows.get(node_id)
        return self._matrix[row] if row is not None and row not in self._removed else None

    def gather(self, ids: Sequence[str]) -> Gathered:
        """The unit vectors of those of ``ids`` that have one, as the rows of one matrix: one fancy index into the
        loaded matrix while no write has changed it (a row view a node and ``np.stack`` cost ~0.1 ms a recall at 10k
        memories); row by row after one."""
        import numpy as np

        if self._extra_rows or self._removed:
            pairs = [(node_id, row) for node_id in ids if (row := self._vector(node_id)) is not None]
            return Gathered([node_id for node_id, _ in pairs], np.stack([row for _, row in pairs]) if pairs else None)
        index = self._rows
        found = [node_id for node_id in ids if node_id in index]
        return Gathered(found, self._matrix[[index[node_id] for node_id in found]] if found else None)

    def dots(self, ids: Sequence[str], vector: Sequence[float]) -> dict[str, float]:
        """{node_id: unit vector · ``vector``} for the nodes that have a vector, in one matrix product (the Python loop
        cost ~2 ms a recall at 10k memories)."""
        return self.gather(ids).dots(vector)

    def pair_dots(self, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], float]:
        """{(a, b): a's unit vector · b's} for the pairs whose two nodes have a vector, in one product: the adjacency
        step's relatedness checks (ADR 0033) without a list of 384 floats per node and a Python loop per pair."""
        import numpy as np

        gathered = self.gather(list(dict.fromkeys(node_id for pair in pairs for node_id in pair)))
        position = {node_id: k for k, node_id in enumerate(gathered.ids)}
        kept = [(a, b) for a, b in pairs if a in position and b in position]
        if not kept:
            return {}
        left = gathered.matrix[[position[a] for a, _ in kept]]
        right = gathered.matrix[[position[b] for _, b in kept]]
        return dict(zip(kept, np.einsum("ij,ij->i", left, right).tolist(), strict=True))

    def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        """Unit vectors of these nodes — ``vec.vectors_for`` without a point lookup each (~0.2 ms apiece)."""
        return {node_id: row.tolist() for node_id in ids if (row := self._vector(node_id)) is not None}


class Gathered:
    """Some nodes' unit vectors, gathered once from a warm index (:meth:`WarmVectors.gather`) for several products."""

    def __init__(self, ids: list[str], matrix: Any) -> None:  # noqa: ANN401 - a NumPy matrix (rows × dims), or None
        self.ids, self.matrix = ids, matrix

    def dots(self, vector: Sequence[float]) -> dict[str, float]:
        """{node_id: its unit vector · ``vector``}."""
        import numpy as np

        if self.matrix is None:
            return {}
        return dict(zip(self.ids, _products(self.matrix, np.asarray(vector, dtype=np.float32)).tolist(), strict=True))


def _unit_rows(matrix: Any) -> Any:  # noqa: ANN401 - a numpy matrix; numpy is imported only where it is used
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.clip(norms, 1e-12, None)).astype(np.float32, copy=False)


def _products(matrix: Any, vector: Any) -> Any:  # noqa: ANN401 - numpy arrays
    """matrix @ vector in NumPy's own loop rather than OpenBLAS: OpenBLAS threads a product of more than a few
    thousand rows, and its second thread then spins idle for a while; at 10k memories a recall took 17–24 ms of
    process CPU for 8–11 ms of its own thread, and the einsum loop costs that thread ~1–3 ms more (ADR 0032)."""
    import numpy as np

    return np.einsum("ij,j->i", matrix, vector)


def _best(similarity: Any, rows: Any, k: int, *, removed: bool) -> Any:  # noqa: ANN401 - NumPy arrays
    """Positions of the ``k`` largest similarities (a removed row's, -inf, never), largest first; ties — at the cut
    too — in storage order (``rows``, or the positions themselves when every row was scored)."""
    import numpy as np

    # Only a removed row is -inf: without one, every row counts (no pass over them all to find out).
    k = min(k, int(np.count_nonzero(similarity > -np.inf)) if removed else len(similarity))
    if k <= 0:
        return np.empty(0, dtype=np.intp)
    if k < len(similarity):  # the k-th value by a partition of the values alone (twice as fast as of positions)
        kth = np.partition(similarity, len(similarity) - k)[len(similarity) - k]
        keep = np.flatnonzero(similarity >= kth)  # every row tied with the k-th, so that storage order decides
    else:
        keep = np.arange(len(similarity))
    order = keep if rows is None else rows[keep]
    return keep[np.lexsort((order, -similarity[keep]))][:k]


def _sign_words(matrix: Any) -> Any:  # noqa: ANN401 - numpy arrays
    """Each row's sign bits, packed into 64-bit words (rows × words), zero-padded to a whole word."""
    import numpy as np

    packed = np.packbits(matrix > 0, axis=1)
    pad = -packed.shape[1] % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(packed).view(np.uint64)


def _shadow_rows(conn: Connection, dtype: str = "<f4") -> tuple[list[str], Any] | None:
    """Every (node id, vector) read straight from sqlite-vec's own tables, in the virtual table's scan order:
    a few chunk blobs instead of one row extraction per vector (~15 ms instead of ~220 ms at 10k here). The
    layout is sqlite-vec 0.1's: ``vec_nodes_chunks`` (slots per chunk, a validity bitmap, int64 rowids),
    ``vec_nodes_vector_chunks00`` (the chunk's vectors, of numpy ``dtype``), ``vec_nodes_metadatatext00`` (node
    ids longer than the inline prefix). Anything else — another version, an id not found there, a count or a sampled
    vector that differs from what the virtual table says — gives None: the caller reads through the table."""
    import numpy as np

    try:
        info = dict(conn.execute("SELECT key, value FROM vec_nodes_info").fetchall())
        if (info.get("CREATE_VERSION_MAJOR"), info.get("CREATE_VERSION_MINOR")) != (0, 1):
            return None
        names = dict(conn.execute("SELECT rowid, data FROM vec_nodes_metadatatext00").fetchall())
        blobs = dict(conn.execute("SELECT rowid, vectors FROM vec_nodes_vector_chunks00").fetchall())
        ids: list[str] = []
        rowids: list[int] = []
        parts = []
        for chunk_id, size, validity, chunk_rowids in conn.execute(
            "SELECT chunk_id, size, validity, rowids FROM vec_nodes_chunks ORDER BY chunk_id"
        ).fetchall():
            # A chunk that does not add up (no vector blob, a size that does not divide it, a bitmap or rowid
            # list of another length) makes numpy raise below: the except turns that into None.
            valid = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")[:size].astype(bool)
            kept = [int(r) for r in np.frombuffer(chunk_rowids, dtype="<i8")[valid]]
            rowids += kept
            ids += [names.get(r) for r in kept]  # type: ignore[misc]  # a None is caught just below
            parts.append(np.frombuffer(blobs[chunk_id], dtype=dtype).reshape(size, -1)[valid])
        if any(i is None for i in ids):
            return None
        if conn.execute("SELECT COUNT(*) FROM vec_nodes_rowids").fetchone()[0] != len(ids):
            return None
        matrix = np.concatenate(parts)  # no chunk at all (an empty brain) raises: the virtual table is read
        for index in sorted({0, len(ids) // 2, len(ids) - 1}):
            row = conn.execute("SELECT node_id, embedding FROM vec_nodes WHERE rowid = ?", (rowids[index],)).fetchone()
            if row is None or row[0] != ids[index] or bytes(row[1]) != matrix[index].tobytes():
                return None
        return ids, matrix
    except Exception:  # noqa: BLE001 - a layout we do not know: read through the virtual table
        return None
