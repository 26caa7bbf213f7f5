"""The warm in-memory vector index gives exactly the answers of sqlite-vec's scan, and notices writes."""

from __future__ import annotations

import pytest

from cerebro.store import vec, warm

# The warm index is a copy of a brain file's sqlite-vec lane; a team brain searches on the server (ADR 0030).
pytestmark = pytest.mark.file_only


@pytest.fixture
def small_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(warm, "MIN_VECTORS", 1)


@pytest.mark.parametrize("integer_scan", [False, True])
def test_warm_index_matches_the_vec0_scan(fake_brain, small_threshold, monkeypatch, integer_scan: bool) -> None:
    from cerebro.store import int8_scan

    monkeypatch.setattr(int8_scan, "SCAN_FROM", 1 if integer_scan else 10**9)
    words = [
        "amber",
        "basil",
        "cedar",
        "delta",
        "ember",
        "fjord",
        "garnet",
        "harbor",
        "iris",
        "juniper",
        "kelp",
        "lumen",
    ]
    for i in range(40):  # distinct word pairs: distinct vectors, so no ties decide the order
        fake_brain.add(f"{words[i % 12]} {words[(i * 5 + 1) % 12]} item{i}")
    query = fake_brain.handle.embed(["cedar harbor"])[0]
    index = warm.WarmVectors()
    with fake_brain.handle.snapshot() as conn:
        assert index.ready(conn) is False  # first use: not worth loading yet
        assert index.ready(conn) is True
        expected = vec.knn(conn, query, 15)
        got = index.knn(query, 15)
        assert index._int8  # brains store int8 vectors (ADR 0029)
        if integer_scan:  # the scan is built when the load serves a second recall
            assert index._scan is None
            assert index.ready(conn) is True
            assert index._scan is not None
            got = index.knn(query, 15)
    # The same distances in the same order; ids equal within each distance (ties may list in any order),
    # except at the cut, where a tie decides which of equals makes the list.
    assert [d for _, d in got] == pytest.approx([d for _, d in expected], abs=1e-5)
    cut = round(expected[-1][1], 5)
    group = lambda hits: {(round(d, 5), i) for i, d in hits if round(d, 5) != cut}  # noqa: E731
    assert group(got) == group(expected)


def test_warm_index_is_dropped_after_another_connection_writes(fake_brain, fake_brain_path, small_threshold) -> None:
    from cerebro import Brain

    fake_brain.add("first")
    index = warm.WarmVectors()
    with fake_brain.handle.snapshot() as conn:
        index.ready(conn)
        assert index.ready(conn) is True
    with Brain.open(fake_brain_path) as other:  # another connection, as another process would write
        other.add("second")
    with fake_brain.handle.snapshot() as conn:
        assert index.ready(conn) is True  # rebuilt, now with both
        assert len(index.knn(fake_brain.handle.embed(["x"])[0], 10)) == 2


def test_the_brains_own_adds_reach_its_warm_index(fake_brain, small_threshold) -> None:
    """An add commits on the brain's own read connection, which data_version does not see: the new vectors are
    handed to the warm index instead (add and add_many)."""
    fake_brain.add("first")
    with fake_brain.handle.snapshot() as conn:
        fake_brain.handle.warm(conn)
        index = fake_brain.handle.warm(conn)
        assert index is not None
    second = fake_brain.add("second")
    many = fake_brain.add_many([{"content": "third"}, {"content": "fourth"}])
    with fake_brain.handle.snapshot() as conn:
        assert fake_brain.handle.warm(conn) is index  # not reloaded: still current
    found = {node_id for node_id, _ in index.knn(fake_brain.handle.embed(["x"])[0], 10)}
    assert {second, *many} <= found


def test_recall_is_the_same_with_the_warm_index(fake_brain, small_threshold, pinned_clock) -> None:
    words = [
        "amber",
        "basil",
        "cedar",
        "delta",
        "ember",
        "fjord",
        "garnet",
        "harbor",
        "iris",
        "juniper",
        "kelp",
        "lumen",
    ]
    for i in range(30):
        fake_brain.add(f"{words[i % 12]} {words[(i * 7 + 2) % 12]} note{i}")
    first = fake_brain.recall("delta iris", limit=10)  # vec0 scan
    second = fake_brain.recall("delta iris", limit=10)  # warm index
    assert fake_brain.handle._warm._matrix is not None
    # The same up to float rounding (sqlite-vec and numpy sum in other orders); the int8 query rounding that
    # sqlite-vec applies and a float query would not is ~1e-3 (ADR 0029).
    assert sorted(r.score for r in second) == pytest.approx(sorted(r.score for r in first), abs=2e-6)


def test_warm_vectors_are_the_stored_unit_vectors(fake_brain, small_threshold) -> None:
    ids = [fake_brain.add(f"note about topic {i}") for i in range(12)]
    index = warm.WarmVectors()
    with fake_brain.handle.snapshot() as conn:
        index.ready(conn)
        assert index.ready(conn) is True
        stored = vec.vectors_for(conn, ids[:5])
        got = index.vectors([*ids[:5], "no-such-id"])
    assert set(got) == set(stored)
    for node_id, vector in stored.items():
        norm = sum(x * x for x in vector) ** 0.5
        assert got[node_id] == pytest.approx([x / norm for x in vector], abs=1e-6)


