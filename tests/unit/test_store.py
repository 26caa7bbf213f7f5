"""The store layer's small contracts, on a real brain: schema_meta's key/value functions, the relation
registry, the inbox table's rows, the pending-vector count and the lock-error test the retry layer uses."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cerebro import Brain, clock, reports, values
from cerebro import metadata as metadata_module
from cerebro.errors import NotFound
from cerebro.retry import is_lock_error
from cerebro.store import inbox, meta, relations, vec
from tests.conftest import team_brain

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def brain(tmp_path: Path, engine: str, request: pytest.FixtureRequest):
    """A brain without a provider: a file, or a team brain (the shared store modules run on both engines)."""
    if engine == "postgresql":
        path = team_brain(request, "none")
    else:
        path = tmp_path / "brain.sqlite"
        Brain.init(path, embed_provider="none")
    with Brain.open(path) as opened:
        yield opened


# ------------------------------------------------------------------ schema_meta


def test_meta_delete_says_whether_a_key_was_there(brain: Brain) -> None:
    brain.handle.write(lambda s: meta.put(s, "probe.key", "v"))
    assert brain.handle.write(lambda s: meta.delete(s, "probe.key")) is True
    assert brain.handle.write(lambda s: meta.delete(s, "probe.key")) is False
    assert brain.handle.read(lambda s: meta.get(s, "probe.key", "gone")) == "gone"


def test_meta_prefix_reads_and_deletes_take_every_key_under_the_prefix_and_no_other(brain: Brain) -> None:
    keys = {"job.a": "1", "job.zz": "2", "job.\u00e9t\u00e9": "3", "job._%": "4", "job.": "5"}
    outside = {"jobs": "6", "job": "7", "joa.z": "8", "jo_.x": "9"}
    brain.handle.write(lambda s: [meta.put(s, k, v) for k, v in {**keys, **outside}.items()])
    assert brain.handle.read(lambda s: meta.get_many(s, "job.")) == keys
    assert brain.handle.read(lambda s: meta.get_many(s, "jo_.")) == {"jo_.x": "9"}  # '_' is no wildcard
    assert brain.handle.write(lambda s: meta.delete_prefix(s, "job.")) == len(keys)
    assert brain.handle.read(lambda s: meta.get_many(s, "jo")) == outside


def test_meta_increment_counts_from_one_and_resets_what_is_not_a_number(brain: Brain) -> None:
    brain.handle.write(lambda s: meta.increment(s, "count.new"))
    brain.handle.write(lambda s: meta.increment(s, "count.new"))
    brain.handle.write(lambda s: meta.put(s, "count.odd", "12abc"))
    brain.handle.write(lambda s: meta.increment(s, "count.odd"))
    brain.handle.write(lambda s: meta.put(s, "count.big", "41"))
    brain.handle.write(lambda s: meta.increment(s, "count.big"))
    assert brain.handle.read(lambda s: meta.get_many(s, "count.")) == {
        "count.new": "2",
        "count.odd": "1",
        "count.big": "42",
    }


# ------------------------------------------------------------------ relation registry


def test_relations_add_list_and_remove(brain: Brain) -> None:
    row, created = brain.handle.write(lambda s: relations.add(s, "blocks", "causal", NOW))
    assert created is True
    assert relations.to_value(row) == reports.RelationInfo("blocks", "causal", NOW)
    again, created = brain.handle.write(lambda s: relations.add(s, "blocks", None, NOW))
    assert created is False and again.traversal_class == "causal"  # None keeps the class
    brain.handle.write(lambda s: relations.add(s, "blocks", "structural", NOW))
    names = brain.handle.read(lambda s: [(r.name, r.traversal_class) for r in relations.list_all(s)])
    assert names == sorted(names) and ("blocks", "structural") in names
    assert brain.handle.read(lambda s: relations.is_registered(s, "blocks")) is True
    assert brain.handle.read(lambda s: relations.is_registered(s, "no-such-relation")) is False
    assert brain.handle.write(lambda s: relations.remove(s, "blocks")) is True
    assert brain.handle.write(lambda s: relations.remove(s, "blocks")) is False
    assert brain.handle.read(lambda s: relations.is_registered(s, "blocks")) is False


def test_an_unreadable_registry_counts_every_relation_as_registered(brain: Brain) -> None:
    """Advisory only: when the registry cannot be read (a brain from before it existed), nothing warns."""

    class Broken:
        def get(self, *_args: object) -> None:
            raise RuntimeError("no such table: relations")

    assert relations.is_registered(Broken(), "anything") is True


# ------------------------------------------------------------------ inbox rows


def test_inbox_rows_read_back_with_their_defaults(brain: Brain) -> None:
    origin = values.Origin("agent", "cli", "s-1", "host")
    candidate_id = brain.handle.write(
        lambda s: inbox.insert(
            s,
            content="c",
            type="concept",
            subtype="decision",
            importance=0.25,
            metadata_={"k": 1},
            origin=origin,
            now=NOW,
        )
    )
    got = brain.handle.read(lambda s: inbox.get(s, candidate_id))
    assert got == reports.InboxCandidate(candidate_id, "concept", "decision", "c", {"k": 1}, 0.25, NOW, origin)
    brain.handle.write(
        lambda s: s.execute(
            inbox.text("UPDATE inbox_candidates SET importance = NULL, created_at = '' WHERE id = :id"),
            {"id": candidate_id},
        )
    )
    bare = brain.handle.read(lambda s: inbox.get(s, candidate_id))
    assert (bare.importance, bare.created_at) == (0.5, None)


def test_inbox_get_of_a_missing_id_names_it(brain: Brain) -> None:
    with pytest.raises(NotFound, match=r'^no inbox candidate found with id "nope"$'):
        brain.handle.read(lambda s: inbox.get(s, "nope"))


def test_inbox_list_is_oldest_first_and_limited(brain: Brain) -> None:
    ids = [
        brain.handle.write(
            lambda s, i=i: inbox.insert(
                s,
                content=f"c{i}",
                type="episode",
                subtype=None,
                importance=0.5,
                metadata_=None,
                origin=values.Origin(),
                now=NOW.replace(hour=10 - i),
            )
        )
        for i in range(3)
    ]
    assert [c.id for c in brain.handle.read(lambda s: inbox.list_all(s, None))] == ids[::-1]
    assert [c.id for c in brain.handle.read(lambda s: inbox.list_all(s, 2))] == ids[::-1][:2]


# ------------------------------------------------------------------ pending vectors


def test_the_vector_count_is_of_the_vectors_held(tmp_path: Path) -> None:
    """What `init --force` reads before it refuses to mix two models' vectors in one brain."""
    path = tmp_path / "fake.sqlite"
    Brain.init(path, embed_provider="fake")
    with Brain.open(path) as brain:
        assert brain.handle.read(vec.count) == 0
        first = brain.add("has a vector")
        brain.add("so has this one")
        assert brain.handle.read(vec.count) == 2
        brain.handle.write(lambda s: vec.delete(s, first))
        assert brain.handle.read(vec.count) == 1


