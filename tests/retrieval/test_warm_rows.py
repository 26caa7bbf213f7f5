"""The in-memory copy of the rows (ADR 0051) answers as the statements do, and is never read once it is stale."""

from __future__ import annotations

import random
import threading
import time

import pytest

from cerebro import process
from cerebro.store import fts, graph, reads, warm_rows
from tests.helpers import watch_collector

# The copy is of a brain file's rows; a team brain keeps none (no cheap counter of other sessions' commits).
pytestmark = pytest.mark.file_only

WORDS = ["deploy", "database", "kafka", "latency", "cache", "retry", "vector", "gotcha", "decision", "Ada"]


def corpus(seed: int, count: int) -> list[dict[str, object]]:
    rng = random.Random(seed)
    return [
        {
            "content": " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6))) + f" note{i}",
            "subtype": rng.choice([None, "decision", "gotcha"]),
            "importance": round(rng.uniform(0.1, 0.9), 2),
        }
        for i in range(count)
    ]


def shaped_brain(brain, seed: int = 1) -> list[str]:
    """A brain whose writing order has every shape the neighbour statements handle: several memories in one second
    (rowid breaks the tie), seconds of one memory, a memory without created_at, memories of every status."""
    ids = brain.add_many(corpus(seed, 120))
    rng = random.Random(seed)
    seconds = [f"2026-03-{1 + i // 40:02d} 10:{(i // 4) % 60:02d}:00" for i in range(len(ids))]

    def reshape(conn) -> None:
        conn.executemany("UPDATE nodes SET created_at = ? WHERE id = ?", list(zip(seconds, ids, strict=True)))
        conn.execute("UPDATE nodes SET created_at = NULL WHERE id = ?", (ids[17],))
        conn.execute("UPDATE nodes SET last_accessed = '2026-03-05 08:00:00', access_count = 3 WHERE id = ?", (ids[5],))
        conn.execute("UPDATE nodes SET subtype = '' WHERE id IN (?, ?)", (ids[3], ids[4]))  # no subtype, as '' not NULL
        conn.execute("UPDATE nodes SET status = 'superseded' WHERE id = ?", (ids[9],))  # a stray keyword row is left
        conn.execute("UPDATE nodes SET status = NULL WHERE id = ?", (ids[11],))  # read as active; not 'active' to SQL

    brain.handle.write_raw(reshape)
    for _ in range(80):  # a graph: edges of each relation, some weighted, some without a weight
        source, target = rng.sample(ids, 2)
        relation = rng.choice(["supports", "derived_from", "relates_to", "contradicts"])
        try:
            brain.add_edge(source, target, relation, weight=rng.choice([None, 0.4, 2.0]))
        except Exception:  # noqa: BLE001 - the same edge twice (or a relation refused there): another one
            continue
    brain.handle.write_raw(lambda conn: conn.execute("UPDATE edges SET weight = NULL WHERE id % 7 = 0"))
    brain.handle.write_raw(
        lambda conn: conn.execute("UPDATE edges SET invalid_at = '2026-03-01 00:00:00' WHERE id % 3 = 0")
    )
    brain.handle.write_raw(
        lambda conn: conn.execute(
            "INSERT INTO edges (source_id, target_id, relation, weight) VALUES (?, ?, 'supports', 0)",
            (ids[20], ids[20]),
        )
    )  # a loop, of weight 0 (which an edge's structure reads as 1.0, a NULL weight as 1.0 too)
    brain.mark_consolidated(
        rng.sample([i for i in ids if i != ids[9]], 15)
    )  # statuses other than active: neighbours all the same
    return ids


