"""The vector lane's reading policy, seen through the store it reads: how deep the KNN looks, when it looks
deeper, which rows it reads, and that a warm index replaces the SQL reads rather than adding to them.

The answers are the user's contract (the nearest active memories of the wanted subtype above the threshold);
the depths are the speed promise ("only as deep as needed"): a lane that always read everything would give
the same answers and be slow on a big brain. Vectors come from the deterministic ``fake`` provider; the
store is the real SQLite store, with two of its calls recorded on the way through.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from cerebro import Brain, recall, scoring
from cerebro.recall import SUBTYPE_OVERFETCH, RecallOptions
from cerebro.store import warm

QUERY = "walrus tusk"
ANYTHING = -2.0  # a threshold every cosine passes: the tests below are about depth, not the gate


class _Through:
    """A store part passing every call through, except the ones given, which are recorded first."""

    def __init__(self, part: object, **recorded: Callable[..., Any]) -> None:
        self._part, self._recorded = part, recorded

    def __getattr__(self, name: str) -> Any:
        return self._recorded.get(name) or getattr(self._part, name)


class RecordingStore:
    """The brain's store (either engine), with the lane's KNN depths and node reads written down."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.knn_depths: list[int] = []
        self.node_reads: list[tuple[list[str], bool]] = []
        self.vectors = _Through(store.vectors, knn=self._knn, vectors_for=self._vectors_for)
        self.reads = _Through(store.reads, nodes_by_id=self._nodes_by_id)
        self.vector_reads = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def _knn(self, conn: Any, vector: Any, k: int) -> list[tuple[str, float]]:
        self.knn_depths.append(k)
        return self._store.vectors.knn(conn, vector, k)

    def _vectors_for(self, conn: Any, ids: list[str]) -> dict[str, list[float]]:
        self.vector_reads += 1
        return self._store.vectors.vectors_for(conn, ids)

    def _nodes_by_id(self, conn: Any, ids: Any, *, active_only: bool = False) -> dict[str, Any]:
        self.node_reads.append((list(ids), active_only))
        return self._store.reads.nodes_by_id(conn, ids, active_only=active_only)


class Lane:
    """``lane(width, **options)`` → the ids the vector lane returns for QUERY, nearest first; what it read
    is in ``lane.store`` (a fresh recording store each call)."""

    def __init__(self, brain: Brain, conn: Any) -> None:
        self.conn, self.query_vector = conn, brain.handle.embed([QUERY])[0]
        self.base = brain.handle.store
        self.store = RecordingStore(self.base)

    def __call__(self, width: int, **options: Any) -> list[str]:
        self.store = RecordingStore(self.base)
        found = recall.vector_lane(self.store, self.conn, self.query_vector, RecallOptions(**options), width)
        return [c.node.id for c in found]


@contextmanager
def lane(brain: Brain) -> Iterator[Lane]:
    with brain.handle.snapshot() as conn:
        yield Lane(brain, conn)


def test_the_first_pass_reads_twice_the_width_or_ten_times_with_a_subtype(fake_brain: Brain) -> None:
    for i in range(30):
        fake_brain.add(f"walrus tusk item{i}", subtype="x")
    with lane(fake_brain) as run:
        assert len(run(3, threshold=ANYTHING)) == 3
        assert run.store.knn_depths == [6]
        assert len(run(2, threshold=ANYTHING, subtype="x")) == 2
        assert run.store.knn_depths == [2 * SUBTYPE_OVERFETCH]


def test_rows_are_read_only_as_deep_as_the_width_when_those_are_usable(fake_brain: Brain) -> None:
    ids = [fake_brain.add(f"walrus tusk {'ivory ' * i}") for i in range(10)]  # nearest first
    with lane(fake_brain) as run:
        assert run(2, threshold=ANYTHING) == ids[:2]
        assert run.store.node_reads == [(ids[:2], True)]  # not the other two the KNN returned


def test_no_second_row_read_when_nothing_is_left_past_the_width(fake_brain: Brain) -> None:
    gone = fake_brain.add("walrus tusk")  # 1.0, superseded below
    kept = fake_brain.add("walrus tusk ivory")  # 0.82
    fake_brain.supersede(gone, "narwhal horn")  # its replacement: cosine 0, under the threshold
    with lane(fake_brain) as run:
        assert run(2, threshold=0.5) == [kept]
        assert run.store.node_reads == [([gone, kept], True)]


def test_past_the_width_only_active_rows_of_the_subtype_are_used(fake_brain: Brain) -> None:
    """The first read (the width) yields nothing of the subtype: the rest of the page is read, active only."""
    fake_brain.add("walrus tusk")  # nearest, but no subtype
    gone = fake_brain.add("walrus tusk ivory", subtype="x")  # next, but superseded
    wanted = fake_brain.add("walrus tusk ivory arctic", subtype="x")
    fake_brain.supersede(gone, "narwhal horn")  # cosine 0: under the threshold
    with lane(fake_brain) as run:
        assert run(1, threshold=0.5, subtype="x") == [wanted]


def test_a_match_below_the_first_page_is_found_by_one_deeper_pass(fake_brain: Brain) -> None:
    for i in range(12):
        fake_brain.add(f"walrus tusk item{i}")  # nearer than the match, no subtype
    deep = fake_brain.add("zulu yankee", subtype="x")  # cosine 0: thirteenth
    with lane(fake_brain) as run:
        assert run(1, threshold=ANYTHING, subtype="x") == [deep]
        assert run.store.knn_depths == [SUBTYPE_OVERFETCH, 4 * SUBTYPE_OVERFETCH]