def test_pending_vectors_are_the_active_nodes_without_one(tmp_path: Path) -> None:
    path = tmp_path / "fake.sqlite"
    Brain.init(path, embed_provider="fake")
    with Brain.open(path) as brain:
        assert brain.handle.read(vec.count_missing_active) == 0
        embedded = brain.add("has a vector")
        brain.handle.write(lambda s: vec.delete(s, embedded))
        assert brain.handle.read(vec.count_missing_active) == 1
        assert brain.handle.read(lambda s: vec.missing_active_ids(s, 5)) == [embedded]
    with Brain.open(path) as brain:
        brain.handle.write(lambda s: s.execute(meta.text("DROP TABLE vec_nodes")))
        assert brain.handle.read(vec.count_missing_active) == 0  # no vector table: nothing is pending
        assert brain.handle.read(lambda s: vec.missing_active_ids(s, 5)) == []


# ------------------------------------------------------------------ lock errors


class _Wrapped(Exception):
    """What SQLAlchemy raises: its own message, the driver's error as ``orig``."""

    def __init__(self, orig: BaseException) -> None:
        super().__init__("(OperationalError) statement failed")
        self.orig = orig


@pytest.mark.parametrize("message", ["database is locked", "Database is BUSY", "database table is locked: nodes"])
def test_lock_errors_are_recognised_directly_and_through_a_wrapper(message: str) -> None:
    assert is_lock_error(Exception(message))
    assert is_lock_error(_Wrapped(Exception(message)))


@pytest.mark.parametrize("message", ["database is corrupt", "no such table: nodes", "table is locked"])
def test_other_errors_are_not_lock_errors(message: str) -> None:
    assert not is_lock_error(Exception(message))
    assert not is_lock_error(_Wrapped(Exception(message)))


# ------------------------------------------------------------------ edges


def test_an_edge_reads_back_with_everything_it_was_given(brain: Brain, pinned_clock: datetime) -> None:
    a, b = brain.add("source memory"), brain.add("target memory")
    result = brain.add_edge(
        a,
        b,
        "supports",
        metadata={"why": "measured"},
        valid_at="2026-01-01T00:00:00Z",
        invalid_at="2026-06-01T00:00:00Z",
    )
    assert result.created is True
    edge = result.edge
    assert edge.id > 0 and (edge.source_id, edge.target_id, edge.relation) == (a, b, "supports")
    assert edge.weight == 1.0  # no weight given: 1, stored (exports and upstream read the column)
    assert (
        brain.handle.read(
            lambda s: s.execute(meta.text("SELECT weight FROM edges WHERE id = :i"), {"i": edge.id}).scalar()
        )
        == 1.0
    )
    assert edge.metadata == {"why": "measured"}
    assert edge.created_at == pinned_clock
    assert (edge.valid_at, edge.invalid_at) == (datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 6, 1, tzinfo=UTC))
    assert brain.get(a).edges == [edge]  # the same edge, read back from the store


def test_re_adding_an_edge_keeps_its_id_and_weight_and_another_relation_is_another_edge(brain: Brain) -> None:
    a, b = brain.add("source memory"), brain.add("target memory")
    first = brain.add_edge(a, b, "supports", weight=2.5, valid_at="2026-01-01T00:00:00Z").edge
    again = brain.add_edge(a, b, "supports")
    assert again.created is False and again.edge.id == first.id
    assert again.edge.weight == 2.5  # kept: no weight given
    assert again.edge.valid_at is None  # an omitted bound becomes open (upstream)
    other = brain.add_edge(a, b, "contradicts")
    assert other.created is True and other.edge.id != first.id
    assert sorted(e.relation for e in brain.get(a).edges) == ["contradicts", "supports"]


def test_an_edge_row_without_weight_or_id_reads_as_weight_1_and_id_0() -> None:
    from cerebro.models import Edge as EdgeRow
    from cerebro.store import edges

    value = edges.to_value(EdgeRow(source_id="a", target_id="b", relation="r", weight=None))
    assert (value.id, value.weight) == (0, 1.0)


# ------------------------------------------------------------------ vectors


def test_deleting_a_vector_stored_at_another_nodes_rowid_deletes_only_that_vector(tmp_path: Path) -> None:
    """Vectors are kept at their node's rowid, but a brain from elsewhere (upstream, an import) may hold them
    at other rowids: a delete must never take the vector that happens to sit at the node's rowid."""
    path = tmp_path / "fake.sqlite"
    Brain.init(path, embed_provider="fake")
    with Brain.open(path) as brain:
        a, b = brain.add("alpha kettle"), brain.add("beta descaling")

        def swap(session) -> None:
            rows = {
                r[0]: (r[1], r[2])
                for r in session.execute(
                    meta.text(
                        "SELECT v.node_id, n.rowid, v.embedding FROM vec_nodes v JOIN nodes n ON n.id = v.node_id"
                    )
                ).all()
            }
            session.execute(meta.text("DELETE FROM vec_nodes"))
            value = vec.bound(vec.element(session), ":v")  # a blob typed as the column's vectors
            for node_id, other in ((a, b), (b, a)):  # each vector at the other node's rowid
                session.execute(
                    meta.text(f"INSERT INTO vec_nodes (rowid, node_id, embedding) VALUES (:r, :id, {value})"),
                    {"r": rows[other][0], "id": node_id, "v": rows[node_id][1]},
                )

        brain.handle.write(swap)
        brain.handle.write(lambda s: vec.delete(s, a))
        left = brain.handle.read(lambda s: [r[0] for r in s.execute(meta.text("SELECT node_id FROM vec_nodes")).all()])
        assert left == [b]


def test_an_edge_without_a_weight_counts_as_weight_1_in_the_graph(brain: Brain) -> None:
    """Upstream's schema lets weight be NULL (a Go brain, a hand edit): expansion reads it as 1."""
    from cerebro.store import graph

    a, b, c = brain.add("a"), brain.add("b"), brain.add("c")
    brain.add_edge(a, b, "supports", weight=0.5)
    brain.add_edge(a, c, "supports", weight=2.0)
    brain.handle.write(lambda s: s.execute(meta.text("UPDATE edges SET weight = NULL WHERE target_id = :t"), {"t": c}))
    with brain.handle.snapshot() as conn:
        touching = sorted(graph.edges_touching(conn, [a]))
    assert touching == sorted([(a, b, "supports", 0.5), (a, c, "supports", 1.0)])