def test_the_copy_answers_as_the_statements_do(fake_brain) -> None:
    ids = shaped_brain(fake_brain)
    rng = random.Random(2)
    with fake_brain.handle.snapshot() as conn:
        copy = warm_rows.read_copy(conn, warm_rows.stamp_of(conn))
        assert len(copy.nodes) == len(ids) and len(copy.order) == len(ids) - 1
        for _ in range(60):
            asked = [*rng.sample(ids, rng.randint(1, 40)), "no-such-memory", *rng.sample(ids, 2)]  # unknown, twice
            for active_only in (False, True):
                expected = reads.nodes_by_id(conn, asked, active_only=active_only)
                got = copy.nodes_by_id(asked, active_only)
                assert list(got.items()) == list(expected.items())  # the same nodes, in the same order
            assert copy.written_beside(asked) == reads.written_beside(conn, asked)
            for reach in (0, 1, 2, 3):
                assert copy.written_near(asked, reach) == reads.written_near(conn, asked, reach)
            assert sorted(copy.edges_touching(asked)) == sorted(graph.edges_touching(conn, asked))
            for relations in (("derived_from", "supports"), ("contradicts",)):
                assert copy.citation_indegree(asked, relations) == graph.citation_indegree(conn, asked, relations)
                assert copy.sources_with(asked, relations[0]) == graph.sources_with(conn, asked, relations[0])
        assert sum(len(e) for e in copy.edges.values()) > 100  # the graph was there to compare
        # More ids than one statement asks for: SQLite sorts each statement's list, not the whole.
        many = [f"unknown-{i:04d}" for i in range(700)]
        for place, node_id in zip((3, 250, 499, 500, 640), rng.sample(ids, 5), strict=True):
            many.insert(place, node_id)
        for active_only in (False, True):
            expected = reads.nodes_by_id(conn, many, active_only=active_only)
            assert list(copy.nodes_by_id(many, active_only).items()) == list(expected.items())
        assert copy.nodes[ids[11]].status == "active" and ids[11] not in reads.nodes_by_id(
            conn, [ids[11]], active_only=True
        )
        rowids = [row[0] for row in conn.execute("SELECT id FROM nodes_fts_content").fetchall()]
        for subtype in (..., None, "", "decision", "absent"):
            asked_rows = [*rng.sample(rowids, len(rowids)), 10**6]
            expected_rows: dict[str, object] = {}
            expected = fts._active_node_ids(conn, asked_rows, subtype, expected_rows)
            got_rows: dict[str, object] = {}
            assert copy.active_hits(asked_rows, subtype, got_rows) == expected
            assert got_rows == {node_id: reads.node_from_row(row) for node_id, row in expected_rows.items()}


