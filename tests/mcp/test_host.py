"""The server's freshness rules in-process (no MCP): what another connection's commit invalidates, what it
keeps, and how failures become one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from cerebro import Brain
from cerebro.errors import BrainNotFound
from cerebro.mcp.host import Host, MemoEmbedder


def other_writer(path: Path, sql: str, params: tuple = ()) -> None:
    import sqlean.dbapi2 as sqlean

    conn = sqlean.connect(str(path), isolation_level=None)
    try:
        conn.execute(sql, params)
    finally:
        conn.close()


def test_nothing_is_re_read_while_nobody_else_commits(fake_brain_path: Path, project: Path) -> None:
    host = Host(project)
    try:
        brain = host.project()
        settings = brain._embedding_settings()
        brain.__dict__["_mean"] = "cached"
        assert host.project() is brain and brain._settings is settings and brain.__dict__["_mean"] == "cached"
        brain.touch_accessed([])  # this server's own bookkeeping on its read connection changes nothing
        assert host.project() is brain and brain.__dict__.get("_mean") == "cached"
    finally:
        host.close()


def test_a_commit_elsewhere_drops_the_mean_and_re_reads_the_settings(fake_brain_path: Path, project: Path) -> None:
    host = Host(project)
    try:
        brain = host.project()
        embedder = host.project_slot.embedder()
        brain.__dict__["_mean"] = "cached"
        with Brain.open(fake_brain_path) as elsewhere:
            elsewhere.add("a memory written by another process")
        assert host.project() is brain
        assert "_mean" not in brain.__dict__
        assert brain.embedder is embedder  # same model: kept loaded
        # settings changed without a schema change: the embedder is rebuilt for the new model
        other_writer(fake_brain_path, "UPDATE schema_meta SET value = 'fake-hash-64b' WHERE key = 'embedding_model'")
        assert host.project() is brain
        assert brain._embedding_settings()[1] == "fake-hash-64b"
        assert brain._embedder is None
    finally:
        host.close()


def test_a_replaced_file_is_opened_afresh_and_a_missing_one_says_how_to_fix_it(fake_brain_path: Path, project: Path) -> None:
    host = Host(project)
    try:
        first = host.project()
        embedder = host.project_slot.embedder()
        copy = fake_brain_path.with_name("copy.sqlite")
        with Brain.open(fake_brain_path) as brain:
            brain.add("in the copy")
            brain.export_sqlite(copy)
        copy.replace(fake_brain_path)
        second = host.project()
        assert second is not first and [n.content for n in second.list()] == ["in the copy"]
        assert second.embedder is embedder  # the same model: still loaded
        fake_brain_path.unlink()
        with pytest.raises(BrainNotFound, match=r"run 'cerebro init' there first"):
            host.project()
    finally:
        host.close()


def test_the_memo_embedder_hands_back_a_held_vector_once() -> None:
    class Counting:
        calls = 0
        dimensions = 3

        def embed(self, texts):
            Counting.calls += 1
            return [[1.0, 0.0, 0.0] for _ in texts]

    memo = MemoEmbedder(Counting())
    memo.hold("same", [0.0, 1.0, 0.0])
    assert memo.embed(["same"]) == [[0.0, 1.0, 0.0]] and Counting.calls == 0
    assert memo.embed(["same"]) == [[1.0, 0.0, 0.0]] and Counting.calls == 1
    memo.hold("this", [0.0, 0.0, 1.0])
    assert memo.embed(["other"]) == [[1.0, 0.0, 0.0]] and memo.embed(["this"]) == [[1.0, 0.0, 0.0]]
    assert memo.dimensions == 3


def test_failures_become_one_line_and_unexpected_ones_drop_the_brain() -> None:
    import sqlean.dbapi2 as sqlean

    pytest.importorskip("mcp")
    from cerebro.errors import NotFound
    from cerebro.mcp.server import failure_message, one_line_error

    assert failure_message(NotFound('no node found with prefix "abcd"')) == ('no node found with prefix "abcd"', False)
    message, reset = failure_message(sqlean.OperationalError("database is locked"))
    assert "stayed locked by other writers" in message and reset
    message, reset = failure_message(sqlean.DatabaseError("database disk image is malformed"))
    assert "could not be read" in message and reset
    message, reset = failure_message(KeyError("x"))
    assert message.startswith("internal error: KeyError") and reset
    assert one_line_error("two\nlines  here") == "cerebro: error: two lines here"


def test_the_warm_index_is_rebuilt_off_thread_and_only_used_when_current(fake_brain_path: Path) -> None:
    import time

    from cerebro.mcp.host import BackgroundWarm
    from cerebro.store import vec

    def wait_for(condition) -> None:
        deadline = time.monotonic() + 60
        while not condition():
            assert time.monotonic() < deadline
            time.sleep(0.01)

    with Brain.open(fake_brain_path) as brain, Brain.open(fake_brain_path) as elsewhere:
        first = brain.add("the warm index holds this vector")
        warm = BackgroundWarm(fake_brain_path)
        with brain._snapshot() as conn:
            assert not warm.ready(conn)  # nothing loaded: recall uses sqlite-vec meanwhile
        wait_for(lambda: warm.builds == 1)
        with brain._snapshot() as conn:
            assert warm.ready(conn)
            query = brain._embed(["warm index vector"])[0]
            assert warm.knn(query, 5) == [(i, pytest.approx(d, abs=1e-5)) for i, d in vec.knn(conn, query, 5)]
        second = elsewhere.add("written by another connection")
        with brain._snapshot() as conn:
            assert not warm.ready(conn)  # stale after another connection's commit
        wait_for(lambda: warm.builds == 2)
        with brain._snapshot() as conn:
            assert warm.ready(conn) and set(warm.vectors([first, second])) == {first, second}
            version = conn.execute("PRAGMA data_version").fetchone()[0]
        warm._copy = None
        warm.start(version)
        elsewhere.add("committed while that build ran")  # the build may or may not have seen it
        wait_for(lambda: warm.builds == 3)
        with brain._snapshot() as conn:
            assert not warm.ready(conn)  # built for an older version: thrown away, never used