def test_vectors_are_found_where_they_are_stored_even_at_another_nodes_rowid(tmp_path: Path) -> None:
    path = tmp_path / "fake.sqlite"
    Brain.init(path, embed_provider="fake")
    with Brain.open(path) as brain:
        a, b, c = brain.add("alpha kettle"), brain.add("beta descaling"), brain.add("gamma boiler")
        with brain.handle.snapshot() as conn:
            before = vec.vectors_for(conn, [a, b, c])
        assert set(before) == {a, b, c} and all(len(v) == len(before[a]) for v in before.values())

        def move_a(session) -> None:  # a's vector to a rowid no node has
            blob = session.execute(meta.text("SELECT embedding FROM vec_nodes WHERE node_id = :id"), {"id": a}).scalar()
            session.execute(meta.text("DELETE FROM vec_nodes WHERE node_id = :id"), {"id": a})
            value = vec.bound(vec.element(session), ":v")
            session.execute(
                meta.text(f"INSERT INTO vec_nodes (rowid, node_id, embedding) VALUES (999, :id, {value})"),
                {"id": a, "v": blob},
            )

        brain.handle.write(move_a)
        with brain.handle.snapshot() as conn:
            assert vec.vectors_for(conn, [a, b, c, "no-such-id"]) == before
            assert vec.vectors_for(conn, [a]) == {a: before[a]}
            assert vec.vectors_for(conn, []) == {}


def test_knn_returns_k_nearest_and_nothing_for_k_0(tmp_path: Path) -> None:
    path = tmp_path / "fake.sqlite"
    Brain.init(path, embed_provider="fake")
    with Brain.open(path) as brain:
        ids = [brain.add(f"note {word}") for word in ("kettle", "boiler", "descaling")]
        query = brain.handle.embed(["note kettle"])[0]
        with brain.handle.snapshot() as conn:
            assert vec.knn(conn, query, 0) == [] and vec.knn(conn, query, -3) == []
            (nearest,) = vec.knn(conn, query, 1)
            assert nearest[0] == ids[0] and nearest[1] == pytest.approx(0.0, abs=1e-6)
            hits = vec.knn(conn, query, 10)
            assert hits[0][0] == ids[0] and len(hits) == 3


def test_a_memorys_keyword_row_is_found_at_its_memorys_rowid(tmp_path: Path) -> None:
    """FTS5 cannot search its node_id column: a delete by it read the whole keyword index, once for every memory an
    update, supersession, gc or import changed (an import of 6,000 records held the write lock for 10.5 s). A row is
    written at its memory's rowid (revision py0006, ADR 0066) and deleted there: a lookup, never a scan — unless a row
    another tool wrote elsewhere has to be found by id."""
    from cerebro.db.engine import connect_raw
    from cerebro.store import fts

    path = tmp_path / "b.sqlite"
    Brain.init(path, embed_provider="none")
    with Brain.open(path) as brain:
        brain.supersede(brain.add("a first draft"), "a second draft")  # FTS5's own choice would now differ
        kept, dropped = brain.add("the kettle is in the cupboard"), brain.add("the teapot is on the shelf")
    conn = connect_raw(path)
    rowids = dict(conn.execute("SELECT id, rowid FROM nodes WHERE status = 'active'").fetchall())
    assert dict(conn.execute("SELECT node_id, rowid FROM nodes_fts").fetchall()) == rowids  # written at their rowids
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    with conn:
        fts.unindex(conn, dropped)
    conn.set_trace_callback(None)
    (delete,) = [s for s in statements if s.startswith("DELETE")]  # found at its rowid: no search by id after it
    plan = " ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {delete}"))
    assert "SCAN nodes_fts_content" not in plan and "VIRTUAL TABLE INDEX 0:=" in plan, plan
    assert kept in [r[0] for r in conn.execute("SELECT node_id FROM nodes_fts")]
    assert dropped not in [r[0] for r in conn.execute("SELECT node_id FROM nodes_fts")]
    # A row another tool wrote elsewhere (Go cerebro lets FTS5 choose its rowid) is still found, by id.
    with conn:
        conn.execute(
            "INSERT INTO nodes_fts (rowid, node_id, content, subtype) VALUES (999, ?, 'teapot', '')", (dropped,)
        )
        fts.unindex(conn, dropped)
    assert dropped not in [r[0] for r in conn.execute("SELECT node_id FROM nodes_fts")]
    # A memory whose rowid a row of another holds is indexed beside it.
    with conn:
        conn.execute("DELETE FROM nodes_fts")
        conn.execute(
            "INSERT INTO nodes_fts (rowid, node_id, content, subtype) VALUES (?, 'other', 'x', '')", (rowids[kept],)
        )
        fts.index(conn, kept, "the kettle is in the cupboard", None)
    assert sorted(r[0] for r in conn.execute("SELECT node_id FROM nodes_fts")) == [kept, "other"]
    conn.close()


def test_edge_reads_by_id_use_the_ids_index_not_the_relations(tmp_path: Path) -> None:
    """In-degree and provenance reads filter by a relation and a list of ids: with ~150 ids SQLite's planner chose
    the relation's index and read every edge of that relation (issue 18: 24× slower at 100k memories). Each read
    must search by the ids' own index."""
    from cerebro.db.engine import connect_raw
    from cerebro.store import graph

    path = tmp_path / "b.sqlite"
    Brain.init(path, embed_provider="none")
    conn = connect_raw(path)
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    ids = [f"node-{i}" for i in range(150)]
    graph.citation_indegree(conn, ids, ("derived_from", "supports"))
    graph.targets(conn, ids, "derived_from")
    graph.sources_with(conn, ids, "derived_from")
    conn.set_trace_callback(None)
    plans = {
        sql.split(" WHERE ")[0]: " ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}"))
        for sql in statements
        if "FROM edges" in sql
    }
    conn.close()
    assert set(plans) == {
        "SELECT target_id, COUNT(*) FROM edges",
        "SELECT target_id FROM edges",
        "SELECT DISTINCT source_id FROM edges",
    }
    assert all("idx_edges_relation" not in plan for plan in plans.values()), plans
    assert "(target_id=?)" in plans["SELECT target_id, COUNT(*) FROM edges"]
    assert "(source_id=?)" in plans["SELECT target_id FROM edges"]
    assert "(source_id=?)" in plans["SELECT DISTINCT source_id FROM edges"]