def test_the_fast_read_of_sqlite_vec_tables_equals_the_virtual_table(fake_brain) -> None:
    import numpy as np

    ids = [fake_brain.add(f"vector number {i} about subject{i % 7}") for i in range(40)]
    fake_brain.update(ids[3], content="re-embedded: an update replaces the vector in place")
    fake_brain.forget("subject2", apply=True, hard=True)  # holes in the chunks' validity bitmaps
    with fake_brain.handle.snapshot() as conn:
        fast = warm._shadow_rows(conn)
        rows = conn.execute("SELECT node_id, embedding FROM vec_nodes").fetchall()
        assert fast is not None and len(rows) == 34
        assert fast[0] == [r[0] for r in rows]
        assert np.array_equal(fast[1], np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), -1))
        conn.execute("SAVEPOINT layout")
        conn.execute("UPDATE vec_nodes_info SET value = 2 WHERE key = 'CREATE_VERSION_MINOR'")
        assert warm._shadow_rows(conn) is None  # a layout this code does not know: the virtual table is read
        conn.execute("ROLLBACK TO layout")
        conn.execute("RELEASE layout")


def test_changes_applied_in_place_give_the_answers_of_a_fresh_load(fake_brain, small_threshold) -> None:
    """What a long-lived server relies on: its own writes, handed over by ``Brain.on_vectors_written``, bring
    a loaded copy to exactly what loading it again would give — new vectors, changed ones, deleted ones."""
    words = [
        "amber",
        "basil",
        "cedar",
        "delta",
        "ember",
        "fjord",
        "garnet",
        "harbor",
        "iris",
        "juniper",
        "kelp",
        "lumen",
    ]
    ids = [fake_brain.add(f"{words[i % 12]} {words[(i * 5 + 1) % 12]} item{i}") for i in range(24)]
    applied = warm.WarmVectors()
    with fake_brain.handle.snapshot() as conn:
        assert applied.load(conn)
    written: dict = {}
    fake_brain.on_vectors_written = written.update
    added = [fake_brain.add(f"{words[i % 12]} lumen added{i}") for i in range(3)]
    fake_brain.update(ids[0], content="kelp harbor rewritten")  # a changed vector, same node
    fake_brain.forget("item5", apply=True)  # a deleted vector (archived)
    fake_brain.forget("added1", apply=True, hard=True)  # a vector added since the load, then deleted
    assert set(written) >= {*added, ids[0], ids[5]} and written[ids[5]] is None and written[added[1]] is None
    applied.apply(written)
    fresh = warm.WarmVectors()
    with fake_brain.handle.snapshot() as conn:
        assert fresh.load(conn)
    everyone = [*ids, *added]
    assert applied.vectors(everyone).keys() == fresh.vectors(everyone).keys()
    for node_id, vector in fresh.vectors(everyone).items():
        assert applied.vectors([node_id])[node_id] == pytest.approx(vector, abs=1e-6)
    for text in ("kelp harbor", "lumen added", "amber basil", "item5"):
        query = fake_brain.handle.embed([text])[0]
        got, expected = applied.knn(query, 40), fresh.knn(query, 40)
        assert len(got) == len(expected) == len(everyone) - 2  # every vector, none of the deleted two
        assert sorted(got, key=lambda hit: (round(hit[1], 5), hit[0])) == [
            (i, pytest.approx(d, abs=1e-5)) for i, d in sorted(expected, key=lambda hit: (round(hit[1], 5), hit[0]))
        ]
        dots = applied.dots(everyone, query)
        assert dots == pytest.approx(fresh.dots(everyone, query), abs=1e-5)


@pytest.mark.parametrize(
    "corruption",
    [
        "UPDATE vec_nodes_info SET value = 9 WHERE key = 'CREATE_VERSION_MAJOR'",
        "UPDATE vec_nodes_chunks SET validity = substr(validity, 1, 1)",  # a bitmap too short for the chunk
        "UPDATE vec_nodes_chunks SET rowids = substr(rowids, 1, 8)",  # fewer rowids than slots
        "UPDATE vec_nodes_chunks SET size = 0",
        "UPDATE vec_nodes_vector_chunks00 SET vectors = substr(vectors, 1, length(vectors) - 3)",
        "DELETE FROM vec_nodes_vector_chunks00",
        "DELETE FROM vec_nodes_metadatatext00",  # node ids not found
        "DELETE FROM vec_nodes_rowids WHERE rowid = (SELECT max(rowid) FROM vec_nodes_rowids)",  # count differs
        "DROP TABLE vec_nodes_info",
    ],
)
def test_the_fast_read_refuses_a_layout_it_cannot_trust(fake_brain, corruption: str) -> None:
    """Each check of the fast read guards a way the chunk tables could disagree with the virtual table: any of
    them gives None (the caller then reads through the virtual table), never wrong vectors."""
    for i in range(12):
        fake_brain.add(f"vector number {i} with a long enough text to get an id stored outside the inline prefix")
    with fake_brain.handle.snapshot() as conn:
        assert warm._shadow_rows(conn) is not None
        conn.execute("SAVEPOINT corrupt")
        try:
            conn.execute(corruption)
            assert warm._shadow_rows(conn) is None
        finally:
            conn.execute("ROLLBACK TO corrupt")
            conn.execute("RELEASE corrupt")


