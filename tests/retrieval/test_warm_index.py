"""The warm in-memory vector index gives exactly the answers of sqlite-vec's scan, and notices writes."""

from __future__ import annotations

import pytest

from cerebro.store import vec, warm


@pytest.fixture
def small_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(warm, "MIN_VECTORS", 1)


def test_warm_index_matches_the_vec0_scan(fake_brain, small_threshold) -> None:  # noqa: ANN001
    for i in range(40):
        fake_brain.add(f"memory number {i} about topic {i % 7} and thing {i % 3}")
    query = fake_brain._embed(["topic 3 thing 1"])[0]
    index = warm.WarmVectors()
    with fake_brain._snapshot() as conn:
        assert index.ready(conn) is False  # first use: not worth loading yet
        assert index.ready(conn) is True
        expected = vec.knn(conn, query, 15)
        got = index.knn(query, 15)
    assert [i for i, _ in got] == [i for i, _ in expected]
    assert [d for _, d in got] == pytest.approx([d for _, d in expected], abs=1e-5)


def test_warm_index_is_dropped_after_another_connection_writes(fake_brain, small_threshold) -> None:  # noqa: ANN001
    fake_brain.add("first")
    index = warm.WarmVectors()
    with fake_brain._snapshot() as conn:
        index.ready(conn)
        assert index.ready(conn) is True
    fake_brain.add("second")  # written through the engine: another connection
    with fake_brain._snapshot() as conn:
        assert index.ready(conn) is True  # rebuilt, now with both
        assert len(index.knn(fake_brain._embed(["x"])[0], 10)) == 2


def test_recall_is_the_same_with_the_warm_index(fake_brain, small_threshold) -> None:  # noqa: ANN001
    for i in range(30):
        fake_brain.add(f"note {i} on subject {i % 5}")
    first = fake_brain.recall("subject 2", limit=10)  # vec0 scan
    second = fake_brain.recall("subject 2", limit=10)  # warm index
    assert fake_brain.__dict__["_warm"]._matrix is not None
    assert first.ids == second.ids