@pytest.fixture(autouse=True)
def prompt_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy is built at the first recall at a state (whatever its statements spent: their time is the clock's)."""
    monkeypatch.setattr(warm_rows, "BUILD_SHARE", 0.0)


def wait_for_builds() -> None:
    for thread in threading.enumerate():
        if thread.name == "cerebro-rows":
            thread.join()


def answers(brain, query: str, as_of: str | None = None) -> list[tuple[str, float, dict[str, int], int]]:
    found = brain.recall(query, limit=10, as_of=as_of).results
    return [(r.node.id, r.score, dict(r.lanes), r.node.access_count, r.node.provenance_status) for r in found]


QUERIES = ("deploy database", "kafka latency note7", "gotcha retry Ada", "vector cache decision")


def test_recall_reads_the_copy_and_answers_as_without_it(
    fake_brain, fake_brain_path, pinned_clock, monkeypatch
) -> None:
    from cerebro import Brain

    shaped_brain(fake_brain)
    used = []
    original = warm_rows.RowsCopy.nodes_by_id

    def counted(self, ids, active_only):
        used.append(len(ids))
        return original(self, ids, active_only)

    monkeypatch.setattr(warm_rows.RowsCopy, "nodes_by_id", counted)
    fake_brain.recall("deploy")  # the statements answer, and a build starts on its thread
    assert fake_brain.handle._rows._copy is None and not used
    wait_for_builds()
    got = {(q, when): answers(fake_brain, q, when) for q in QUERIES for when in (None, "2026-03-10T00:00:00Z")}
    assert fake_brain.handle._rows.builds == 1 and used  # the copy was built, and read
    monkeypatch.setattr(warm_rows, "MAX_ROWS", 0)  # the same process, no copy: the statements answer
    with Brain.open(fake_brain_path) as plain:
        assert {(q, when): answers(plain, q, when) for q, when in got} == got
        assert plain.handle._rows._copy is None and plain.handle._rows.builds == 0
    assert all(got.values())
    process.ONE_SHOT = True  # a one-shot process keeps no copy at all
    try:
        with Brain.open(fake_brain_path) as once:
            once.recall("deploy")
            once.recall("deploy")
            assert once.handle._rows is None
    finally:
        process.ONE_SHOT = False


def test_a_build_reads_its_rows_with_the_collector_off(fake_brain, monkeypatch, request) -> None:
    """~300,000 long-lived objects at 100k memories: the collector walked them ~470 times a build (a fifth of its CPU,
    pauses of up to ~50 ms for every thread). Off while the rows are read, on again once the copy is made."""
    shaped_brain(fake_brain)
    events = watch_collector(monkeypatch, request, warm_rows, "cerebro-rows")
    fake_brain.recall("deploy")
    wait_for_builds()
    assert [what for what, _ in events] == ["paused", "read", "resumed"]
    assert events[1] == ("read", False)
    assert fake_brain.handle._rows.builds == 1


def warm(brain) -> warm_rows.RowsCopy:
    brain.recall("deploy")
    wait_for_builds()
    brain.recall("deploy")  # adopted
    copy = brain.handle._rows._copy
    assert copy is not None
    return copy


def test_every_kind_of_write_drops_the_copy(fake_brain, fake_brain_path, pinned_clock) -> None:
    from cerebro import Brain

    ids = fake_brain.add_many(corpus(3, 60))
    first = warm(fake_brain)
    # This handle's new memory (the raw connection's own write: data_version does not see it).
    mine = fake_brain.add("zanzibar deploy")
    assert mine in [r.node.id for r in fake_brain.recall("zanzibar", limit=5).results]
    assert fake_brain.handle._rows._copy is None
    # Another connection's write: a memory this process has in its copy, made more important and forgotten.
    second = warm(fake_brain)
    assert second is not first and second.nodes[ids[0]].importance != 0.95
    with Brain.open(fake_brain_path) as other:
        other.update(ids[0], importance=0.95)
    found = {r.node.id: r.node for r in fake_brain.recall(second.nodes[ids[0]].content, limit=60).results}
    assert found[ids[0]].importance == 0.95  # the next recall read the row again
    assert fake_brain.handle._rows._copy is None
    third = warm(fake_brain)
    assert third.nodes[ids[0]].importance == 0.95
    # This handle's ORM write (its own engine: another connection to the file).
    fake_brain.mark_consolidated([ids[1]])
    assert ids[1] not in [r.node.id for r in fake_brain.recall(third.nodes[ids[1]].content, limit=60).results]
    assert fake_brain.handle._rows._copy is not third


def test_touches_are_mirrored_and_the_copy_stays_current(fake_brain, pinned_clock) -> None:
    ids = fake_brain.add_many(corpus(4, 60))
    copy = warm(fake_brain)
    builds = fake_brain.handle._rows.builds
    touched = [*ids[:5], ids[0]]  # twice: counted twice, as the statement counts it
    assert fake_brain.touch_accessed(touched)
    assert fake_brain.touch_surfaced(ids[3:8])
    from cerebro.brain.retrieval import count_expansion_skip

    assert count_expansion_skip(fake_brain.handle)
    answers(fake_brain, "kafka latency")
    assert fake_brain.handle._rows._copy is copy and fake_brain.handle._rows.builds == builds  # still current
    with fake_brain.handle.snapshot() as conn:
        fresh = reads.nodes_by_id(conn, ids)
    assert copy.nodes == fresh  # what a row read gives now, touches included
    assert fresh[ids[0]].access_count == 2 and fresh[ids[4]].access_count == 1 and fresh[ids[7]].last_surfaced


def test_a_touch_that_could_not_write_leaves_the_copy_as_it_was(fake_brain, fake_brain_path, pinned_clock) -> None:
    from cerebro.db.engine import connect_raw

    ids = fake_brain.add_many(corpus(5, 40))
    copy = warm(fake_brain)
    other = connect_raw(fake_brain_path, wal=False)
    other.execute("BEGIN IMMEDIATE")  # another writer holds the lock past the touch's quarter second
    try:
        assert not fake_brain.touch_accessed(ids[:3])
    finally:
        other.rollback()
        other.close()
    assert copy.nodes[ids[0]].access_count == 0
    answers(fake_brain, "deploy")
    assert fake_brain.handle._rows._copy is copy


def test_a_write_that_failed_half_way_is_not_mirrored(fake_brain, pinned_clock) -> None:
    ids = fake_brain.add_many(corpus(7, 40))
    copy = warm(fake_brain)
    mirrored = []

    def half_way(conn) -> None:
        conn.execute("UPDATE nodes SET importance = 0.99 WHERE id = ?", (ids[0],))
        raise RuntimeError("the bookkeeping failed after a row changed")  # rolled back

    assert not fake_brain.handle.best_effort(half_way, mirror=mirrored.append)
    assert mirrored == []  # its effect is not known: the copy is dropped, not mirrored
    answers(fake_brain, "deploy")  # dropped: the statements answer, and a new copy is built
    assert fake_brain.handle._rows._copy is not copy
    wait_for_builds()
    answers(fake_brain, "deploy")
    rebuilt = fake_brain.handle._rows._copy
    assert rebuilt is not None and rebuilt is not copy
    with fake_brain.handle.snapshot() as conn:
        assert rebuilt.nodes[ids[0]] == reads.nodes_by_id(conn, [ids[0]])[ids[0]]  # the row as rolled back


def test_a_copy_is_built_once_the_recalls_at_a_state_have_earned_it(fake_brain, monkeypatch) -> None:
    monkeypatch.setattr(warm_rows, "BUILD_SHARE", 0.25)
    monkeypatch.setattr(warm_rows, "BUILD_SECONDS_PER_ROW", 0.01)  # 30 rows: a build worth 0.08 s of reading rows
    ids = fake_brain.add_many(corpus(6, 30))
    for _ in range(2):  # a couple of recalls' reads cost far less (a few ms, on a loaded machine tens: not 75)
        fake_brain.recall("deploy")
    rows, h = fake_brain.handle._rows, fake_brain.handle
    assert rows.builds == 0 and rows._asked[1] > 0  # the statements' time was counted
    with h.snapshot() as conn:
        assert rows.current(conn) is None
        rows.spent(conn, 0.05 - rows._asked[1])
    assert fake_brain.touch_accessed(ids[:2])  # mirrored: the count goes on at the state the touch made
    with h.snapshot() as conn:
        assert rows.current(conn) is None
        rows.spent(conn, 0.02)
        assert rows.builds == 0
        rows.spent(conn, 0.02)  # 0.09 s at this state (the touch's included): earned
        assert rows.builds == 1
    wait_for_builds()
    with h.snapshot() as conn:
        copy = rows.current(conn)
    assert copy is not None and copy.nodes[ids[0]].access_count == 1
    monkeypatch.setattr(warm_rows, "MAX_ROWS", 30)
    fake_brain.add("one more")  # a new state, of a brain above the cap
    with h.snapshot() as conn:
        assert rows.current(conn) is None
        rows.spent(conn, 100.0)
    assert rows.builds == 1 and rows._build is None


def test_a_brain_with_few_memories_and_many_edges_keeps_no_copy(fake_brain, monkeypatch) -> None:
    """Edges live in the copy too (~370 bytes each, 0.4 of a memory's row): a small brain linked a million times over
    would build a copy as large as a big brain's. They count towards the cap."""
    monkeypatch.setattr(warm_rows, "MAX_ROWS", 30)
    ids = fake_brain.add_many(corpus(6, 20))
    for k, source in enumerate(ids):  # 20 memories + 0.4 × 40 edges = 36 rows: over the cap
        fake_brain.add_edge(source, ids[(k + 1) % len(ids)], "supports")
        fake_brain.add_edge(source, ids[(k + 2) % len(ids)], "relates_to")
    fake_brain.recall("deploy")
    rows, h = fake_brain.handle._rows, fake_brain.handle
    with h.snapshot() as conn:
        assert rows.current(conn) is None
        assert rows._asked[2] == 20 + 16
        rows.spent(conn, 100.0)
    assert rows.builds == 0 and rows._build is None
    monkeypatch.setattr(warm_rows, "MAX_ROWS", 36)  # at the cap: built
    with h.snapshot() as conn:
        rows.spent(conn, 100.0)
    assert rows.builds == 1


def test_writes_during_a_build_are_mirrored_into_it_or_it_is_not_used(
    fake_brain, fake_brain_path, pinned_clock, monkeypatch
) -> None:
    ids = fake_brain.add_many(corpus(8, 40))
    rows, h = None, fake_brain.handle
    started = threading.Event()
    release = threading.Event()
    original = warm_rows.read_copy

    def slow_read(conn, stamp, **kwargs):
        started.set()
        release.wait(10)
        return original(conn, stamp, **kwargs)

    monkeypatch.setattr(warm_rows, "read_copy", slow_read)
    fake_brain.recall("deploy")  # a build starts: its snapshot is taken, then it waits
    assert started.wait(10)
    rows = h._rows
    assert fake_brain.touch_accessed(ids[:3])  # after the build's snapshot: mirrored into its copy when adopted
    release.set()
    wait_for_builds()
    answers(fake_brain, "deploy")
    copy = rows._copy
    assert copy is not None
    with h.snapshot() as conn:
        assert copy.nodes == reads.nodes_by_id(conn, ids)  # the touch counted once, as in the rows
    assert copy.nodes[ids[0]].access_count == 1
    # A write it cannot mirror (a new memory) while a build is under way: that copy is never used.
    started.clear()
    release.clear()
    fake_brain.add("a new state")
    fake_brain.recall("deploy")
    assert started.wait(10)
    fake_brain.add("another memory")
    release.set()
    wait_for_builds()
    found = [r.node.content for r in fake_brain.recall("another memory", limit=5).results]
    assert "another memory" in found and rows._copy is None
    # Another connection's commit while a build is under way: the copy (of the snapshot before it) is not used either.
    from cerebro import Brain

    wait_for_builds()  # the recall above started one at its own state
    fake_brain.add("a third state")
    started.clear()
    release.clear()
    fake_brain.recall("deploy")
    assert started.wait(10)
    with Brain.open(fake_brain_path) as other:
        other.update(ids[5], importance=0.97)
    release.set()
    wait_for_builds()
    assert {n.id: n for n in (r.node for r in fake_brain.recall("deploy", limit=60).results)}[ids[5]].importance == 0.97
    assert rows._copy is None


def test_a_build_that_cannot_start_costs_the_recall_nothing(fake_brain, pinned_clock, monkeypatch) -> None:
    fake_brain.add_many(corpus(9, 30))
    with monkeypatch.context() as patched:  # a process at its limit of threads
        patched.setattr(threading.Thread, "start", lambda self: (_ for _ in ()).throw(RuntimeError("can't start")))
        assert fake_brain.recall("deploy").results
    assert fake_brain.handle._rows._build is None and fake_brain.handle._rows._copy is None
    fake_brain.add("deploy later")  # a later state builds
    warm(fake_brain)


def test_a_closed_handle_reopens_without_the_copies_of_its_old_connection(fake_brain, fake_brain_path) -> None:
    from cerebro import Brain

    ids = fake_brain.add_many(corpus(10, 220))  # big enough for a warm vector index (store/warm.py MIN_VECTORS)
    reader = Brain.open(fake_brain_path)  # only reads: its copies are stamped with a new connection's first counters
    try:
        content = reader.get(ids[0]).node.content
        warm(reader)
        reader.recall("deploy", lanes=("vector",))
        reader.recall("deploy", lanes=("vector",))  # the warm vector index too
        assert reader.handle.warm_vectors() == 220
        reader.close()  # a Brain used after close() reopens: its new connection starts those counters afresh
        with Brain.open(fake_brain_path) as other:
            other.update(ids[0], importance=0.99)
            new = other.add("zebra crossing near the depot")
        found = {r.node.id: r.node for r in reader.recall(content, limit=60).results}
        assert found[ids[0]].importance == 0.99
        assert new in [r.node.id for r in reader.recall("zebra crossing near the depot", lanes=("vector",)).results]
    finally:
        reader.close()


def test_touches_read_their_ids_once(fake_brain, pinned_clock) -> None:
    ids = fake_brain.add_many(corpus(11, 30))
    copy = warm(fake_brain)
    assert fake_brain.touch_accessed(i for i in ids[:3])  # a generator: the write and the mirror see the same ids
    assert fake_brain.touch_surfaced(i for i in ids[3:5])
    with fake_brain.handle.snapshot() as conn:
        assert copy.nodes == reads.nodes_by_id(conn, ids) and copy.nodes[ids[0]].access_count == 1


def test_a_failed_build_is_not_retried_at_every_recall(fake_brain, pinned_clock, monkeypatch) -> None:
    ids = fake_brain.add_many(corpus(12, 30))

    def broken(conn, stamp, **kwargs):
        raise RuntimeError("the build's read failed")

    monkeypatch.setattr(warm_rows, "read_copy", broken)
    for _ in range(5):  # each followed by the touches a server commits: the state moves, mirrored
        fake_brain.touch_accessed([r.node.id for r in fake_brain.recall("deploy").results][:3])
        wait_for_builds()
    rows = fake_brain.handle._rows
    assert rows.builds == 1 and rows._copy is None
    fake_brain.add("deploy again")  # a state of its own: it may try once more
    fake_brain.recall("deploy")
    wait_for_builds()
    assert rows.builds == 2 and ids


def test_a_text_that_is_not_utf8_is_copied_as_the_statements_read_it(fake_brain) -> None:
    """A build reads with the driver's own (fast) decoder; a text that is not UTF-8 (Go cerebro's bytes) failed it,
    and the brain kept no copy. It reads the rows again leniently, as every statement does (U+FFFD for the bytes)."""
    ids = fake_brain.add_many(corpus(13, 30))
    fake_brain.handle.write_raw(
        lambda conn: conn.execute(
            "UPDATE nodes SET content = CAST(X'6465706C6F79FF6E6F746573' AS TEXT) WHERE id = ?", (ids[4],)
        )
    )
    fake_brain.recall("deploy")
    wait_for_builds()
    fake_brain.recall("deploy")  # adopts the copy
    copy = fake_brain.handle._rows._copy
    assert copy is not None and copy.nodes[ids[4]].content == "deploy\ufffdnotes"
    assert fake_brain.get(ids[4]).node.content == "deploy\ufffdnotes"


def test_a_rollback_journal_brain_keeps_no_copy(fake_brain_path) -> None:
    import sqlite3

    from cerebro import Brain

    with Brain.open(fake_brain_path) as brain:
        brain.add_many(corpus(13, 30))
    plain = sqlite3.connect(fake_brain_path)
    assert plain.execute("PRAGMA journal_mode = DELETE").fetchone()[0] == "delete"
    plain.close()
    with Brain.open(fake_brain_path) as brain:
        for _ in range(3):
            assert brain.recall("deploy").results
        wait_for_builds()
        assert brain.handle._rows.builds == 0  # a writer waiting on a recall's read lock would stall a build


def test_closing_the_brain_stops_a_build_under_way(fake_brain, monkeypatch) -> None:
    """A closed brain leaves no thread reading its file: the build's statement is interrupted, and close() waits."""
    fake_brain.add_many(corpus(11, 30))
    started = threading.Event()
    original = warm_rows.read_copy

    def endless_read(conn, stamp, **kwargs):
        started.set()  # a statement that runs until it is interrupted (or for minutes), then the copy
        count = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 4e9) SELECT count(*) FROM c"
        conn.execute(count).fetchall()
        return original(conn, stamp, **kwargs)

    monkeypatch.setattr(warm_rows, "read_copy", endless_read)
    fake_brain.recall("deploy")  # a build starts on its thread
    assert started.wait(10)
    rows = fake_brain.handle._rows
    assert rows._build is not None
    (build,) = rows._threads
    (thread,) = [t for t in threading.enumerate() if t.name == "cerebro-rows"]
    fake_brain.close()
    assert build.done.is_set() and build.copy is None
    thread.join(2)
    assert not thread.is_alive()