def test_the_fast_read_checks_sampled_vectors_against_the_virtual_table(fake_brain, monkeypatch) -> None:
    import numpy as np

    for i in range(12):
        fake_brain.add(f"sampled vector {i}")
    with fake_brain.handle.snapshot() as conn:
        real = conn.execute
        fast = warm._shadow_rows(conn)
        middle = len(fast[0]) // 2
        for wrong in ("first", "middle", "last"):
            index = {"first": 0, "middle": middle, "last": len(fast[0]) - 1}[wrong]

            class Skewed:  # the virtual table disagrees with the chunk at one sampled row
                def execute(self, sql, params=(), index=index):
                    cursor = real(sql, params)
                    if sql.startswith("SELECT node_id, embedding FROM vec_nodes WHERE rowid"):
                        row = cursor.fetchone()
                        if row is not None and row[0] == fast[0][index]:
                            row = (row[0], (np.frombuffer(row[1], dtype="<f4") + 1).astype("<f4").tobytes())
                        return type("C", (), {"fetchone": lambda self_: row})()
                    return cursor

            assert warm._shadow_rows(Skewed()) is None, wrong


def test_changes_applied_one_commit_at_a_time_match_a_fresh_load(fake_brain, small_threshold) -> None:
    """As the server applies them (after every commit): more new vectors than the side matrix first holds,
    deletions of new ones (the last and one in the middle), a vector deleted then written again, a vector of
    another width, k = 0 and 1, and a query that is not unit length."""
    import numpy as np

    ids = [fake_brain.add(f"base memory {i} about topic{i % 5}") for i in range(10)]
    applied = warm.WarmVectors()
    with fake_brain.handle.snapshot() as conn:
        assert applied.load(conn)
    fake_brain.on_vectors_written = applied.apply
    added = [fake_brain.add(f"added memory {i} about topic{i % 5}") for i in range(20)]  # > 16: the matrix grows
    fake_brain.forget("added memory 19 ", apply=True, hard=True)  # the last new one
    fake_brain.forget("added memory 7 ", apply=True, hard=True)  # one in the middle: the last moves into its slot
    fake_brain.forget("base memory 3 ", apply=True, hard=True)  # one of the loaded ones
    gone = {added[19], added[7], ids[3]}
    vector = applied.vectors([ids[4]])[ids[4]]
    applied.apply({ids[4]: None})
    assert ids[4] not in applied.vectors([ids[4]])
    applied.apply({"wrong-width": [1.0, 2.0], ids[4]: vector})  # a stray width is skipped, not the batch
    fresh = warm.WarmVectors()
    with fake_brain.handle.snapshot() as conn:
        assert fresh.load(conn)
    everyone = [*ids, *added, "wrong-width"]
    expected = fresh.vectors(everyone)
    assert set(applied.vectors(everyone)) == set(expected) == set(ids + added) - gone
    for node_id, v in expected.items():
        assert applied.vectors([node_id])[node_id] == pytest.approx(v, abs=1e-6)
    base_query = np.asarray(fake_brain.handle.embed(["added memory about topic2"])[0])
    query = (3.0 * base_query).tolist()  # not unit length
    short_query = (0.2 * base_query).tolist()
    distances = lambda hits: [d for _, d in hits]  # noqa: E731
    assert distances(applied.knn(short_query, 40)) == pytest.approx(distances(fresh.knn(short_query, 40)), abs=1e-5)
    for k in (0, 1, 5, 40):
        got, want = applied.knn(query, k), fresh.knn(query, k)
        assert len(got) == len(want) == min(k, len(expected))
        assert [d for _, d in got] == pytest.approx([d for _, d in want], abs=1e-5)
        assert all(0.0 - 1e-5 <= d <= 2.0 + 1e-5 for _, d in got)  # cosine distances of a normalised query
    assert sorted(i for i, _ in applied.knn(query, 40)) == sorted(expected)  # every id, moved ones included
    assert applied.dots(everyone, query) == pytest.approx(fresh.dots(everyone, query), abs=1e-5)
    assert applied.dots(["no-such-id"], query) == {}


def test_without_the_fast_read_the_virtual_table_gives_the_same_index(fake_brain, monkeypatch) -> None:
    """A layout the fast read does not know (another sqlite-vec): the vectors are read through vec_nodes."""
    ids = [fake_brain.add(f"note {i} about topic{i % 4}") for i in range(15)]
    fast, slow = warm.WarmVectors(), warm.WarmVectors()
    with fake_brain.handle.snapshot() as conn:
        assert fast.load(conn)
        monkeypatch.setattr(warm, "_shadow_rows", lambda conn, dtype: None)
        assert slow.load(conn)
        order = [r[0] for r in conn.execute("SELECT node_id FROM vec_nodes").fetchall()]
    assert slow._ids == order and sorted(order) == sorted(ids)
    query = fake_brain.handle.embed(["note about topic2"])[0]
    assert slow.vectors(ids) == fast.vectors(ids)  # the same float32 values, read two ways
    assert slow.knn(query, 5) == fast.knn(query, 5)


@pytest.mark.parametrize("emptied", [False, True], ids=["never-filled", "all-deleted"])
@pytest.mark.parametrize("fast_read", [True, False])
def test_an_empty_vector_table_loads_nothing(fake_brain, monkeypatch, fast_read: bool, emptied: bool) -> None:
    if emptied:  # chunks left behind with every slot free
        for i in range(3):
            fake_brain.add(f"short-lived {i}")
        fake_brain.forget("short-lived", apply=True, hard=True)
    if not fast_read:
        monkeypatch.setattr(warm, "_shadow_rows", lambda conn, dtype: None)
    index = warm.WarmVectors()
    with fake_brain.handle.snapshot() as conn:
        assert index.load(conn) is False
        assert index.ready(conn) is False and index.ready(conn) is False