def test_an_edge_added_without_a_weight_is_stored_with_weight_1(brain: Brain) -> None:
    """Upstream's default: recall's structural score multiplies by the weight, so NULL would silently mean 0 to a
    reader that does not know to read it as 1 (Go cerebro, a hand query)."""
    from cerebro.db.engine import connect_raw

    a, b = brain.add("source memory"), brain.add("target memory")
    brain.add_edge(a, b, "supports")
    brain.add_edge(b, a, "supports", weight=0.25)
    conn = connect_raw(brain.path, wal=False) if brain.path else brain.handle.connector.connect_raw()
    try:
        stored = dict(conn.execute("SELECT source_id, weight FROM edges").fetchall())
    finally:
        conn.close()
    assert stored == {a: 1.0, b: 0.25}


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        ("2026-03-11 10:00:00", datetime(2026, 3, 11, 10, tzinfo=UTC)),  # the storage layout (the fast parser)
        ("2026-03-11T12:00:00+02:00", datetime(2026, 3, 11, 10, tzinfo=UTC)),  # RFC 3339 from Go: converted
        ("2026-03-11T10:00:00Z", datetime(2026, 3, 11, 10, tzinfo=UTC)),
        ("2026-03-11T10:00:00", datetime(2026, 3, 11, 10, tzinfo=UTC)),
        ("2026-03-11", datetime(2026, 3, 11, tzinfo=UTC)),  # a bare date: midnight UTC
        ("2026-03-11T12:00+02", None),  # not a layout cerebro reads: unknown, never a wrong instant
        ("", None),
    ],
)
def test_raw_reads_take_every_time_layout_a_brain_may_hold(brain: Brain, stored: str, expected: datetime) -> None:
    from cerebro.store import reads

    node_id = brain.add("read on the hot path")
    brain.handle.raw.execute("UPDATE nodes SET last_reinforced = ? WHERE id = ?", (stored, node_id))
    with brain.handle.snapshot() as conn:
        assert reads.nodes_by_id(conn, [node_id])[node_id].last_reinforced == expected


def test_raw_reads_give_every_column_and_the_defaults_of_null_ones(brain: Brain) -> None:
    """The hot path's rows (recall, prime) read as the ORM's do: each column in its place, NULL counters as 0 and
    a NULL importance as the default 0.5 (Go-made rows may hold them)."""
    from cerebro.store import reads

    node_id = brain.add("read on the hot path", type="procedure", importance=0.8)
    other = brain.add("with NULL columns")
    raw = brain.handle.raw
    raw.execute(
        "UPDATE nodes SET access_count = 5, times_reinforced = 3, last_reinforced = '2026-03-11 10:00:00', "
        "provenance_root = 1, embedding_model = 'm-1', "
        "origin_actor = 'alice', origin_channel = 'mcp', origin_session = 's-1', origin_host = 'laptop' WHERE id = ?",
        (node_id,),
    )
    raw.execute(
        "UPDATE nodes SET importance = NULL, access_count = NULL, times_reinforced = NULL, status = NULL, "
        "origin_actor = 'bob' WHERE id = ?",
        (other,),
    )
    with brain.handle.snapshot() as conn:
        found = reads.nodes_by_id(conn, [node_id, other])
    node = found[node_id]
    assert (node.type, node.importance, node.decay_rate, node.access_count, node.times_reinforced) == (
        "procedure",
        0.8,
        values.DECAY_RATES["procedure"],
        5,
        3,
    )
    assert node.last_reinforced == datetime(2026, 3, 11, 10, tzinfo=UTC)
    assert node.origin == values.Origin("alice", "mcp", "s-1", "laptop")
    assert (node.provenance_root, node.embedding_model, node.status) == (True, "m-1", "active")
    bare = found[other]
    assert (bare.importance, bare.access_count, bare.times_reinforced, bare.status) == (0.5, 0, 0, "active")
    assert (bare.provenance_root, bare.embedding_model, bare.last_reinforced) == (False, "", None)


def test_re_adding_an_edge_replaces_its_metadata_only_when_some_is_given(brain: Brain) -> None:
    a, b = brain.add("a source memory"), brain.add("a target memory")
    brain.add_edge(a, b, "supports", metadata={"why": "first"})
    brain.add_edge(a, b, "supports")  # no metadata given: kept
    assert brain.get(a).edges[0].metadata == {"why": "first"}
    brain.add_edge(a, b, "supports", metadata={"why": "second"})
    assert brain.get(a).edges[0].metadata == {"why": "second"}


def test_re_adding_an_edge_with_a_new_weight_and_window_stores_them(brain: Brain) -> None:
    a, b = brain.add("a cause"), brain.add("its effect")
    brain.add_edge(a, b, "supports", weight=2.5, valid_at="2026-01-01T00:00:00Z")
    again = brain.add_edge(a, b, "supports", weight=0.75, valid_at="2026-02-01T00:00:00Z", invalid_at="2026-03-01")
    assert again.created is False
    (edge,) = brain.get(a).edges
    assert edge.weight == 0.75
    assert (edge.valid_at, edge.invalid_at) == (
        datetime(2026, 2, 1, tzinfo=UTC),
        datetime(2026, 3, 1, tzinfo=UTC),
    )


# ------------------------------------------------------------------ listing and counting


def test_list_filters_by_subtype_newest_first_and_cuts_at_the_limit(brain: Brain) -> None:
    """`cerebro list`'s store query: a subtype, or none ("" or NULL), newest first (created_at, then insertion
    order for memories of one instant), at most ``limit``."""
    from cerebro import clock

    clock.set_now(datetime(2026, 3, 1, tzinfo=UTC))
    old_decision = brain.add("we chose sqlite", subtype="decision")
    bare = brain.add("a plain note")
    clock.set_now(datetime(2026, 3, 2, tzinfo=UTC))
    new_decision = brain.add("we chose fts5", subtype="decision")
    empty = brain.add("another plain note", subtype="")
    bug = brain.add("a bug we hit", subtype="bug")
    clock.set_now(datetime(2026, 2, 28, tzinfo=UTC))
    backfilled = brain.add("written last, dated first")  # the newest row, the oldest memory
    clock.set_now(None)
    # cerebro stores "no subtype" as NULL; Go cerebro and hand edits leave "": both count as none
    brain.handle.write(lambda s: s.execute(meta.text("UPDATE nodes SET subtype = '' WHERE id = :i"), {"i": empty}))

    assert [n.id for n in brain.list(subtype="decision")] == [new_decision, old_decision]
    assert [n.id for n in brain.list(subtype="")] == [empty, bare, backfilled]  # no subtype: NULL or ""
    assert [n.id for n in brain.list(subtype=None)] == [empty, bare, backfilled]
    assert [n.id for n in brain.list()] == [bug, empty, new_decision, bare, old_decision, backfilled]
    assert [n.id for n in brain.list(limit=2)] == [bug, empty]
    assert [n.id for n in brain.list(subtype="decision", limit=1)] == [new_decision]


def test_stats_count_memories_by_type(brain: Brain) -> None:
    brain.add("a concept", type="concept")
    brain.add("another concept", type="concept")
    brain.add("a procedure", type="procedure")
    assert brain.stats().nodes_by_type == {"concept": 2, "procedure": 1, "episode": 0, "reflection": 0}


def test_meta_items_lists_every_key_or_those_with_a_prefix(brain: Brain) -> None:
    from cerebro.store import reads

    brain.config_set("recall_threshold", "0.4")
    with brain.handle.snapshot() as conn:
        every = reads.meta_items(conn)
        config = reads.meta_items(conn, prefix="config.")
    assert config == [("config.recall_threshold", "0.4")]
    assert ("config.recall_threshold", "0.4") in every and ("embedding_provider", "none") in every
    assert [key for key, _ in every] == sorted(key for key, _ in every)


