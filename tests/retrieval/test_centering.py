"""Centering (ADR 0010): the vector query moves away from the brain's mean vector, so memories that
resemble every other memory stop crowding the vector lane. Fake vectors are hashed bags of words."""

from __future__ import annotations

import pytest

from cerebro import recall, scoring
from tests.fakes import hashed_vector

QUERY = "atlas team deploy"
HUB = "atlas team note"  # what every memory of this brain says: raw cosine 0.667 with QUERY
TARGET = "deploy runbook"  # the one memory about deploying: raw cosine 0.408
FILLER = [f"atlas team note item{i}" for i in range(recall.CENTERING_MIN)]


def test_center_demotes_what_the_mean_resembles():
    mean = hashed_vector(HUB)
    query = hashed_vector(QUERY)
    centered = scoring.center(query, mean, 1.0)
    assert scoring.cosine(query, hashed_vector(HUB)) > scoring.cosine(query, hashed_vector(TARGET))
    assert scoring.cosine(centered, hashed_vector(HUB)) < scoring.cosine(centered, hashed_vector(TARGET))
    assert sum(x * x for x in centered) == pytest.approx(1.0)
    assert scoring.center(query, query, 1.0) == query  # nothing left: the query unchanged


def test_mean_vector_needs_enough_vectors(fake_brain):
    fake_brain.add_many([{"content": text} for text in FILLER[:3]])
    with fake_brain.handle.snapshot() as conn:
        assert fake_brain.handle.store.vectors.mean_vector(conn, 256, 4) is None
        mean = fake_brain.handle.store.vectors.mean_vector(conn, 256, 3)
    expected = [sum(column) / 3 for column in zip(*(hashed_vector(t) for t in FILLER[:3]), strict=True)]
    assert mean == pytest.approx(expected, abs=1e-6)


def _vector_order(brain):
    return [r.node.content for r in brain.recall(QUERY, lanes=("vector",))]


def test_centering_lets_the_specific_memory_beat_the_hub(fake_brain):
    fake_brain.add_many([{"content": text} for text in [*FILLER, HUB, TARGET]])
    fake_brain.config_set("centering", "0")
    plain = _vector_order(fake_brain)
    assert HUB in plain[:3] and TARGET not in plain[:10]  # the fillers (0.577) all beat the target (0.408)
    fake_brain.config_set("centering", "1")
    centered = _vector_order(fake_brain)
    assert centered[0] == TARGET
    # The reported similarity stays the cosine to the query as asked.
    hit = next(r for r in fake_brain.recall(QUERY, lanes=("vector",)) if r.node.content == TARGET)
    assert hit.similarity == pytest.approx(scoring.cosine(hashed_vector(QUERY), hashed_vector(TARGET)), abs=1e-6)


def test_threshold_keeps_its_meaning_under_centering(fake_brain):
    fake_brain.add_many([{"content": text} for text in [*FILLER, HUB, TARGET]])
    fake_brain.config_set("recall_threshold", "0.5")  # the target's raw cosine is 0.408
    results = fake_brain.recall(QUERY, lanes=("vector",))
    assert TARGET not in [r.node.content for r in results]
    assert all(r.similarity >= 0.5 for r in results)


def test_small_brains_are_not_centered(fake_brain):
    fake_brain.add_many([{"content": text} for text in [HUB, TARGET]])
    assert _vector_order(fake_brain) == [HUB, TARGET]


@pytest.mark.file_only  # SQLite's data_version tells of other writers; a team brain re-reads its mean each minute
def test_the_brain_keeps_its_mean_until_a_write_and_a_minute(fake_brain, monkeypatch):
    from cerebro.brain import handle as retrieval_handle

    fake_brain.add_many([{"content": text} for text in FILLER])
    with fake_brain.handle.snapshot() as conn:
        first = fake_brain.handle.brain_mean(conn)
        assert fake_brain.handle.brain_mean(conn) is first  # cached
    fake_brain.add(TARGET)
    with fake_brain.handle.snapshot() as conn:
        assert fake_brain.handle.brain_mean(conn) is first  # a write within the minute: still the cached mean
    monkeypatch.setattr(retrieval_handle, "MEAN_TTL_SECONDS", 0.0)  # ... the minute has passed
    with fake_brain.handle.snapshot() as conn:
        second = fake_brain.handle.brain_mean(conn)
        assert second != first
        assert second == pytest.approx(
            fake_brain.handle.store.vectors.mean_vector(conn, recall.CENTERING_SAMPLE, recall.CENTERING_MIN)
        )
        assert fake_brain.handle.brain_mean(conn) is second  # no write since: cached again


def test_the_vector_shifts_give_the_same_answer_on_lists_and_numpy_arrays() -> None:
    import numpy as np

    rng = np.random.default_rng(23)
    query, mean = rng.normal(size=16).tolist(), rng.normal(size=16).tolist()
    tops = rng.normal(size=(3, 16)).tolist()
    as_array = np.asarray(query, dtype=np.float64)
    assert scoring.center(as_array, mean, 1.0).tolist() == pytest.approx(scoring.center(query, mean, 1.0))
    assert scoring.feedback(as_array, tops, 0.7).tolist() == pytest.approx(scoring.feedback(query, tops, 0.7))
    assert scoring.feedback(as_array, [], 0.7) is as_array  # no feedback documents: the query as it was
    assert scoring.center(as_array, query, 1.0) is as_array  # nothing left: the query unchanged
    from_tuple = scoring.center(tuple(query), mean, 1.0)  # a tuple takes the list path: a list back
    assert isinstance(from_tuple, list) and from_tuple == pytest.approx(scoring.center(query, mean, 1.0))
    with pytest.raises(ValueError):
        scoring.shift(as_array, [1.0], 0.5)  # as the list path refuses it: no broadcasting
    with pytest.raises(ValueError):
        scoring.shift(query, [1.0], 0.5)