def test_a_loaded_index_is_reused_until_something_commits(fake_brain, fake_brain_path, small_threshold) -> None:
    from cerebro import Brain

    fake_brain.add("first")
    index = warm.WarmVectors()
    with fake_brain.handle.snapshot() as conn:
        assert index.load(conn)
    loaded = index._matrix
    with fake_brain.handle.snapshot() as conn:
        assert index.ready(conn) is True
    assert index._matrix is loaded  # not read again
    with Brain.open(fake_brain_path) as other:  # another connection commits
        other.add("second")
    with fake_brain.handle.snapshot() as conn:
        assert index.ready(conn) is True
    assert index._matrix is not loaded and index._matrix.shape[0] == 2


def test_applied_vectors_are_normalised_and_a_rewritten_new_vector_replaces_itself(fake_brain) -> None:
    import numpy as np

    fake_brain.add("the one loaded memory")
    index = warm.WarmVectors()
    with fake_brain.handle.snapshot() as conn:
        assert index.load(conn)
    dims = index._matrix.shape[1]
    short, zero = np.zeros(dims), np.zeros(dims)
    short[0] = 0.1  # not unit length: stored as the unit vector
    index.apply({"short": short.tolist(), "zero": zero.tolist()})
    got = index.vectors(["short", "zero"])
    assert got["short"][0] == pytest.approx(1.0) and sum(abs(x) for x in got["short"]) == pytest.approx(1.0)
    assert got["zero"] == [0.0] * dims  # no NaN from dividing by a zero norm
    rewritten = np.zeros(dims)
    rewritten[1] = 2.0
    index.apply({"short": rewritten.tolist()})  # the same new id written again: replaced, not added twice
    ids = [i for i, _ in index.knn(rewritten.tolist(), 10)]
    assert sorted(ids) == sorted({*ids}) and ids.count("short") == 1
    assert index.vectors(["short"])["short"][1] == pytest.approx(1.0)


def _index_of(vectors) -> warm.WarmVectors:
    """A loaded index over these rows (ids "n0", "n1", …), without a brain: for the ranking arithmetic."""
    index = warm.WarmVectors()
    index._ids = [f"n{i}" for i in range(len(vectors))]
    index._rows = {node_id: i for i, node_id in enumerate(index._ids)}
    index._matrix = warm._unit_rows(vectors)
    return index


def test_knn_is_the_exact_nearest_first_ranking() -> None:
    import numpy as np

    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(300, 24)).astype(np.float32)
    index = _index_of(vectors)
    query = rng.normal(size=24).astype(np.float32)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    exact = np.argsort(-(unit @ (query / np.linalg.norm(query))), kind="stable")
    for k in (1, 2, 10, 37):
        assert [i for i, _ in index.knn(query.tolist(), k)] == [f"n{i}" for i in exact[:k]]
    cosines = unit @ (query / np.linalg.norm(query))
    for scale in (0.05, 1.0, 40.0):  # the query's length does not matter: cosine distances
        hits = index.knn((scale * query).tolist(), 5)
        assert [d for _, d in hits] == pytest.approx([1.0 - cosines[i] for i in exact[:5]], abs=1e-5)


def test_knn_over_an_index_whose_rows_are_all_removed_is_empty() -> None:
    import numpy as np

    index = _index_of(np.eye(3, dtype=np.float32))
    index.apply({"n0": None, "n1": None, "n2": None})
    assert index.knn([1.0, 0.0, 0.0], 5) == []
    assert index.dots(["n0", "n1"], [1.0, 0.0, 0.0]) == {} and index.vectors(["n2"]) == {}


def test_a_dropped_index_ignores_changes_until_it_is_loaded_again(fake_brain, fake_brain_path) -> None:
    from cerebro import Brain

    fake_brain.add("first")
    index = warm.WarmVectors()
    with fake_brain.handle.snapshot() as conn:
        assert index.load(conn)
    with Brain.open(fake_brain_path) as other:  # another connection commits: the copy is stale
        other.add("second")
    with fake_brain.handle.snapshot() as conn:
        assert index.ready(conn) is False  # dropped, and too small to rebuild
    index.apply({"third": [1.0] * len(fake_brain.handle.embed(["x"])[0])})  # a write after the drop: nothing to update
    assert index._matrix is None and index.vectors(["third"]) == {}


def test_an_index_never_loaded_answers_nothing_and_ignores_changes() -> None:
    index = warm.WarmVectors()
    index.apply({"a": [1.0, 0.0]})
    assert index.vectors(["a"]) == {} and index.dots(["a"], [1.0, 0.0]) == {}


@pytest.mark.parametrize(("element", "dtype"), [("int8", "i1"), ("float", "<f4")])
def test_the_fast_read_spans_every_chunk_of_a_big_brain(fake_brain, element: str, dtype: str) -> None:
    """sqlite-vec keeps 1,024 vectors a chunk: a brain past that has several, and the fast read (the point of
    which is big brains) must read them all rather than give up — int8 tables and float32 ones (ADR 0029)."""
    import numpy as np

    dims = len(fake_brain.handle.embed(["x"])[0])
    rng = np.random.default_rng(3)
    bound = "vec_int8(?)" if element == "int8" else "?"
    with fake_brain.handle.snapshot() as conn:
        conn.execute("SAVEPOINT many")
        try:
            conn.execute("DROP TABLE vec_nodes")
            conn.execute(
                f"CREATE VIRTUAL TABLE vec_nodes USING vec0(node_id TEXT, embedding {element}[{dims}] "
                "distance_metric=cosine)"
            )
            for i in range(1_100):
                vector = rng.integers(-127, 128, size=dims).astype(dtype)
                conn.execute(
                    f"INSERT INTO vec_nodes (rowid, node_id, embedding) VALUES (?, ?, {bound})",
                    (10_000 + i, f"n{i:04d}-0000-4000-8000-000000000000", vector.tobytes()),
                )
            assert conn.execute("SELECT COUNT(*) FROM vec_nodes_chunks").fetchone()[0] >= 2
            fast = warm._shadow_rows(conn, dtype)
            rows = conn.execute("SELECT node_id, embedding FROM vec_nodes").fetchall()
            assert fast is not None and fast[0] == [r[0] for r in rows]
            assert np.array_equal(
                fast[1], np.frombuffer(b"".join(r[1] for r in rows), dtype=dtype).reshape(len(rows), -1)
            )
        finally:
            conn.execute("ROLLBACK TO many")
            conn.execute("RELEASE many")