def test_deleting_a_vector_drops_the_next_models_vector_of_that_node_too(tmp_path: Path) -> None:
    """During a re-embedding (``vec_nodes_next``), a node whose vector goes must not keep the new model's one, made
    from what it said before: the resumed run would carry it over."""
    path = tmp_path / "fake.sqlite"
    Brain.init(path, embed_provider="fake")
    with Brain.open(path) as brain:
        a, b = brain.add("alpha kettle"), brain.add("beta descaling")

        def start(session) -> None:
            vec.ensure_next_table(session, 4, "local")
            for node_id in (a, b):
                rowid = session.execute(meta.text("SELECT rowid FROM nodes WHERE id = :i"), {"i": node_id}).scalar()
                vec.put_next(session, rowid, node_id, [1.0, 0.0, 0.0, 0.0])

        brain.handle.write(start)
        brain.handle.write(lambda s: vec.delete(s, a))
        left = brain.handle.read(
            lambda s: [r[0] for r in s.execute(meta.text(f"SELECT node_id FROM {vec.NEXT_TABLE}")).all()]
        )
    assert left == [b]


def test_a_nodes_edges_are_both_ways_in_edge_order_and_as_of_keeps_the_half_open_window(brain: Brain) -> None:
    """What ``get --as-of`` shows: edges out of and into the memory, oldest first; at an instant, only those valid
    then — from valid_at (inclusive) to invalid_at (exclusive), an open bound always holding."""
    hub, a, b, c, d = (brain.add(f"memory {name}") for name in "hbacd")
    brain.add_edge(hub, a, "supports", valid_at="2026-01-01T00:00:00Z", invalid_at="2026-02-01T00:00:00Z")
    brain.add_edge(b, hub, "supports", valid_at="2026-02-01T00:00:00Z")
    brain.add_edge(hub, c, "contradicts", invalid_at="2026-01-15T00:00:00Z")
    brain.add_edge(d, a, "supports")  # not the hub's

    def around(at: str | None) -> list[tuple[str, str]]:
        instant = None if at is None else datetime.fromisoformat(at).replace(tzinfo=UTC)
        with brain.handle.snapshot() as conn:
            found = brain.handle.store.reads.edges_of(conn, hub, instant)
        return [(e.source_id, e.target_id) for e in found]

    assert around(None) == [(hub, a), (b, hub), (hub, c)]
    assert around("2025-12-31T23:59:59") == [(hub, c)]
    assert around("2026-01-01T00:00:00") == [(hub, a), (hub, c)]  # valid_at itself is in
    assert around("2026-01-15T00:00:00") == [(hub, a)]  # invalid_at itself is out
    assert around("2026-02-01T00:00:00") == [(b, hub)]


# ------------------------------------------------------------------ the keyword lane


def test_a_rare_word_outranks_a_common_one_even_in_a_longer_memory(brain: Brain) -> None:
    """BM25's inverse document frequency, on either engine (FTS5's own; computed in SQL on PostgreSQL)."""
    common = [brain.add(f"common note {i}") for i in range(5)]
    rare = brain.add("zebra crossing painted near the office entrance gate by the city")
    with brain.handle.snapshot() as conn:
        found = brain.handle.store.keywords.search(conn, "common zebra", 10)
    assert [node_id for node_id, _ in found][:1] == [rare]
    assert {node_id for node_id, _ in found} == {rare, *common}
    assert all(score < 0 for _, score in found)  # lower is better, as FTS5's


def test_dialect_names_the_engine_of_a_session_or_a_raw_connection(tmp_path: Path) -> None:
    """The few statements whose SQL differs ask this; no server is needed to know a PostgreSQL engine's name."""
    import sqlite3

    import sqlalchemy as sa
    from sqlalchemy.orm import Session

    from cerebro.db.postgres import RawConnection
    from cerebro.store.sql import dialect

    assert dialect(Session(sa.create_engine("postgresql+psycopg://nobody@127.0.0.1:1/none"))) == "postgresql"
    assert dialect(Session(sa.create_engine(f"sqlite:///{tmp_path / 'x.sqlite'}"))) == "sqlite"
    assert dialect(RawConnection(None)) == "postgresql"
    with sqlite3.connect(tmp_path / "y.sqlite") as conn:
        assert dialect(conn) == "sqlite"  # the standard connection has no dialect attribute


def test_node_ids_are_every_memorys_whatever_its_status_and_table_exists_names_tables(brain: Brain) -> None:
    kept = brain.add("kept")
    replaced = brain.add("replaced")
    newer = brain.supersede(replaced, "its newer version")
    store = brain.handle.store
    with brain.handle.snapshot() as conn:
        assert store.reads.node_ids(conn) == {kept, replaced, newer}
        assert store.reads.table_exists(conn, "edges") and store.reads.table_exists(conn, "nodes")
        assert not store.reads.table_exists(conn, "no_such_table")


# ------------------------------------------------------------------ nodes: ids and the ORM's reading of a row


def _insert_node(brain: Brain, node_id: str, **columns: object) -> None:
    names = ["id", "type", "content", "decay_rate", *columns]
    brain.handle.write_raw(
        lambda conn: conn.execute(
            f"INSERT INTO nodes ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
            (node_id, "episode", f"row {node_id}", 0.1, *columns.values()),
        )
    )


def test_each_refusal_to_resolve_an_id_names_what_was_asked(brain: Brain) -> None:
    from cerebro.errors import AmbiguousId, InvalidInput, quote

    _insert_node(brain, "abcd0000-0000-4000-8000-000000000001")
    _insert_node(brain, "abcd0000-0000-4000-8000-000000000002")
    missing = "0123abcd-0000-4000-8000-000000000000"

    def resolve(prefix: object) -> str:
        return brain.handle.read(lambda s: brain.handle.store.nodes.resolve_id(s, prefix))

    refused = [
        (None, InvalidInput, "empty ID prefix"),
        ("   ", InvalidInput, "empty ID prefix"),
        ("zz-q", InvalidInput, f"invalid id {quote('zz-q')}: ids are UUIDs (hex digits and '-')"),
        ("abc", InvalidInput, f"ID prefix too short (minimum 4 characters): {quote('abc')}"),
        (missing, NotFound, f"no node found with id {quote(missing)}"),
        ("ffff", NotFound, f"no node found with prefix {quote('ffff')}"),
        ("ABCD", AmbiguousId, f"ambiguous prefix {quote('ABCD')} matches 2 nodes; give more characters"),
    ]
    for prefix, error, message in refused:
        with pytest.raises(error) as caught:
            resolve(prefix)
        assert str(caught.value) == message, prefix
    assert resolve("ABCD0000-0000-4000-8000-000000000002") == "abcd0000-0000-4000-8000-000000000002"
    with pytest.raises(NotFound) as caught:
        brain.handle.read(lambda s: brain.handle.store.nodes.get_row(s, missing))
    assert str(caught.value) == f"no node found with id {quote(missing)}"


