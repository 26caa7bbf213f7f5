"""The integer scan's k nearest come from the rows a sampled bar keeps, and are the k nearest of every row (issue 18).

Scoring every row's cosine and partitioning them cost ~0.35 ms a query at 100,000 memories; ``Int8Scan.nearest`` keeps
only the rows at or above a bar taken from a strided sample. These tests hold it to the answer over all rows — rows,
cosines and the order of ties — wherever the bar is too high, below zero, or cut through rows of equal cosine.
"""

from __future__ import annotations

import pytest

from cerebro.store import int8_scan, vec, warm

pytestmark = pytest.mark.file_only


def _rows(count: int, dims: int, seed: int):
    """int8 rows as the vector table stores them: each scaled to a largest component of ±127 (norms differ)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    return np.stack([vec.int8_values(v) for v in rng.normal(size=(count, dims))])


def _everywhere(scan, vector, k: int, removed=()) -> list[tuple[int, float]]:
    """[(row, cosine)] of the k nearest over all rows, by cosine then row: what ``nearest`` must give."""
    import numpy as np

    cosines = scan.cosines(vector).copy()
    cosines[list(removed)] = -np.inf
    order = [int(i) for i in np.lexsort((np.arange(len(cosines)), -cosines)) if cosines[i] > -np.inf]
    return [(i, float(cosines[i])) for i in order[:k]]


def _nearest(scan, vector, k: int, removed=()) -> tuple[list[tuple[int, float]], bool]:
    """([(row, cosine)] as the warm index takes them from ``nearest``, whether the bar chose the rows)."""
    rows, cosines = scan.nearest(vector, k, tuple(removed))
    top = warm._best(cosines, rows, k, removed=bool(removed))
    chosen = top if rows is None else rows[top]
    return [(int(r), float(cosines[i])) for r, i in zip(chosen, top, strict=True)], rows is not None


def _int8_index(rows) -> warm.WarmVectors:
    """A loaded warm index over these int8 rows (ids "n0", "n1", …), without a brain."""
    index = warm.WarmVectors()
    index._ids = [f"n{i}" for i in range(len(rows))]
    index._rows = {node_id: i for i, node_id in enumerate(index._ids)}
    index._matrix = warm._unit_rows(rows.astype("float32"))
    index._int8, index._int8_rows = True, rows
    return index


@pytest.fixture
def small_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(int8_scan, "SAMPLE_ROWS", 256)  # a stride of 15 over 4,000 rows: the bar path on small rows


def test_the_rows_above_the_bar_hold_the_k_nearest_of_every_row(small_sample) -> None:
    import numpy as np

    rows = _rows(4000, 32, seed=1)
    scan = int8_scan.build(rows)
    assert scan is not None
    rng = np.random.default_rng(2)
    queries = [rng.normal(size=32) for _ in range(12)] + [rows[7].astype(float), -rows[99].astype(float)]
    barred = 0
    for query in queries:
        for k in (1, 5, 40, 200):
            got, by_bar = _nearest(scan, query, k)
            assert got == _everywhere(scan, query, k)
            barred += by_bar
    assert barred >= 40  # the bar chose the rows nearly everywhere: the test compares that path


def test_removed_rows_are_never_among_the_nearest(small_sample) -> None:
    import numpy as np

    rows = _rows(4000, 32, seed=3)
    scan = int8_scan.build(rows)
    query = np.random.default_rng(4).normal(size=32)
    best = [row for row, _ in _everywhere(scan, query, 30)]
    removed = [*best[::2], 0, 1, 2]  # half of the true 30 nearest, and a few others
    got, by_bar = _nearest(scan, query, 30, removed)
    assert by_bar and not {row for row, _ in got} & set(removed)
    assert got == _everywhere(scan, query, 30, removed)


def test_a_bar_that_too_few_rows_reach_falls_back_to_every_row(small_sample) -> None:
    import numpy as np

    rows = _rows(4000, 32, seed=5)
    query = np.random.default_rng(6).normal(size=32)
    stride = len(rows) // int8_scan.SAMPLE_ROWS
    near = vec.int8_values(query)
    rows[::stride] = near  # every sampled row is the query itself: the bar is its cosine, which only they reach
    scan = int8_scan.build(rows)
    reach = len(rows[::stride])
    got, by_bar = _nearest(scan, query, reach + 50)
    assert not by_bar and len(got) == reach + 50
    assert got == _everywhere(scan, query, reach + 50)


def test_a_query_far_from_every_row_is_ranked_over_every_row(small_sample) -> None:
    import numpy as np

    rows = np.abs(_rows(4000, 32, seed=7))  # every component ≥ 0: an all-negative query has no positive cosine
    scan = int8_scan.build(rows)
    query = -np.ones(32)
    got, by_bar = _nearest(scan, query, 25)
    assert not by_bar and got == _everywhere(scan, query, 25)
    assert all(cosine <= 0 for _, cosine in got)


def test_rows_tied_at_the_cut_are_taken_in_storage_order_with_or_without_the_scan(monkeypatch) -> None:
    import numpy as np

    monkeypatch.setattr(int8_scan, "SCAN_FROM", 100)
    rows = _rows(6000, 32, seed=8)
    twin = rows[4321].copy()
    places = np.random.default_rng(9).choice(len(rows), size=300, replace=False)
    rows[places] = twin  # 301 rows of one vector: nearest to itself, all tied
    k = 120  # cuts through the tie
    float_index = _int8_index(rows.copy())  # no scan: the float32 product of every row
    scanned = _int8_index(rows.copy())
    scanned.prepare_scan()
    assert scanned._scan is not None and float_index._scan is None
    first = sorted({*places.tolist(), 4321})[:k]
    for found in (scanned.knn(twin.astype(float).tolist(), k), float_index.knn(twin.astype(float).tolist(), k)):
        assert [node_id for node_id, _ in found] == [f"n{i}" for i in first]
    assert scanned.knn(twin.astype(float).tolist(), 1) == [("n" + str(first[0]), pytest.approx(0.0, abs=1e-6))]


def test_the_bar_path_at_the_default_sample_size() -> None:
    import numpy as np

    rows = _rows(12_000, 48, seed=10)  # a stride of 5
    scan = int8_scan.build(rows)
    rng = np.random.default_rng(11)
    for query in [rng.normal(size=48) for _ in range(5)]:
        got, by_bar = _nearest(scan, query, 100)
        assert by_bar and got == _everywhere(scan, query, 100)