def test_the_search_stops_as_soon_as_the_width_is_filled(fake_brain: Brain) -> None:
    first = fake_brain.add("walrus tusk", subtype="x")  # the one match, nearest of all
    for i in range(12):
        fake_brain.add(f"walrus tusk item{i}")
    with lane(fake_brain) as run:
        assert run(1, threshold=ANYTHING, subtype="x") == [first]
        assert run.store.knn_depths == [SUBTYPE_OVERFETCH]


def test_the_search_stops_when_the_brain_has_no_more_neighbours(fake_brain: Brain) -> None:
    for i in range(5):
        fake_brain.add(f"walrus tusk item{i}")  # fewer than a page, none of the subtype
    with lane(fake_brain) as run:
        assert run(1, threshold=ANYTHING, subtype="x") == []
        assert run.store.knn_depths == [SUBTYPE_OVERFETCH]


def test_the_search_stops_when_the_rest_is_under_the_threshold(fake_brain: Brain) -> None:
    for i in range(30):
        fake_brain.add(f"zulu yankee item{i}")  # cosine 0: a full page, all under the gate
    with lane(fake_brain) as run:
        assert run(1, threshold=0.5, subtype="x") == []
        assert run.store.knn_depths == [SUBTYPE_OVERFETCH]


def test_the_search_gives_up_at_forty_times_the_width(fake_brain: Brain) -> None:
    """An unmatched subtype in a big brain: a page of 10×, one of 40×, then no deeper (not the whole brain)."""
    for i in range(45):
        fake_brain.add(f"walrus tusk item{i}")
    with lane(fake_brain) as run:
        assert run(1, threshold=ANYTHING, subtype="x") == []
        assert run.store.knn_depths == [SUBTYPE_OVERFETCH, 4 * SUBTYPE_OVERFETCH]


def test_a_similarity_exactly_at_the_threshold_passes(fake_brain: Brain) -> None:
    nearest = fake_brain.add("walrus tusk ivory")
    fake_brain.add("zulu yankee")
    query_vector = fake_brain.handle.embed([QUERY])[0]
    with fake_brain.handle.snapshot() as conn:
        (hit, distance), *_ = fake_brain.handle.store.vectors.knn(conn, query_vector, 1)
    assert hit == nearest
    at = 1.0 - distance  # the lane's own arithmetic: this is the similarity it compares
    assert at == pytest.approx(math.sqrt(2 / 3), abs=1e-5)
    with lane(fake_brain) as run:
        assert run(5, threshold=at) == [nearest]
        assert run(5, threshold=math.nextafter(at, 2.0)) == []


@pytest.mark.file_only  # the warm index is a copy of the brain file's vectors (a team brain searches on the server)
def test_a_warm_index_answers_without_reading_vectors_from_sql(fake_brain: Brain) -> None:
    ids = [fake_brain.add(f"walrus tusk {'ivory ' * i}") for i in range(6)]
    index = warm.WarmVectors()
    with fake_brain.handle.snapshot() as conn:
        assert index.load(conn)
    with lane(fake_brain) as run:
        cold = run(3, threshold=0.3)
        assert run.store.knn_depths == [6]
        assert run(3, threshold=0.3, warm=index) == cold == ids[:3]
        assert run.store.knn_depths == []  # the index answered
        with fake_brain.handle.snapshot() as conn:
            options = RecallOptions(warm=index)
            from_index = recall.vectors_of(run.store, conn, options, ids[:2])
            assert run.store.vector_reads == 0
            from_sql = recall.vectors_of(run.store, conn, RecallOptions(), ids[:2])
            assert run.store.vector_reads == 1
    assert from_index.keys() == from_sql.keys() == set(ids[:2])
    for node_id in ids[:2]:
        assert from_index[node_id] == pytest.approx(from_sql[node_id], abs=1e-6)


# ----------------------------------------------------------------------------- graph expansion


SEEDS = ("walrus tusk ivory arctic", "walrus tusk ivory arctic ocean", "walrus tusk ivory arctic ocean fish")


def test_a_result_linked_to_two_others_keeps_its_strongest_edge(fake_brain: Brain) -> None:
    """Cosines 0.71, 0.63, 0.58: under the expansion gate, all three results. The weaker edge is read last."""
    a, b, c = (fake_brain.add(text) for text in SEEDS)
    fake_brain.add_edge(a, b, "relates_to", weight=0.9)
    fake_brain.add_edge(a, c, "relates_to", weight=0.3)
    result = fake_brain.recall(QUERY)
    assert result.expansion == "expanded"
    structural = {r.node.id: r.parts.structural for r in result}
    assert structural == pytest.approx({a: 0.9, b: 0.9, c: 0.3})


def test_a_neighbour_cited_often_keeps_its_in_degree_over_a_weak_edge(fake_brain: Brain) -> None:
    seed = fake_brain.add(SEEDS[0])
    neighbour = fake_brain.add("zulu yankee xray")
    fake_brain.add_edge(seed, neighbour, "relates_to", weight=0.1)
    for text in ("oscar papa", "romeo sierra", "uniform victor"):
        fake_brain.add_edge(fake_brain.add(text), neighbour, "supports", weight=0.2)
    result = fake_brain.recall(QUERY)
    assert result.expansion == "expanded"
    hit = next(r for r in result if r.node.id == neighbour)
    assert hit.similarity == 0.0
    assert hit.parts.structural == pytest.approx(scoring.indegree_structural(3))  # 0.58, not the edge's 0.1
    fake_brain.config_set("indegree_bonus_enabled", "false")
    hit = next(r for r in fake_brain.recall(QUERY) if r.node.id == neighbour)
    assert hit.parts.structural == pytest.approx(0.1)
