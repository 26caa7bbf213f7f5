"""An in-memory copy of a brain's vectors for long-lived processes (the Python API, servers).

sqlite-vec's KNN is an exact scan, ~90 ms over 100k × 384 floats here; a NumPy matrix product over the
same vectors takes a few milliseconds. Loading the matrix costs several scans, so a ``Brain`` builds it
only when it is used again (the second recall in the same process) and the brain is big enough to gain;
one-shot CLI calls never do. ``PRAGMA data_version`` tells when any other connection has committed: the
copy is then dropped and rebuilt on a later query (ADR 0009).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

MIN_VECTORS = 5_000  # below this, sqlite-vec's scan and point lookups are already fast enough


class WarmVectors:
    def __init__(self) -> None:
        self._version: int | None = None
        self._ids: list[str] = []
        self._rows: dict[str, int] = {}
        self._matrix: Any = None
        self.uses = 0

    def _current(self, conn: Any) -> bool:
        return self._matrix is not None and conn.execute("PRAGMA data_version").fetchone()[0] == self._version

    def ready(self, conn: Any) -> bool:
        """True when the copy is loaded and nothing has changed since; else drop it (and maybe rebuild)."""
        self.uses += 1
        if self._current(conn):
            return True
        self._matrix = None
        if self.uses < 2:
            return False
        count = conn.execute("SELECT COUNT(*) FROM nodes WHERE status = 'active'").fetchone()[0]
        if count < MIN_VECTORS:
            return False
        self._load(conn)
        return True

    def _load(self, conn: Any) -> None:
        import numpy as np

        version = conn.execute("PRAGMA data_version").fetchone()[0]
        rows = conn.execute("SELECT node_id, embedding FROM vec_nodes").fetchall()
        self._ids = [r[0] for r in rows]
        self._rows = {node_id: i for i, node_id in enumerate(self._ids)}
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), -1)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        self._matrix = matrix / np.clip(norms, 1e-12, None)
        self._version = version

    def knn(self, vector: Sequence[float], k: int) -> list[tuple[str, float]]:
        """[(node_id, cosine distance)], nearest first — the same answer as ``vec.knn``."""
        import numpy as np

        query = np.asarray(vector, dtype=np.float32)
        query /= max(float(np.linalg.norm(query)), 1e-12)
        similarity = self._matrix @ query
        k = min(k, len(self._ids))
        if k <= 0:
            return []
        top = np.argpartition(-similarity, k - 1)[:k]
        top = top[np.lexsort((top, -similarity[top]))]  # nearest first; ties in storage order
        return [(self._ids[i], float(1.0 - similarity[i])) for i in top]

    def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        """Unit vectors of these nodes — ``vec.vectors_for`` without a point lookup each (~0.2 ms apiece)."""
        return {i: self._matrix[self._rows[i]].tolist() for i in ids if i in self._rows}
