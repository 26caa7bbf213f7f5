"""A team brain's vector lane above the exact-search size: each project's own HNSW index (issue 20, ADR 0030).

The size is lowered for the tests (``HNSW_MIN_VECTORS``); the planner is told not to prefer a scan where a test
asks whether the index *can* serve the query (on a few dozen rows a scan is cheaper, and the planner knows it).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from cerebro import Brain
from cerebro.store.postgres import vec

SIZE = 30


@pytest.fixture
def small_size(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(vec, "HNSW_MIN_VECTORS", SIZE)
    return SIZE


@contextlib.contextmanager
def vec_threshold(size: int) -> Iterator[None]:
    saved, vec.HNSW_MIN_VECTORS = vec.HNSW_MIN_VECTORS, size
    try:
        yield
    finally:
        vec.HNSW_MIN_VECTORS = saved


def _fill(brain: Brain, count: int, word: str = "memory") -> list[str]:
    return brain.add_many([{"content": f"{word} number {i} about topic{i % 7} and item{i}"} for i in range(count)])


def _plan(brain: Brain, vector: list[float], k: int) -> str:
    conn = brain.handle.raw
    with brain.handle.snapshot():
        conn.execute("SET LOCAL enable_seqscan = off")
        sql = "EXPLAIN " + vec.knn_sql(brain.handle.name, len(vector))
        return "\n".join(r[0] for r in conn.execute(sql, (vec.to_text(vector), k)).fetchall())


def test_a_project_past_the_size_gets_its_own_index_which_its_query_uses(team_url, small_size) -> None:
    Brain.init(team_url, embed_provider="fake", team_project="big")
    Brain.init(team_url, embed_provider="fake", team_project="small")
    with Brain.open(team_url, team_project="big") as big, Brain.open(team_url, team_project="small") as small:
        _fill(small, small_size - 1)
        assert vec.project_indexes(small.handle.raw, "small") == {}  # below the size: exact search only
        _fill(big, small_size - 1)
        assert vec.project_indexes(big.handle.raw, "big") == {}
        _fill(big, 2)  # crosses it
        name = vec.index_name("big", 64)
        assert vec.project_indexes(big.handle.raw, "big") == {name: True}
        assert vec.project_indexes(small.handle.raw, "big") == {name: True}  # the catalogue is not project data

        probe = big.handle.embed(["memory number 3 about topic3"])[0]
        assert f"Index Scan using {name}" in _plan(big, probe, 10)  # row-level security on top, and still usable
        assert "hnsw" not in _plan(small, probe, 10)  # the other project's query cannot reach it

        exact = {node_id for node_id, _ in vec.knn(small.handle.raw, probe, 5)}
        assert exact and all(small.get(i).node.content.startswith("memory") for i in exact)
        found = big.recall("memory number 3 about topic3", limit=3).results
        assert found[0].node.content == "memory number 3 about topic3 and item3"


def test_ef_search_is_set_for_each_query_from_the_neighbours_it_asks_for(team_url) -> None:
    Brain.init(team_url, embed_provider="fake", team_project="p")
    with Brain.open(team_url, team_project="p") as brain:
        _fill(brain, 3)
        conn = brain.handle.raw
        probe = brain.handle.embed(["memory"])[0]
        for k, expected in ((5, "100"), (300, "600"), (4096, "1000")):
            with brain.handle.snapshot():
                assert len(vec.knn(conn, probe, k)) == 3
                assert conn.execute("SHOW hnsw.ef_search").fetchone()[0] == expected
                assert conn.execute("SHOW hnsw.iterative_scan").fetchone()[0] == "strict_order"
        assert conn.execute("SHOW hnsw.ef_search").fetchone()[0] == "40"  # pgvector's default again after it


def test_gc_at_session_end_builds_the_index_that_single_adds_left_for_later(team_url, small_size) -> None:
    Brain.init(team_url, embed_provider="fake", team_project="p")
    with Brain.open(team_url, team_project="p") as brain:
        for i in range(small_size):
            brain.add(f"note {i}")  # one memory at a time: no build in an agent's write
        assert vec.project_indexes(brain.handle.raw, "p") == {}
        brain.gc()
        assert vec.project_indexes(brain.handle.raw, "p") == {vec.index_name("p", 64): True}


def test_a_reembed_to_another_width_replaces_the_index(team_url, small_size) -> None:
    Brain.init(team_url, embed_provider="fake", team_project="p")
    with Brain.open(team_url, team_project="p") as brain:
        _fill(brain, small_size)
        assert set(vec.project_indexes(brain.handle.raw, "p")) == {vec.index_name("p", 64)}
        brain.reembed(provider="fake", model="fake-hash-32", dims=32)
        assert vec.project_indexes(brain.handle.raw, "p") == {vec.index_name("p", 32): True}
        probe = brain.handle.embed(["memory number 4 about topic4"])[0]
        assert len(probe) == 32
        assert f"Index Scan using {vec.index_name('p', 32)}" in _plan(brain, probe, 5)
        assert (
            brain.recall("memory number 4 about topic4", limit=1).results[0].node.content.startswith("memory number 4 ")
        )


def test_an_index_left_invalid_by_a_failed_build_is_made_again(team_url, small_size, postgres_server) -> None:
    import psycopg

    Brain.init(team_url, embed_provider="fake", team_project="p")
    with Brain.open(team_url, team_project="p") as brain:
        _fill(brain, small_size)
        name = vec.index_name("p", 64)
        conn = brain.handle.raw
        database = team_url.rsplit("/", 1)[1]
        admin_url = postgres_server.database_url(database, user="postgres", driver="")
        with psycopg.connect(admin_url, autocommit=True) as admin:  # what an interrupted concurrent build leaves
            admin.execute(f"UPDATE pg_index SET indisvalid = false WHERE indexrelid = '{name}'::regclass")
        assert vec.project_indexes(conn, "p") == {name: False}
        stray = vec.index_name("p", 32)  # of a width the project no longer has
        conn.execute(f"CREATE INDEX \"{stray}\" ON node_vectors (node_id) WHERE project = 'p'")
        assert vec.tend_index(conn) == name
        assert vec.project_indexes(conn, "p") == {name: True}
        assert vec.tend_index(conn) is None  # nothing left to do


def test_a_build_longer_than_the_statement_time_limit_is_not_cut_off(team_url, small_size) -> None:
    """A connection's statements are limited (STATEMENT_TIMEOUT_MS); an index build past ~50k vectors takes longer,
    and was cancelled — leaving an invalid index and search exact for ever."""
    Brain.init(team_url, embed_provider="fake", team_project="p")
    with Brain.open(team_url, team_project="p") as brain:
        with vec_threshold(10**9):
            _fill(brain, small_size)
        conn = brain.handle.raw
        conn.execute("SET statement_timeout = 1")  # any build outlasts 1 ms
        name = vec.index_name("p", 64)
        assert vec.tend_index(conn) == name
        assert vec.project_indexes(conn, "p") == {name: True}
        assert conn.execute("SHOW statement_timeout").fetchone()[0] == "30s"  # the connection's own limit, again


def test_a_push_that_crosses_the_size_builds_the_index(team_url, small_size, tmp_path) -> None:
    Brain.init(team_url, embed_provider="fake", team_project="p")
    Brain.init(tmp_path / "laptop.sqlite", embed_provider="fake")
    with Brain.open(tmp_path / "laptop.sqlite") as laptop, Brain.open(team_url, team_project="p") as team:
        _fill(laptop, small_size)
        assert laptop.team_push(team, everything=True).written == small_size
        assert vec.project_indexes(team.handle.raw, "p") == {vec.index_name("p", 64): True}


def test_a_team_brain_held_open_follows_another_machines_reembed(team_url, monkeypatch) -> None:
    """PostgreSQL has no cheap counter of other sessions' commits, so a team brain read its embedding settings once:
    after another machine's `reembed` a long-lived server kept embedding with the old model — its writes failed on
    the new width and its recalls ranked against vectors of another model. It reads them again every few seconds."""
    from cerebro.brain import handle as handle_module

    Brain.init(team_url, embed_provider="fake", team_project="p")
    with Brain.open(team_url, team_project="p") as held:
        first = held.add("the kettle needs descaling every month")
        assert held.recall("kettle descaling").ids[:1] == [first]  # settings read, embedder built (64 dims)
        with Brain.open(team_url, team_project="p") as other:
            other.reembed(provider="fake", model="fake-hash-32", dims=32)
        monkeypatch.setattr(handle_module, "SETTINGS_TTL_SECONDS", 1e-6)  # the next call is in another time bucket
        added = held.add("written after the switch: descale the kettle at 60 degrees")
        assert len(held.handle.embed(["a probe"])[0]) == 32
        assert held.stats().pending_embeddings == 0
        assert added in held.recall("descale the kettle at 60 degrees", limit=5).ids