def test_a_long_lived_brain_keeps_a_warm_index_from_min_vectors_memories(fake_brain) -> None:
    """Issue 18: from 200 memories (not 5,000) a process that recalls again keeps the vectors in memory."""
    assert warm.MIN_VECTORS <= 200
    fake_brain.add_many([{"content": f"memory number {i}"} for i in range(warm.MIN_VECTORS - 1)])
    with fake_brain.handle.snapshot() as conn:
        assert fake_brain.handle.warm(conn) is None  # first use: never loaded
        assert fake_brain.handle.warm(conn) is None  # used again, but one memory short
    fake_brain.add("the one that makes it worth it")
    with fake_brain.handle.snapshot() as conn:
        assert fake_brain.handle.warm(conn) is not None


def _shortlisted(vectors, monkeypatch: pytest.MonkeyPatch, depth: int) -> warm.WarmVectors:
    """An index big enough to shortlist (the threshold lowered to its size), ``depth`` rows deep whatever k."""
    monkeypatch.setattr(warm, "SHORTLIST_FROM", len(vectors))
    monkeypatch.setattr(warm, "SHORTLIST_MIN", depth)
    monkeypatch.setattr(warm, "SHORTLIST_PER_K", 0)
    index = _index_of(vectors)
    index._index_signs()
    return index


def test_a_big_index_finds_the_near_neighbours_through_its_sign_bit_shortlist(monkeypatch) -> None:
    import numpy as np

    rng = np.random.default_rng(3)
    dims, far = 64, 3000
    query = rng.normal(size=dims).astype(np.float32)
    near = query + rng.normal(scale=0.25, size=(15, dims)).astype(np.float32)  # close to the query
    vectors = np.concatenate([rng.normal(size=(far, dims)).astype(np.float32), near])
    index = _shortlisted(vectors, monkeypatch, depth=150)  # a twentieth of the rows are scored exactly
    assert index._signs is not None
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    cosines = unit @ (query / np.linalg.norm(query))
    exact = np.argsort(-cosines, kind="stable")[:15]
    hits = index.knn(query.tolist(), 15)
    assert [i for i, _ in hits] == [f"n{i}" for i in exact]  # exactly the near rows, in the exact order
    assert [d for _, d in hits] == pytest.approx([1.0 - cosines[i] for i in exact], abs=1e-5)


def test_the_shortlist_holds_nearly_all_of_the_exact_answer_on_unstructured_vectors(monkeypatch) -> None:
    import numpy as np

    rng = np.random.default_rng(5)
    vectors = rng.normal(size=(4000, 48)).astype(np.float32)
    index = _shortlisted(vectors, monkeypatch, depth=800)  # a fifth of the rows
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    overlap = []
    for _ in range(20):
        query = rng.normal(size=48).astype(np.float32)
        exact = {f"n{i}" for i in np.argsort(-(unit @ query))[:10]}
        overlap.append(len(exact & {i for i, _ in index.knn(query.tolist(), 10)}) / 10)
    # Random rows are the hard case (no near neighbours); a fifth of them still holds ~all of the top ten,
    # where a shortlist of random rows would hold a fifth.
    assert sum(overlap) / len(overlap) >= 0.9


def test_a_shortlisted_index_skips_removed_rows_and_finds_rows_added_after_its_load(monkeypatch) -> None:
    import numpy as np

    rng = np.random.default_rng(9)
    query = rng.normal(size=32).astype(np.float32)
    vectors = np.concatenate([rng.normal(size=(2000, 32)).astype(np.float32), query[None, :] * 2])
    index = _shortlisted(vectors, monkeypatch, depth=100)
    assert index.knn(query.tolist(), 1)[0][0] == "n2000"
    index.apply({"n2000": None, "later": (query + 0.01).tolist()})
    hits = [i for i, _ in index.knn(query.tolist(), 5)]
    assert hits[0] == "later" and "n2000" not in hits and len(hits) == 5


def test_an_index_below_the_shortlist_threshold_scans_every_row(monkeypatch) -> None:
    import numpy as np

    rng = np.random.default_rng(11)
    vectors = rng.normal(size=(600, 48)).astype(np.float32)
    monkeypatch.setattr(warm, "SHORTLIST_FROM", 601)
    monkeypatch.setattr(warm, "SHORTLIST_MIN", 10)  # a shortlist this shallow would miss some of the answer
    monkeypatch.setattr(warm, "SHORTLIST_PER_K", 0)
    index = _index_of(vectors)
    index._index_signs()
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    for _ in range(5):
        query = rng.normal(size=48).astype(np.float32)
        exact = np.argsort(-(unit @ query), kind="stable")[:20]
        assert [i for i, _ in index.knn(query.tolist(), 20)] == [f"n{i}" for i in exact]