def test_a_row_reads_back_as_stored_and_its_nulls_as_the_defaults(brain: Brain) -> None:
    stamps = {"last_reinforced": "2026-03-01 10:00:00", "updated_at": "2026-03-02 11:00:00"}
    _insert_node(
        brain,
        "abcd0000-0000-4000-8000-00000000000a",
        times_reinforced=3,
        embedding_model="some-model",
        provenance_root=1,
        **stamps,
    )
    _insert_node(
        brain,
        "abcd0000-0000-4000-8000-00000000000b",
        importance=None,
        status=None,
        times_reinforced=None,
        access_count=None,
    )
    read = brain.handle.read(
        lambda s: [
            brain.handle.store.nodes.to_value(brain.handle.store.nodes.get_row(s, i))
            for i in ("abcd0000-0000-4000-8000-00000000000a", "abcd0000-0000-4000-8000-00000000000b")
        ]
    )
    full, bare = read
    assert (full.times_reinforced, full.embedding_model, full.provenance_root) == (3, "some-model", True)
    assert (clock.format_ts(full.last_reinforced), clock.format_ts(full.updated_at)) == (
        stamps["last_reinforced"],
        stamps["updated_at"],
    )
    assert (bare.importance, bare.status, bare.times_reinforced, bare.access_count) == (0.5, "active", 0, 0)
    assert (bare.embedding_model, bare.provenance_root, bare.last_reinforced, bare.updated_at) == (
        "",
        False,
        None,
        None,
    )


@pytest.mark.file_only  # sqlite-vec's table
def test_a_vector_table_made_for_a_brain_that_names_no_provider_stores_int8(tmp_path: Path) -> None:
    """A brain whose settings lost the provider (an adopted brain, a hand-edited one) gets the default element."""
    path = tmp_path / "brain.sqlite"
    Brain.init(path, embed_provider="none")
    with Brain.open(path) as brain:
        brain.handle.write(lambda s: meta.delete(s, "embedding_provider"))
        brain.handle.write(lambda s: vec.ensure_table(s, 8))
        assert brain.handle.read(vec.element) == vec.INT8


def _fake_brain_file(tmp_path: Path) -> Path:
    path = tmp_path / "fake.sqlite"
    Brain.init(path, embed_provider="fake")
    return path


@pytest.mark.file_only  # sqlite-vec's rowids
def test_a_vector_whose_rowid_another_holds_goes_elsewhere_and_both_are_found(tmp_path: Path) -> None:
    """A Go brain may store a vector at another memory's rowid: writing that memory's own vector must not collide."""
    with Brain.open(_fake_brain_file(tmp_path)) as brain:
        a, b = brain.add("alpha walrus"), brain.add("beta narwhal")
        va, vb = brain.handle.embed(["alpha walrus", "beta narwhal"])
        rowid_b = brain.handle.read(lambda s: vec._node_rowid(s, b))

        def go_layout(conn: object) -> None:
            conn.execute("DELETE FROM vec_nodes")  # type: ignore[attr-defined]
            conn.execute(  # type: ignore[attr-defined]
                "INSERT INTO vec_nodes (rowid, node_id, embedding) VALUES (?, ?, vec_int8(?))",
                (rowid_b, a, vec.to_blob(va, vec.INT8)),
            )

        brain.handle.write_raw(go_layout)
        brain.handle.write(lambda s: vec.upsert(s, b, vb))
        with brain.handle.snapshot() as conn:
            found = vec.vectors_for(conn, [a, b])
        assert set(found) == {a, b}
        assert found[b] == pytest.approx(vb, abs=0.02) and found[a] == pytest.approx(va, abs=0.02)


@pytest.mark.file_only  # sqlite-vec's rowids
def test_a_memory_thought_new_gets_one_vector_and_a_gone_memory_none(tmp_path: Path) -> None:
    """Two imports of one file at once: each thought the memories new (read before its transaction), the second
    wrote every vector beside the first (3,000 duplicates, one outliving a hard forget); an embedding finished after
    its memory was forgotten wrote an orphan (a review)."""
    with Brain.open(_fake_brain_file(tmp_path)) as brain:
        a = brain.add("alpha walrus")
        (va,) = brain.handle.embed(["alpha walrus again"])
        brain.handle.write(lambda s: vec.upsert(s, a, va, fresh=True))  # it had a vector already
        brain.handle.write(lambda s: vec.upsert(s, "no-such-memory", va, fresh=True))
        brain.handle.write(lambda s: vec.upsert(s, "no-such-memory-either", va))
        rows = brain.handle.read(lambda s: s.execute(meta.text("SELECT node_id FROM vec_nodes")).all())
        assert [r[0] for r in rows] == [a]
        with brain.handle.snapshot() as conn:
            assert vec.vectors_for(conn, [a])[a] == pytest.approx(va, abs=0.02)  # the one written last


@pytest.mark.file_only  # sqlite-vec's side table, by rowid
def test_a_new_memory_on_a_reused_rowid_is_not_taken_for_reembedded(tmp_path: Path) -> None:
    """A memory removed behind the store's back (Go cerebro) leaves its next-model vector; a new memory that gets
    its rowid must still be embedded by the re-embed under way."""
    with Brain.open(_fake_brain_file(tmp_path)) as brain:
        brain.add("alpha walrus")
        gone = brain.add("beta narwhal")
        rowid = brain.handle.read(lambda s: vec._node_rowid(s, gone))
        brain.handle.write(lambda s: vec.ensure_next_table(s, 64, "fake"))
        brain.handle.write(lambda s: vec.put_next(s, rowid, gone, [0.1] * 64))
        brain.handle.write_raw(lambda conn: conn.execute("DELETE FROM nodes WHERE id = ?", (gone,)))
        new = brain.add("gamma orca")
        assert brain.handle.read(lambda s: vec._node_rowid(s, new)) == rowid  # SQLite reused it
        with brain.handle.snapshot() as conn:
            assert new in {node_id for _, node_id, _ in vec.next_missing(conn, 10)}


def test_a_new_memorys_row_holds_null_metadata_no_reinforcement_and_a_provenance_flag_of_1(brain: Brain) -> None:
    root = brain.add("a root memory", provenance_root=True)
    plain = brain.add("a plain memory")

    def row(conn: object, node_id: str) -> tuple:
        return conn.execute(  # type: ignore[attr-defined]
            "SELECT metadata IS NULL, times_reinforced, provenance_root FROM nodes WHERE id = ?", (node_id,)
        ).fetchone()

    with brain.handle.snapshot() as conn:
        assert tuple(row(conn, root)) == (True, 0, 1)
        assert tuple(row(conn, plain)) == (True, 0, 0)


