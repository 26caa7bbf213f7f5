"""The server's freshness rules in-process (no MCP): what another connection's commit invalidates, what it
keeps, and how failures become one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from cerebro import Brain
from cerebro.errors import BrainNotFound
from cerebro.mcp.host import Host
from cerebro.mcp.warm import MemoEmbedder


def wait_for(condition) -> None:
    """Poll a background build's counter: the thread signals nothing else. The deadline only turns a hang
    into a failure."""
    import time

    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.01)


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
        settings = brain.handle.embedding_settings()
        brain.handle._mean = "cached"
        assert host.project() is brain and brain.handle._settings is settings and brain.handle._mean == "cached"
        brain.touch_accessed([])  # this server's own bookkeeping on its read connection changes nothing
        assert host.project() is brain and brain.handle._mean == "cached"
    finally:
        host.close()


def test_a_commit_elsewhere_drops_the_mean_and_re_reads_the_settings(fake_brain_path: Path, project: Path) -> None:
    host = Host(project)
    try:
        brain = host.project()
        embedder = host.project_slot.embedder()
        brain.handle._mean = "cached"
        with Brain.open(fake_brain_path) as elsewhere:
            elsewhere.add("a memory written by another process")
        assert host.project() is brain
        assert brain.handle._mean is None
        assert brain.embedder is embedder  # same model: kept loaded
        # settings changed without a schema change: the embedder is rebuilt for the new model
        other_writer(fake_brain_path, "UPDATE schema_meta SET value = 'fake-hash-64b' WHERE key = 'embedding_model'")
        assert host.project() is brain
        assert brain.handle.embedding_settings()[1] == "fake-hash-64b"
        assert brain.handle._embedder is None
    finally:
        host.close()


def test_a_replaced_file_is_opened_afresh_and_a_missing_one_says_how_to_fix_it(
    fake_brain_path: Path, project: Path
) -> None:
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
    from cerebro.mcp.warm import BackgroundWarm
    from cerebro.store import vec

    with Brain.open(fake_brain_path) as brain, Brain.open(fake_brain_path) as elsewhere:
        first = brain.add("the warm index holds this vector")
        warm = BackgroundWarm(fake_brain_path)
        with brain.handle.snapshot() as conn:
            assert not warm.ready(conn)  # nothing loaded: recall uses sqlite-vec meanwhile
        wait_for(lambda: warm.builds == 1)
        with brain.handle.snapshot() as conn:
            assert warm.ready(conn)
            query = brain.handle.embed(["warm index vector"])[0]
            assert warm.knn(query, 5) == [(i, pytest.approx(d, abs=1e-5)) for i, d in vec.knn(conn, query, 5)]
        second = elsewhere.add("written by another connection")
        with brain.handle.snapshot() as conn:
            assert not warm.ready(conn)  # stale after another connection's commit
        wait_for(lambda: warm.builds == 2)
        with brain.handle.snapshot() as conn:
            assert warm.ready(conn) and set(warm.vectors([first, second])) == {first, second}
            version = conn.execute("PRAGMA data_version").fetchone()[0]
        warm._copy = None
        warm.start(version)
        elsewhere.add("committed while that build ran")  # the build may or may not have seen it
        wait_for(lambda: warm.builds == 3)
        with brain.handle.snapshot() as conn:
            assert not warm.ready(conn)  # built for an older version: thrown away, never used


def test_own_writes_reach_the_warm_index_in_place_and_other_writers_still_drop_it(
    fake_brain_path: Path, project: Path
) -> None:
    """The server's ORM shares its read connection: its own commits leave data_version alone and update the
    warm index through on_vectors_written (no reload); another process's commit still makes it stale."""
    from cerebro.values import Origin

    host = Host(project)
    try:
        brain = host.project()
        brain.add("an old memory about the parser")
        slot = host.project_slot
        slot.rewarm()  # starts the first build
        warm = brain.handle._warm
        wait_for(lambda: warm.builds == 1)
        with brain.handle.snapshot() as conn:
            assert warm.ready(conn)
            version = conn.execute("PRAGMA data_version").fetchone()[0]
        new = brain.add("fresh knowledge about websocket retries", origin=Origin(channel="mcp"))
        with brain.handle.snapshot() as conn:
            assert conn.execute("PRAGMA data_version").fetchone()[0] == version  # own commit: unchanged
            assert warm.ready(conn)  # still current, no rebuild
            query = brain.handle.embed(["fresh knowledge about websocket retries"])[0]
            assert warm.knn(query, 1)[0][0] == new
        assert host.project() is brain and warm.builds == 1
        with Brain.open(fake_brain_path) as elsewhere:
            elsewhere.add("written by another process")
        with brain.handle.snapshot() as conn:
            assert not warm.ready(conn)  # another process committed: rebuilt off the brain thread
    finally:
        host.close()