def test_a_build_begun_too_late_to_be_adopted_ends_by_itself_with_no_copy(fake_brain, monkeypatch) -> None:
    """A build whose snapshot began after the recall that started it went on cannot know the writes since: it is never
    adopted, so it stops at its first turn rather than read the whole brain (and hold off checkpoints) for nothing."""
    from cerebro.db import engine

    fake_brain.add_many(corpus(11, 30))
    connect, original = engine.connect_raw, warm_rows.read_copy
    rows_read: list[int] = []

    def slow_connect(*args, **kwargs):
        time.sleep(0.3)  # the recall waits 0.05 s for the snapshot to begin, then goes on without this build
        return connect(*args, **kwargs)

    def counted_read(conn, stamp, **kwargs):
        copy = original(conn, stamp, **kwargs)
        rows_read.append(len(copy.nodes))
        return copy

    monkeypatch.setattr(warm_rows, "BEGIN_SECONDS", 0.05)
    monkeypatch.setattr(engine, "connect_raw", slow_connect)
    monkeypatch.setattr(warm_rows, "read_copy", counted_read)
    fake_brain.recall("deploy")
    rows = fake_brain.handle._rows
    (build,) = rows._threads
    assert rows._build is None and build.stopped
    assert build.done.wait(10)  # without a close
    assert build.copy is None and rows_read == []  # ended at its first turn: read_copy never returned