def test_a_brain_without_a_vector_table_reads_as_float32(brain: Brain) -> None:
    assert brain.handle.read(brain.handle.store.vectors.element) == vec.FLOAT  # no provider: no table


def test_fast_value_building_gives_what_the_dataclass_constructor_gives() -> None:
    """``node_from_row`` and ``values.evolve`` build frozen values without their ``__init__`` (speed, issue 18): sound
    only while no value class has a ``__post_init__`` or an ``init=False`` field, so that is checked for all."""
    import dataclasses
    import sys
    from datetime import UTC, datetime

    from cerebro import values
    from cerebro.store.reads import node_from_row

    for cls in vars(values).values():
        if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == values.__name__:
            assert not hasattr(cls, "__post_init__"), cls
            assert all(f.init for f in dataclasses.fields(cls)), cls
    row = ("n1", "concept", None, "text", '{"k": 1}', 0.7, 0.02, 3, 1, "active", "m", "2026-12-03 10:00:00", None,
           None, None, "2026-12-03 11:00:00", 1, "agent", "cli", "s1", "host")  # fmt: skip
    built = node_from_row(row)
    expected = values.Node(
        id="n1", type="concept", subtype=None, content="text", metadata={"k": 1}, importance=0.7, decay_rate=0.02,
        access_count=3, times_reinforced=1, status="active", embedding_model="m",
        created_at=datetime(2026, 12, 3, 10, tzinfo=UTC), last_accessed=None, last_reinforced=None, updated_at=None,
        last_surfaced=datetime(2026, 12, 3, 11, tzinfo=UTC), provenance_root=True,
        origin=values.Origin("agent", "cli", "s1", "host"),
    )  # fmt: skip
    assert built == expected and repr(built) == repr(expected) and type(built) is values.Node
    assert vars(built) == vars(expected)  # every field on the instance, as __init__ leaves it
    # Set in field order, one by one: the nodes share one key table (a rows copy keeps thousands, ADR 0051).
    assert list(vars(built)) == [f.name for f in dataclasses.fields(values.Node)]
    assert sys.getsizeof(vars(built)) < sys.getsizeof(dict(vars(built)))
    assert values.evolve(built, anchor_status="stale") == dataclasses.replace(expected, anchor_status="stale")
    assert built.anchor_status is None  # evolve copied: the original is untouched
    with pytest.raises(TypeError):
        values.evolve(built, no_such_field=1)


# ------------------------------------------------------------------ neighbours in writing order


def test_written_beside_gives_the_nearest_memory_written_before_and_after_whatever_was_deleted(brain: Brain) -> None:
    """Recall's adjacency step (ADR 0033) asks the store for these; a deleted memory leaves a gap in the rowids."""
    a, b, c, _deleted, e = (brain.add(text) for text in ("alpha", "bravo", "charlie", "delta", "echo"))
    brain.forget("delta", apply=True, hard=True)
    with brain.handle.snapshot() as conn:
        beside = brain.handle.store.reads.written_beside(conn, [a, c, e, "no-such-id"])
    ids = {node_id: tuple(n.id if n else None for n in pair) for node_id, pair in beside.items()}
    assert ids == {a: (None, b), c: (b, e), e: (c, None)}  # a gap is stepped over; an unknown id is absent
    assert beside[c][0] is not None and beside[c][0].content == "bravo"  # whole memories


def test_writing_order_is_the_time_of_writing_then_the_rowid_not_the_rowid_alone(brain: Brain) -> None:
    """An import or a sync inserts memories in another order than they were written (by id), keeping created_at."""
    late = datetime(2026, 3, 1, 12, 0, 2, tzinfo=UTC)
    clock.set_now(late)
    c = brain.add("charlie")  # inserted first, written last
    clock.set_now(late.replace(second=0))
    a, b = brain.add("alpha"), brain.add("bravo")  # the same second: the rowid orders them
    clock.set_now(late.replace(second=1))
    between = brain.add("between")
    clock.set_now(None)
    with brain.handle.snapshot() as conn:
        beside = brain.handle.store.reads.written_beside(conn, [a, b, between, c])
    ids = {node_id: tuple(n.id if n else None for n in pair) for node_id, pair in beside.items()}
    assert ids == {a: (None, b), b: (a, between), between: (b, c), c: (between, None)}


def test_written_near_gives_the_memories_written_within_reach_of_each(brain: Brain) -> None:
    """Recall's support step (ADR 0034) asks which memories were written within two places of its top results: places
    are counted in writing order across seconds, and a memory no longer active still takes its place."""
    start = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
    clock.set_now(start)
    a, b = brain.add("alpha"), brain.add("bravo")  # the same second: the rowid orders them
    clock.set_now(start.replace(second=1))
    c = brain.add("charlie")
    clock.set_now(start.replace(second=2))
    d, e = brain.add("delta"), brain.add("echo")
    corrected = brain.supersede(b, "bravo, corrected")  # bravo: no longer active, still a place; this one comes last
    clock.set_now(None)
    with brain.handle.snapshot() as conn:
        near = brain.handle.store.reads.written_near(conn, [a, c, e, "no-such-id"], 2)
        one = brain.handle.store.reads.written_near(conn, [a, c, e], 1)
        assert brain.handle.store.reads.written_near(conn, [a, c], 0) == {}
    assert near == {a: {b, c}, c: {a, b, d, e}, e: {c, d, corrected}}  # an unknown id is absent
    assert one == {a: {b}, c: {b, d}, e: {d, corrected}}


class _Recording:
    """A connection that keeps every statement run through it, to read the plans of the writing-order seeks."""

    def __init__(self, conn, statements: list[str]) -> None:
        self._conn, self._statements = conn, statements

    def execute(self, sql, params=()):
        self._statements.append(sql)
        return self._conn.execute(sql, params)


def test_the_writing_order_seeks_use_their_index_on_a_brain_file(tmp_path: Path) -> None:
    from cerebro.store import reads

    path = tmp_path / "brain.sqlite"
    Brain.init(path, embed_provider="none")
    with Brain.open(path) as opened:
        ids = opened.add_many([{"content": f"note {i}"} for i in range(50)])
        statements: list[str] = []
        with opened.handle.snapshot() as conn:
            recording = _Recording(conn, statements)

            reads.written_beside(recording, [ids[10]])
            plan = " ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + statements[0], (ids[10],)))
    assert plan.count("USING COVERING INDEX idx_nodes_writing_order") == 4 and "SCAN" not in plan