def test_the_warm_index_rounds_a_query_to_int8_exactly_as_the_vector_table_does() -> None:
    import numpy as np

    rng = np.random.default_rng(13)
    index = warm.WarmVectors()
    index._int8 = True
    # Random vectors, and ones whose scaled components sit exactly halfway between two integers.
    halves = [[127.0, 0.5, -0.5, 1.5, -2.5, 3.0]] + [[127.0, *(rng.integers(-120, 120, 5) + 0.5)] for _ in range(5)]
    for vector in [*rng.normal(size=(20, 40)).tolist(), *halves]:
        expected = vec.from_blob(vec.to_blob(vector, vec.INT8), vec.INT8)
        got = index._as_stored(np.asarray(vector))
        assert got.tolist() == pytest.approx(expected, abs=1e-7)
        # The same integers: the largest component scales to ±127, the rest are rounded half to even.
        stored = np.frombuffer(vec.to_blob(vector, vec.INT8), np.int8)
        assert np.allclose(got * 127 / np.abs(got).max(), stored, atol=1e-3)
    assert index._as_stored([0.0, 0.0]).tolist() == [0.0, 0.0]


def test_a_shortlisted_row_whose_vector_changes_is_found_where_it_is_now(monkeypatch) -> None:
    import numpy as np

    rng = np.random.default_rng(17)
    vectors = rng.normal(size=(3000, 32)).astype(np.float32)
    index = _shortlisted(vectors, monkeypatch, depth=60)
    query = -vectors[5]  # as far from row 5 as a vector can be
    assert "n5" not in {i for i, _ in index.knn(query.tolist(), 10)}
    index.apply({"n5": (query + 0.01).tolist()})  # rewritten (a memory re-embedded): now next to the query
    assert index.knn(query.tolist(), 1)[0][0] == "n5"


def test_removed_rows_take_no_place_in_the_shortlist(monkeypatch) -> None:
    import numpy as np

    rng = np.random.default_rng(19)
    query = rng.normal(size=32).astype(np.float32)
    near = query + rng.normal(scale=0.3, size=(200, 32)).astype(np.float32)  # rows 0-199 near the query
    vectors = np.concatenate([near, near + 0.01, rng.normal(size=(3000, 32)).astype(np.float32)])
    index = _shortlisted(vectors, monkeypatch, depth=210)
    index.apply({f"n{i}": None for i in range(200)})  # the nearest half of the near rows gone
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    cosines = unit @ (query / np.linalg.norm(query))
    cosines[:200] = -np.inf
    exact = [f"n{i}" for i in np.argsort(-cosines, kind="stable")[:150]]
    # The 200 removed rows would fill the shortlist's 210 places and leave 10 for the 200 still there.
    assert {i for i, _ in index.knn(query.tolist(), 150)} == set(exact)


def test_a_brain_past_the_threshold_loads_sign_bits_and_ranks_as_the_vector_table(fake_brain, monkeypatch) -> None:
    monkeypatch.setattr(warm, "SHORTLIST_FROM", 20)
    monkeypatch.setattr(warm, "SHORTLIST_MIN", 1_000)  # deeper than the brain: the answer must be vec0's exactly
    words = ["amber", "basil", "cedar", "delta", "ember", "fjord", "garnet", "harbor"]
    for i in range(30):
        fake_brain.add(f"{words[i % 8]} {words[(i * 3 + 1) % 8]} note{i}")
    index = warm.WarmVectors()
    query = fake_brain.handle.embed(["cedar harbor"])[0]
    with fake_brain.handle.snapshot() as conn:
        assert index.load(conn)
        expected = vec.knn(conn, query, 10)
    assert index._signs is not None and index._signs.shape[1] == 30
    assert [d for _, d in index.knn(query, 10)] == pytest.approx([d for _, d in expected], abs=1e-5)


def test_pairwise_dots_of_the_warm_index_decide_relatedness_as_the_stored_vectors_do(fake_brain, small_threshold):
    """The adjacency step asks whether memories written together are related (ADR 0033): a long-lived brain answers
    from the warm index in one product, a one-shot process from the stored vectors; both must decide alike."""
    from cerebro import adjacency

    words = ["walrus", "tusk", "ivory", "arctic", "kilo", "romeo", "sierra", "tango"]
    ids = [fake_brain.add(" ".join(words[(i + k) % 8] for k in range(3))) for i in range(12)]
    index = warm.WarmVectors()
    with fake_brain.handle.snapshot() as conn:
        index.ready(conn)
        assert index.ready(conn) is True  # loaded on the second use, as a long-lived brain does
        index.apply({ids[-1]: None})  # a removed row has no vector to compare
        pairs = [(a, b) for a in ids for b in ids if a < b] + [(ids[0], "no-such-id")]
        dots = index.pair_dots(pairs)
        stored = vec.vectors_for(conn, ids[:-1])
        by_list = adjacency.related_pairs(pairs, lambda wanted: {i: stored[i] for i in wanted if i in stored})
        by_index = adjacency.related_pairs(pairs, lambda wanted: {}, index.pair_dots)
    assert (ids[0], "no-such-id") not in dots and not any(ids[-1] in pair for pair in dots)
    for a, b in dots:
        norm_a, norm_b = (sum(x * x for x in stored[i]) ** 0.5 for i in (a, b))
        cosine = sum(x * y for x, y in zip(stored[a], stored[b], strict=True)) / norm_a / norm_b
        assert dots[a, b] == pytest.approx(cosine, abs=1e-5)
    assert by_index == by_list
    assert 0 < len(by_list) < len(pairs)  # some related, some not: the comparison decides something