def test_a_dropped_copy_is_freed_not_kept_by_the_build_that_made_it(fake_brain, pinned_clock, monkeypatch) -> None:
    """Once adopted, the copy lives on as the handle's or not at all: dropped at a new state whose recalls never earn
    a build, its memory is given back."""
    import gc
    import weakref

    fake_brain.add_many(corpus(14, 30))
    fake_brain.recall("deploy")
    wait_for_builds()
    fake_brain.recall("deploy")  # adopts it
    rows = fake_brain.handle._rows
    assert rows._copy is not None
    gone = weakref.ref(rows._copy)
    monkeypatch.setattr(warm_rows, "BUILD_SHARE", 1e9)  # the new state's recalls never earn a build
    fake_brain.add("deploy, at a new state")
    fake_brain.recall("deploy")  # drops the copy: it describes the state before
    gc.collect()
    assert rows._copy is None and gone() is None


def test_a_build_waits_while_this_process_holds_the_brain_and_not_for_ever(fake_brain, monkeypatch) -> None:
    """A build reads its rows a batch at a time, each when no recall or write of this process holds the brain's
    connection (two threads computing at once made a 15 ms recall take 600 ms) — but waits a bounded time for it."""
    from cerebro.store import rows_build

    ids = fake_brain.add_many(corpus(14, 60))
    h = fake_brain.handle
    monkeypatch.setattr(rows_build, "ROWS_A_TURN", 8)
    with h.snapshot() as conn:
        stamp = warm_rows.stamp_of(conn)
        expected = warm_rows.read_copy(conn, stamp)

    def started(build) -> threading.Thread:
        thread = threading.Thread(target=build.run, args=(fake_brain_file(fake_brain),), name="cerebro-rows")
        thread.start()
        assert build.begun.wait(10)
        return thread

    monkeypatch.setattr(rows_build, "TURN_SECONDS", 60.0)
    build = rows_build.Build(stamp, h._raw_lock)
    with h.raw_in_use():
        thread = started(build)
        assert not build.done.wait(0.5)  # its turn never comes while the connection is held
    assert build.done.wait(10) and build.copy is not None
    assert build.copy.nodes == expected.nodes and build.copy.order == expected.order and len(ids) == 60
    thread.join(10)

    monkeypatch.setattr(rows_build, "TURN_SECONDS", 0.01)  # held throughout: a batch every 10 ms all the same
    build = rows_build.Build(stamp, h._raw_lock)
    with h.raw_in_use():
        thread = started(build)
        assert build.done.wait(10) and build.copy is not None
    assert build.copy.nodes == expected.nodes
    thread.join(10)