def test_the_seeks_of_written_near_use_their_index_on_a_brain_file(tmp_path: Path) -> None:
    """Ten seeks a memory at reach 2, all on the index: never a walk through the memories of one second (an add_many
    writes thousands in one)."""
    from cerebro.store import reads

    path = tmp_path / "brain.sqlite"
    Brain.init(path, embed_provider="none")
    with Brain.open(path) as opened:
        ids = opened.add_many([{"content": f"note {i}"} for i in range(50)])
        statements: list[str] = []
        with opened.handle.snapshot() as conn:
            recording = _Recording(conn, statements)

            assert reads.written_near(recording, [ids[10], ids[49]], 2) == {
                ids[10]: {ids[8], ids[9], ids[11], ids[12]},
                ids[49]: {ids[47], ids[48]},
            }
            plan = " ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + statements[0], (ids[10], ids[49])))
    assert len(statements) == 2  # the places, then their ids (by rowid)
    # each side: the nearest place in the memory's second (1 seek), the next from it (1 + 1), two beyond it (2)
    assert plan.count("USING COVERING INDEX idx_nodes_writing_order") == 10 and "SCAN" not in plan


def _prime_pool_brain(brain: Brain) -> dict[str, str]:
    """Memories for prime's pools: four concepts written in one second (three at importance 0.5), an old episode,
    ten days later three episodes and a concept in one second, an hour later the first concept updated. Returns
    name → id; leaves the clock two hours after that."""
    start = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
    clock.set_now(start)
    first = brain.add_many(
        [{"content": f"concept {i}", "type": "concept", "importance": w} for i, w in enumerate((0.5, 0.9, 0.5, 0.5))]
        + [{"content": "old episode", "type": "episode"}]
    )
    clock.set_now(start + timedelta(days=10))
    later = brain.add_many(
        [{"content": f"episode {i}", "type": "episode"} for i in range(3)]
        + [{"content": "concept 4", "type": "concept", "importance": 0.5}]
    )
    clock.set_now(start + timedelta(days=10, hours=1))
    brain.update(first[0], content="concept 0, revised")
    clock.set_now(start + timedelta(days=10, hours=2))
    names = ["c0", "c1", "c2", "c3", "old", "e0", "e1", "e2", "c4"]
    return dict(zip(names, first + later, strict=True))


def _prime_marks() -> dict[str, str]:
    now = clock.now()
    return {"week": clock.format_ts(now - timedelta(days=7)), "two_days": clock.format_ts(now - timedelta(hours=48))}


def test_prime_pools_take_the_best_of_their_order_and_ties_go_to_the_memory_written_last(brain: Brain) -> None:
    """Typed pools by importance, then time of writing; episodes of the last week and memories changed in the last
    two days newest first; within one second (an add_many writes hundreds in one) the memory written last wins."""
    from cerebro.store import reads

    ids = _prime_pool_brain(brain)
    name = {node_id: key for key, node_id in ids.items()}
    marks = _prime_marks()
    with brain.handle.snapshot() as conn:
        pool = {p: [name[n.id] for n in reads.prime_pool(conn, p, 10, marks)] for p in ("concept", "episode", "recent")}
        first_three = [name[n.id] for n in reads.prime_pool(conn, "concept", 3, marks)]
    assert pool["concept"] == ["c1", "c4", "c3", "c2", "c0"]
    assert first_three == ["c1", "c4", "c3"]
    assert pool["episode"] == ["e2", "e1", "e0"]  # the old episode is out of the week
    assert pool["recent"] == ["c0", "c4", "e2", "e1", "e0"]  # c0 by its update, the rest by their writing


def test_prime_pools_walk_an_index_on_a_brain_file(tmp_path: Path) -> None:
    """Each pool is a seek and a walk along an index (py0004, ADR 0037), never a sort of every memory of a type:
    ~145 ms of a session start at 100,000 memories before."""
    from cerebro.store import reads

    path = tmp_path / "brain.sqlite"
    Brain.init(path, embed_provider="none")
    with Brain.open(path) as opened:
        _prime_pool_brain(opened)
        statements: list[str] = []
        marks = _prime_marks()
        with opened.handle.snapshot() as conn:
            recording = _Recording(conn, statements)
            plans = {}
            for pool in ("concept", "procedure", "episode", "reflection", "recent"):
                reads.prime_pool(recording, pool, 10, marks)
                sql = statements[-1]
                params = {k: v for k, v in marks.items() if f":{k}" in sql}
                plans[pool] = " | ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params))
    for pool in ("concept", "procedure", "reflection"):
        assert plans[pool] == "SEARCH nodes USING INDEX idx_nodes_type_status_importance (type=? AND status=?)"
    assert plans["episode"] == "SEARCH nodes USING INDEX idx_nodes_writing_order (created_at>?)"
    assert "SEARCH nodes USING INDEX idx_nodes_updated_at (updated_at>?)" in plans["recent"]
    assert "SEARCH nodes USING INDEX idx_nodes_writing_order (created_at>?)" in plans["recent"]
    assert not any("TEMP B-TREE" in plan or "SCAN" in plan for plan in plans.values()), plans


@pytest.mark.parametrize(
    "stored",
    [
        "2026-01-02 03:04:05",  # the storage layout
        "2026-01-02T03:04:05Z",  # RFC 3339, a legacy row's
        "2026-W01-5 03:04:05",  # ISO week date: Python's fromisoformat takes it, the ORM's reader does not
        "2026-01-02 030405.1",
        "2026-01-02 03:04,05",
        "garbage at 19 chars",
        "",
    ],
)
def test_a_stored_time_reads_on_the_raw_connection_as_the_orm_reads_it(stored: str) -> None:
    from cerebro.models import StorageTime
    from cerebro.store.reads import _time

    assert _time(stored) == StorageTime().process_result_value(stored, None)


def test_metadata_that_is_not_an_object_reads_flagged_on_every_path(brain: Brain) -> None:
    """A hand-edited (or foreign) row's metadata that is a JSON array reads as flagged raw text — through the ORM (an
    update's answer) as through the raw reads (get), on a brain file and on a team brain alike."""
    node_id = brain.add("a memory whose metadata someone edited")
    brain.handle.write(
        lambda s: s.execute(meta.text("UPDATE nodes SET metadata = '[1,2]' WHERE id = :i"), {"i": node_id})
    )
    through_orm = brain.update(node_id, importance=0.7).metadata
    through_raw = brain.get(node_id).node.metadata
    assert through_orm == through_raw == {metadata_module.RAW_KEY: "[1,2]"}


def test_the_checks_list_every_table_with_its_columns(brain: Brain) -> None:
    """What doctor holds against the entities' tables (a column dropped by hand fails every read of its table)."""
    from cerebro.doctor.brain import head_columns

    with brain.handle.snapshot() as conn:
        found = brain.handle.store.checks.tables(conn)
    for table, columns in head_columns().items():
        assert columns <= found[table], table


def test_doctor_counts_keyword_rows_apart_from_their_memories_on_either_engine(brain: Brain) -> None:
    """``Checks.keyword_rows_apart`` (ADR 0066): none in a brain cerebro wrote; a team brain has no such rows."""
    brain.add("a memory at its own rowid")
    with brain.handle.snapshot() as conn:
        assert brain.handle.store.checks.keyword_rows_apart(conn) == 0