# --------------------------------------------------------------------------- the exact integer scan (ADR 0040)


def _int8_rows(count: int, dims: int, seed: int):
    import numpy as np

    rng = np.random.default_rng(seed)
    rows = rng.integers(-127, 128, size=(count, dims), dtype=np.int8)
    rows[:8] = 127  # rows of extreme values: where an 8-bit kernel's sums could saturate
    rows[8:16] = -127
    rows[16] = 0  # a zero vector: cosine 0, no division by zero
    return rows


def test_the_integer_scan_multiplies_int8_rows_exactly() -> None:
    import numpy as np

    from cerebro.store import int8_scan

    rows = _int8_rows(700, 64, seed=1)
    scan = int8_scan.build(rows)
    assert scan is not None
    rng = np.random.default_rng(2)
    for query in (np.full(64, 127), np.full(64, -127), rng.integers(-127, 128, 64), np.zeros(64, dtype=np.int64)):
        assert np.array_equal(scan.products(query), rows.astype(np.int64) @ query.astype(np.int64))
    vector = rng.normal(size=64)
    unit_rows = warm._unit_rows(rows.astype(np.float32))
    assert scan.cosines(vector) == pytest.approx(unit_rows @ vec.as_stored_array(vector, vec.INT8), abs=1e-6)
    assert scan.cosines(vector)[16] == 0.0


def test_a_scan_whose_products_differ_from_numpys_is_not_used(monkeypatch) -> None:
    from cerebro.store import int8_scan

    real = int8_scan.Int8Scan.every_product
    monkeypatch.setattr(int8_scan.Int8Scan, "every_product", lambda self, query: real(self, query) + (query[0] == 127))
    assert int8_scan.build(_int8_rows(300, 32, seed=3)) is None  # an all-127 probe came out one too high


@pytest.mark.parametrize("vnni", [True, False], ids=["vnni", "no-vnni"])
def test_the_one_row_scan_is_tried_with_vnni_and_both_forms_are_exact(monkeypatch, vnni: bool) -> None:
    """With VNNI the query goes in as one row shifted to 0…255 (its product less 128 × the row's sum: ~20 % less CPU a
    scan at 100k); without, as its positive and negative parts (a 16-bit kernel would saturate on the shifted one).
    Either way the products are NumPy's; on a CPU whose kernel saturates, the one-row form fails the probe and the
    two-row form serves."""
    import numpy as np

    from cerebro.store import int8_scan

    this_cpu = int8_scan.has_vnni()
    monkeypatch.setattr(int8_scan, "has_vnni", lambda: vnni)
    rows = _int8_rows(700, 64, seed=1)
    scan = int8_scan.build(rows)
    assert scan is not None
    if not vnni:
        assert scan._shift is None
    elif this_cpu:  # a CPU with VNNI (ONNX Runtime's kernels use it): the one-row form passed the probe
        assert scan._shift is not None
    rng = np.random.default_rng(2)
    for query in (np.full(64, 127), np.full(64, -127), rng.integers(-127, 128, 64), np.zeros(64, dtype=np.int64)):
        assert np.array_equal(scan.products(query), rows.astype(np.int64) @ query.astype(np.int64))


def test_a_one_row_scan_that_saturates_gives_way_to_two_rows(monkeypatch) -> None:
    from cerebro.store import int8_scan

    monkeypatch.setattr(int8_scan, "has_vnni", lambda: True)
    real = int8_scan.Int8Scan.every_product

    def saturating(self, query):  # as a 16-bit kernel adds 255 × 127 pairs: the all-127 probe comes out wrong
        return real(self, query) - (self._shift is not None and query[0] == 127)

    monkeypatch.setattr(int8_scan.Int8Scan, "every_product", saturating)
    scan = int8_scan.build(_int8_rows(300, 32, seed=3))
    assert scan is not None and scan._shift is None


@pytest.mark.parametrize(
    ("flags", "expected"),
    [("fpu sse avx2 avx512_vnni", True), ("fpu sse avx2", False), ("fpu amx_int8", True), ("fpu avx_vnni", True)],
)
def test_the_cpu_flags_are_read_for_vnni(monkeypatch, tmp_path, flags: str, expected: bool) -> None:
    import builtins

    from cerebro.store import int8_scan

    info = tmp_path / "cpuinfo"
    info.write_text(f"processor\t: 0\nflags\t\t: {flags}\n")
    real_open = builtins.open
    monkeypatch.setattr(
        builtins, "open", lambda path, *a, **k: real_open(info if path == "/proc/cpuinfo" else path, *a, **k)
    )
    assert int8_scan.has_vnni() is expected


def _int8_index(rows):
    index = _index_of(rows.astype("float32"))
    index._int8, index._int8_rows = True, rows
    return index