def fake_brain_file(brain) -> str:
    with brain.handle.snapshot() as conn:
        return next(row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main")


def test_a_build_a_recall_starts_takes_turns_with_the_brains_own_recalls_and_writes(fake_brain, monkeypatch) -> None:
    from cerebro.store import rows_build

    fake_brain.add_many(corpus(15, 60))
    monkeypatch.setattr(warm_rows, "BUILD_SHARE", 0.0)
    monkeypatch.setattr(rows_build, "ROWS_A_TURN", 8)
    monkeypatch.setattr(rows_build, "TURN_SECONDS", 60.0)
    go, original = threading.Event(), warm_rows.read_copy

    def held_back(conn, stamp, **kwargs):
        go.wait(10)
        return original(conn, stamp, **kwargs)

    monkeypatch.setattr(warm_rows, "read_copy", held_back)
    fake_brain.recall("deploy")  # a build starts and waits for the signal
    (build,) = fake_brain.handle._rows._threads
    with fake_brain.handle.raw_in_use():  # as a recall or write of this process would
        go.set()
        assert not build.done.wait(0.5)
    assert build.done.wait(10) and build.copy is not None
    wait_for_builds()


def test_a_build_stopped_during_a_read_that_did_not_notice_keeps_no_copy(
    fake_brain, fake_brain_path, monkeypatch
) -> None:
    """A stop the read took for something else — SQLite's interrupt of the keyword map's statement reads as an index
    without a map, and an empty edges table takes no turn after it — still leaves the build without a copy."""
    from cerebro.store import rows_build

    fake_brain.add_many(corpus(17, 20))
    with fake_brain.handle.snapshot() as conn:
        stamp = warm_rows.stamp_of(conn)
    build = rows_build.Build(stamp)
    original = warm_rows.read_copy

    def read_unaware(conn, stamp, **kwargs):
        copy = original(conn, stamp, **kwargs)
        build.stopped = True  # stopped while it read, unnoticed
        return copy

    monkeypatch.setattr(warm_rows, "read_copy", read_unaware)
    build.run(fake_brain_path)
    assert build.done.is_set() and build.copy is None


def test_a_build_stopped_while_it_reads_the_keyword_map_ends_there(fake_brain, monkeypatch) -> None:
    """A stop seen at the keyword index's batches ends the read (it is not taken for an index without a map)."""
    from cerebro.store import rows_build

    fake_brain.add_many(corpus(16, 60))
    monkeypatch.setattr(rows_build, "ROWS_A_TURN", 8)
    turns = []

    def stopped_at_the_map() -> None:
        turns.append(1)
        if len(turns) > 8:  # 60 memory rows: 8 batches, then the keyword map's first
            raise InterruptedError("the build was stopped")

    with fake_brain.handle.snapshot() as conn:
        stamp = warm_rows.stamp_of(conn)
        with pytest.raises(InterruptedError):
            warm_rows.read_copy(conn, stamp, turn=stopped_at_the_map)
    assert len(turns) == 9