def test_own_writes_during_a_build_are_applied_when_it_is_adopted(
    fake_brain_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from cerebro.store import warm as warm_module

    loaded, go_on = threading.Event(), threading.Event()
    load = warm_module.WarmVectors.load

    def load_then_wait(self, conn):  # the build has read the brain, then stalls
        result = load(self, conn)
        loaded.set()
        assert go_on.wait(60)
        return result

    monkeypatch.setattr(warm_module.WarmVectors, "load", load_then_wait)
    host = Host(project)
    try:
        brain = host.project()
        brain.add("an old memory about the parser")
        warm = brain.handle._warm
        with brain.handle.snapshot() as conn:
            assert not warm.ready(conn)  # starts a build
        assert loaded.wait(60)
        new = brain.add("written while the index was being built")  # after the build read the brain
        go_on.set()
        wait_for(lambda: warm.builds == 1)
        with brain.handle.snapshot() as conn:
            assert warm.ready(conn)
            query = brain.handle.embed(["written while the index was being built"])[0]
            assert warm.knn(query, 1)[0][0] == new
        assert warm._log == []
    finally:
        host.close()


def test_the_warm_up_loads_and_connects_the_orm_the_writes_use(tmp_path, isolated_home):
    """The server's first write must not pay for the ORM's import, its first connection and its dialect's set-up:
    the warm-up runs a statement through it (stats, which once did, reads without the ORM now)."""
    import os
    import subprocess
    import sys

    from cerebro import Brain, paths

    project = tmp_path / "project"
    project.mkdir()
    Brain.init(paths.project_brain_path(project), embed_provider="none")
    program = (
        "import sys\n"
        "from pathlib import Path\n"
        "from cerebro.mcp.host import Host\n"
        "host = Host(Path(sys.argv[1]))\n"
        "host.project_slot.warm_up()\n"
        "engine = host.project_slot.brain().handle._engine\n"
        "connected = engine is not None and engine.dialect.server_version_info is not None\n"
        "print('cerebro.models' in sys.modules, connected)\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", program, str(project)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "CEREBRO_HOME": str(isolated_home)},
        check=False,
    )
    assert shown.stdout.split() == ["True", "True"], shown.stdout + shown.stderr


def test_remember_embeds_the_text_as_stored_never_its_secret(fake_brain_path: Path, project: Path, monkeypatch) -> None:
    """The near-duplicate search embedded the content before the add redacted it: with a network provider the
    secret left the machine (a review; ADR 0027 says text is redacted before it is embedded)."""
    from cerebro.mcp import tools

    token = "ghp_zz3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"
    host = Host(project)
    try:
        host.begin()
        brain = host.project()
        embedded: list[str] = []
        real = brain.handle.embed

        def recording(texts, **kwargs):
            embedded.extend(texts)
            return real(texts, **kwargs)

        monkeypatch.setattr(brain.handle, "embed", recording)
        answer = tools.remember(host, {"content": f"CI deploy uses GITHUB_TOKEN={token}"})
        assert embedded and not any(token in text for text in embedded)
        assert brain.get(answer.data["id"]).node.content == "CI deploy uses GITHUB_TOKEN=[secret:github-token]"
        assert host.notices == ["redacted 1 secret before storing (github-token)"]
    finally:
        host.close()