def test_a_big_int8_index_ranks_every_row_exactly_with_the_integer_scan(monkeypatch) -> None:
    import numpy as np

    from cerebro.store import int8_scan

    monkeypatch.setattr(int8_scan, "SCAN_FROM", 500)
    monkeypatch.setattr(warm, "SHORTLIST_FROM", 500)  # the approximate shortlist is what the scan replaces
    rows = _int8_rows(3000, 48, seed=4)
    index = _int8_index(rows)
    index._index_signs()
    monkeypatch.setattr(warm, "SHORTLIST_MIN", 50)
    monkeypatch.setattr(warm, "SHORTLIST_PER_K", 2)  # a shallow shortlist: it would miss some of the exact answer
    unit = warm._unit_rows(rows.astype(np.float32))
    rng = np.random.default_rng(5)
    queries = [rng.normal(size=48) for _ in range(6)]
    first = index.knn(queries[0].tolist(), 30)
    assert index._scan is None  # a load that serves one query does not pay for the scan
    index.prepare_scan()
    for query in queries:
        cosines = unit @ vec.as_stored_array(query, vec.INT8)
        exact = np.argsort(-cosines, kind="stable")[:30]
        hits = index.knn(query.tolist(), 30)
        assert index._scan is not None
        assert [i for i, _ in hits] == [f"n{i}" for i in exact]
        assert [d for _, d in hits] == pytest.approx([1.0 - cosines[i] for i in exact], abs=1e-6)
    assert [i for i, _ in first] != [i for i, _ in index.knn(queries[0].tolist(), 30)]  # the shortlist had missed some


def test_a_row_rewritten_after_the_scan_was_built_is_found_by_its_new_vector(monkeypatch) -> None:
    import numpy as np

    from cerebro.store import int8_scan

    monkeypatch.setattr(int8_scan, "SCAN_FROM", 100)
    rows = _int8_rows(400, 32, seed=6)
    index = _int8_index(rows)
    old, new = rows[300].astype(np.float64), np.zeros(32)
    new[3] = 1.0
    index.prepare_scan()
    assert index._scan is not None and index.knn(old.tolist(), 1)[0][0] == "n300"
    index.apply({"n300": new.tolist()})
    assert index._extra_ids == ["n300"]  # the scan holds the row as loaded
    assert index.knn(new.tolist(), 1) == [("n300", pytest.approx(0.0, abs=1e-6))]
    assert "n300" not in [i for i, _ in index.knn(old.tolist(), 3)]
    assert index.vectors(["n300"])["n300"] == pytest.approx(new.tolist())
    assert index.dots(["n300"], new.tolist())["n300"] == pytest.approx(1.0)
    index.apply({"n300": None})
    assert "n300" not in [i for i, _ in index.knn(new.tolist(), 400)]


def test_a_refused_scan_is_not_built_again_for_every_query(monkeypatch) -> None:
    from cerebro.store import int8_scan

    monkeypatch.setattr(int8_scan, "SCAN_FROM", 100)
    attempts = []
    monkeypatch.setattr(int8_scan, "build", lambda rows: attempts.append(len(rows)))  # refuses: returns None
    rows = _int8_rows(300, 16, seed=8)
    index = _int8_index(rows)
    for _ in range(5):
        index.prepare_scan()
        assert index.knn(rows[40].astype(float).tolist(), 1)[0][0] == "n40"  # the float32 product serves
    assert attempts == [300]
    assert index._int8_rows is None  # not kept for a scan that will not be built


def test_a_row_rewritten_before_the_scan_is_built_changes_in_place_and_the_scan_sees_it(monkeypatch) -> None:
    import numpy as np

    from cerebro.store import int8_scan

    monkeypatch.setattr(int8_scan, "SCAN_FROM", 100)
    rows = _int8_rows(400, 32, seed=9)
    index = _int8_index(rows.copy())
    new = np.zeros(32)
    new[5] = -2.0
    index.apply({"n7": new.tolist()})
    assert index._extra_ids == [] and 7 not in index._removed  # no scan yet: the row itself changed
    index.prepare_scan()
    assert index._scan is not None
    assert index.knn(new.tolist(), 1) == [("n7", pytest.approx(0.0, abs=1e-6))]


def test_a_reload_after_the_scan_was_built_answers_from_the_new_rows(fake_brain, fake_brain_path, monkeypatch) -> None:
    from cerebro import Brain
    from cerebro.store import int8_scan

    monkeypatch.setattr(warm, "MIN_VECTORS", 1)
    monkeypatch.setattr(int8_scan, "SCAN_FROM", 1)
    for i in range(12):
        fake_brain.add(f"amber basil item{i}")
    index = warm.WarmVectors()
    with fake_brain.handle.snapshot() as conn:
        index.ready(conn), index.ready(conn), index.ready(conn)  # loaded, then the scan built
    assert index._scan is not None
    built = index._scan
    with Brain.open(fake_brain_path) as other:  # another connection's commit: the copy is out of date
        late = other.add("walrus tusk ivory")
    query = fake_brain.handle.embed(["walrus tusk ivory"])[0]
    with fake_brain.handle.snapshot() as conn:
        assert index.ready(conn) is True  # reloaded, with the new memory
        assert index._scan is None  # the old scan went with the old rows
        assert index.knn(query, 1)[0][0] == late
        assert index.ready(conn) is True
        assert index._scan is not None and index._scan is not built
        assert index.knn(query, 1)[0][0] == late


def test_a_server_builds_the_scan_on_its_loading_thread(fake_brain, fake_brain_path, monkeypatch) -> None:
    import time

    from cerebro.mcp.warm import BackgroundWarm
    from cerebro.store import int8_scan

    monkeypatch.setattr(int8_scan, "SCAN_FROM", 1)
    for i in range(12):
        fake_brain.add(f"cedar delta item{i}")
    background = BackgroundWarm(fake_brain_path)
    with fake_brain.handle.snapshot() as conn:
        assert background.ready(conn) is False  # the load starts on its own thread
        for _ in range(200):
            if background.ready(conn):
                break
            time.sleep(0.02)
        assert background._copy is not None and background._copy._scan is not None
