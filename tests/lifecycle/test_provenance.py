"""Provenance: the derived_from walk (BFS, visited set, minimum depth, clamp, direction), get/recall
--with-provenance, and the read-time provenance_status / origin_status (spec §2, §5)."""

from __future__ import annotations

import itertools
import re
import sqlite3
from datetime import timedelta

import pytest

from cerebro import clock

from .conftest import MISSING_ID, UPGRADED_AT, UPGRADED_TEXT, assert_one_line_error, raw_exec, raw_rows

# --------------------------------------------------------------------------- the walk, on a bare edges table


def edges_conn(edges: list[tuple[str, str]] | list[tuple[str, str, str]]) -> sqlite3.Connection:
    """An in-memory database holding only an edges table: the walk needs nothing else."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE edges (id INTEGER PRIMARY KEY, source_id TEXT, target_id TEXT, relation TEXT)")
    for edge in edges:
        source, target, relation = (*edge, "derived_from")[:3]
        conn.execute("INSERT INTO edges (source_id, target_id, relation) VALUES (?, ?, ?)", (source, target, relation))
    return conn


def walk(edges, start="a", depth=5):
    from cerebro.provenance import walk as product_walk
    from cerebro.store.sqlite import SQLITE

    return product_walk(SQLITE, edges_conn(edges), start, max_depth=depth)


def test_a_wide_frontier_is_read_in_chunks_and_nothing_is_lost():
    # 1,200 sources at depth 1, each derived from one more: the depth-2 query runs over a frontier wider than
    # one chunk of ids (SQLite's variable limit), and every chunk's answers count.
    sources = [f"s{i:04d}" for i in range(1200)]
    order = walk([("a", s) for s in sources] + [(s, f"c{s}") for s in sources])
    assert [n for n, d in order if d == 1] == sources
    assert [n for n, d in order if d == 2] == [f"c{s}" for s in sources]


def as_depths(order: list[tuple[str, int]]) -> dict[str, int]:
    depths = dict(order)
    assert len(depths) == len(order), f"a node appears twice: {order}"
    return depths


def test_chain():
    chain = [("a", "b"), ("b", "c"), ("c", "d")]
    assert walk(chain) == [("a", 0), ("b", 1), ("c", 2), ("d", 3)]
    assert walk(chain, depth=2) == [("a", 0), ("b", 1), ("c", 2)]
    assert walk(chain, start="c") == [("c", 0), ("d", 1)]


def test_diamond_each_node_once_at_its_minimum_depth():
    diamond = [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("d", "e")]
    assert as_depths(walk(diamond)) == {"a": 0, "b": 1, "c": 1, "d": 2, "e": 3}
    # A shortcut to e makes its minimum depth 1, even though the long way is found in the same pass.
    assert as_depths(walk([*diamond, ("a", "e")])) == {"a": 0, "b": 1, "c": 1, "d": 2, "e": 1}
    # Breadth-first: every depth-1 node before any depth-2 node.
    depths = [d for _, d in walk(diamond)]
    assert depths == sorted(depths)


def test_cycles_and_self_loops_terminate():
    assert walk([("a", "a")], depth=100) == [("a", 0)]
    cycle = [("a", "b"), ("b", "c"), ("c", "a")]
    assert as_depths(walk(cycle, depth=100)) == {"a": 0, "b": 1, "c": 2}
    tangled = [("a", "b"), ("b", "a"), ("b", "b"), ("b", "c"), ("c", "b"), ("c", "a"), ("c", "d"), ("d", "d")]
    assert as_depths(walk(tangled, depth=100)) == {"a": 0, "b": 1, "c": 2, "d": 3}


def test_depth_zero_or_less_is_just_the_start():
    chain = [("a", "b"), ("b", "c")]
    assert walk(chain, depth=0) == [("a", 0)]
    assert walk(chain, depth=-3) == [("a", 0)]
    assert walk([], depth=5) == [("a", 0)]


def test_depth_is_clamped_at_100():
    chain = [(f"n{i}", f"n{i + 1}") for i in range(150)]
    order = walk(chain, start="n0", depth=1000)
    assert len(order) == 101
    assert order[-1] == ("n100", 100)


def test_only_outgoing_derived_from_is_followed():
    edges = [
        ("a", "b"),  # followed
        ("x", "a"),  # incoming derived_from: not followed
        ("a", "s", "supports"),
        ("a", "t", "supersedes"),
        ("a", "r", "relates_to"),
        ("b", "c", "supports"),
        ("b", "d"),  # followed
    ]
    assert as_depths(walk(edges)) == {"a": 0, "b": 1, "d": 2}


# --------------------------------------------------------------------------- through the brain and the CLI


@pytest.fixture
def chain(fake_brain, at):
    """n0 → n1 → … → n6 over derived_from, with distinct words in each node, plus noise edges."""
    at(0)
    ids = [
        fake_brain.add(content)
        for content in (
            "zebra quartz lantern summary",
            "walrus copper",
            "falcon marble",
            "otter velvet",
            "badger cobalt",
            "heron saffron",
            "lynx obsidian",
        )
    ]
    for parent, child in itertools.pairwise(ids):
        fake_brain.add_edge(parent, child, "derived_from")
    stranger = fake_brain.add("a stranger that cites n0")
    fake_brain.add_edge(stranger, ids[0], "derived_from")  # incoming: not part of n0's provenance
    fake_brain.add_edge(ids[0], stranger, "supports")  # other relation: ignored
    return ids


def provenance_of(data: dict) -> list[tuple[str, int]]:
    return [(p["id"], p["depth"]) for p in data["provenance"]]


def test_get_with_provenance_default_depth_is_5(run, chain):
    data = run("get", chain[0], "--with-provenance")
    assert provenance_of(data) == [(chain[i], i) for i in range(1, 6)]
    first = data["provenance"][0]
    assert first["content"] == "walrus copper" and first["type"] == "episode" and first["status"] == "active"


def test_the_libraries_default_depth_is_5_too(fake_brain, chain):
    walked = fake_brain.walk_provenance(chain[0])
    assert [(n.id, d) for n, d in walked] == [(chain[i], i) for i in range(6)]


def test_get_provenance_depth(run, chain):
    assert provenance_of(run("get", chain[0], "--provenance-depth", "2")) == [(chain[1], 1), (chain[2], 2)]
    assert provenance_of(run("get", chain[0], "--provenance-depth", "0")) == []
    assert provenance_of(run("get", chain[0], "--with-provenance", "--provenance-depth", "1")) == [(chain[1], 1)]
    assert provenance_of(run("get", chain[4], "--with-provenance")) == [(chain[5], 1), (chain[6], 2)]


def test_get_provenance_depth_negative_is_refused(cli, chain):
    assert_one_line_error(cli("get", chain[0], "--provenance-depth", "-1"), "provenance-depth", exit_code=2)


def test_get_provenance_markdown(run, chain):
    text = run("get", chain[0], "--provenance-depth", "3", fmt="md")
    lines = text.splitlines()
    start = lines.index("### Provenance")
    assert lines[start + 1 : start + 4] == [
        f"- {chain[1][:8]} [episode/active] walrus copper",
        f"  - {chain[2][:8]} [episode/active] falcon marble",
        f"    - {chain[3][:8]} [episode/active] otter velvet",
    ]


def test_without_the_flags_there_is_no_provenance(run, chain):
    data = run("get", chain[0])
    assert "provenance" not in data
    assert "### Provenance" not in run("get", chain[0], fmt="md")
    recalled = run("recall", "zebra quartz lantern")
    assert recalled["results"], recalled
    assert all("provenance" not in r for r in recalled["results"])
    assert "### Provenance" not in run("recall", "zebra quartz lantern", fmt="md")


def test_recall_with_provenance_default_depth_is_1(run, chain):
    data = run("recall", "zebra quartz lantern", "--with-provenance")
    by_id = {r["id"]: r for r in data["results"]}
    assert chain[0] in by_id
    assert provenance_of(by_id[chain[0]]) == [(chain[1], 1)]
    assert all("provenance" in r for r in data["results"])
    text = run("recall", "zebra quartz lantern", "--with-provenance", fmt="md")
    assert f"### Provenance\n- {chain[1][:8]} [episode/active] walrus copper" in text


def test_recall_provenance_depth_wins_over_the_bare_flag(run, chain):
    def walked(*flags):
        data = run("recall", "zebra quartz lantern", *flags)
        return provenance_of({r["id"]: r for r in data["results"]}[chain[0]])

    assert walked("--provenance-depth", "3") == [(chain[i], i) for i in range(1, 4)]
    assert walked("--with-provenance", "--provenance-depth", "2") == [(chain[1], 1), (chain[2], 2)]


def test_walk_through_the_brain_diamond_and_cycle(fake_brain, run, at):
    at(0)
    a, b, c, d, e = (fake_brain.add(f"node {x}") for x in "abcde")
    for source, target in ((a, b), (a, c), (b, d), (c, d), (d, a), (d, e), (e, b)):
        fake_brain.add_edge(source, target, "derived_from")
    # A self-loop, as an older brain or an import can hold (the library no longer makes one): written in the store.
    store = fake_brain.handle.store
    fake_brain.handle.write(
        lambda s: store.edges.upsert(
            s,
            source_id=d,
            target_id=d,
            relation="derived_from",
            weight=None,
            valid_at=None,
            invalid_at=None,
            metadata=None,
            now=clock.now(),
        )
    )
    walked = [(n.id, depth) for n, depth in fake_brain.walk_provenance(a, depth=100)]
    assert walked[0] == (a, 0)
    assert dict(walked) == {a: 0, b: 1, c: 1, d: 2, e: 3}
    assert len(walked) == 5
    assert sorted(provenance_of(run("get", a, "--provenance-depth", "100"))) == sorted([(b, 1), (c, 1), (d, 2), (e, 3)])
    assert [(n.id, depth) for n, depth in fake_brain.walk_provenance(a, depth=0)] == [(a, 0)]


def test_clamp_at_100_through_the_cli(fake_brain, run, at):
    at(0)
    ids = fake_brain.add_many([{"content": f"link number {i}"} for i in range(103)])
    for parent, child in itertools.pairwise(ids):
        fake_brain.add_edge(parent, child, "derived_from")
    walked = fake_brain.walk_provenance(ids[0], depth=1000)
    assert len(walked) == 101 and walked[-1][1] == 100 and walked[-1][0].id == ids[100]
    data = run("get", ids[0], "--provenance-depth", "1000")
    assert provenance_of(data) == [(ids[i], i) for i in range(1, 101)]


# --------------------------------------------------------------------------- provenance_status


# v4.sql: every node was written before the upgrade; only f0000004 has an outgoing derived_from edge.
V4_PROVENANCE = {
    "e0000001-0000-4000-8000-000000000001": "legacy",
    "c0000002-0000-4000-8000-000000000002": "legacy",
    "d0000003-0000-4000-8000-000000000003": "legacy",
    "f0000004-0000-4000-8000-000000000004": "complete",
    "e0000005-0000-4000-8000-000000000005": "legacy",
    "c0000006-0000-4000-8000-000000000006": "legacy",
    "c0000007-0000-4000-8000-000000000007": "legacy",
    "e0000008-0000-4000-8000-000000000008": "legacy",
    "d0000009-0000-4000-8000-000000000009": "legacy",
    "f0000010-0000-4000-8000-000000000010": "legacy",
}
# v5.sql keeps its own boundary, 2026-08-12 06:45:30 (never re-stamped).
V5_PROVENANCE = {
    "e0000001-0000-4000-8000-000000000001": "legacy",  # 08-01
    "c0000002-0000-4000-8000-000000000002": "legacy",  # 08-01
    "d0000003-0000-4000-8000-000000000003": "none",  # 08-13
    "f0000004-0000-4000-8000-000000000004": "complete",  # derived_from → e0000005
    "e0000005-0000-4000-8000-000000000005": "none",  # 08-14
    "c0000006-0000-4000-8000-000000000006": "legacy",  # 08-02
    "c0000007-0000-4000-8000-000000000007": "complete",  # derived_from → d0000003
    "e0000008-0000-4000-8000-000000000008": "legacy",  # 08-03
    "d0000009-0000-4000-8000-000000000009": "legacy",  # 08-04
    "f0000010-0000-4000-8000-000000000010": "none",  # 08-17
}


def meta(path, key):
    rows = raw_rows(path, "SELECT value FROM schema_meta WHERE key = ?", (key,))
    return rows[0][0] if rows else None


def listed(run_any) -> dict[str, dict]:
    return {n["id"]: n for n in run_any("list", "--limit", "100")["memories"]}


def test_v4_upgrade_legacy_none_complete(upgraded, run_any, at):
    from cerebro import Brain

    path = upgraded("v4")
    assert meta(path, "provenance_convention_since") == UPGRADED_TEXT
    nodes = listed(run_any)
    assert {i: n["provenance_status"] for i, n in nodes.items()} == V4_PROVENANCE
    assert run_any("get", "f0000004")["provenance_status"] == "complete"
    assert run_any("get", "e0000001")["provenance_status"] == "legacy"
    with Brain.open(path) as brain:
        assert brain.provenance_status(list(V4_PROVENANCE)) == V4_PROVENANCE

    at(UPGRADED_AT + timedelta(days=1))
    fresh = run_any("add", "a concept written after the upgrade", "--type", "concept")["id"]
    assert run_any("get", fresh)["provenance_status"] == "none"
    run_any("consolidate", "--into", fresh, "e0000001")
    assert run_any("get", fresh)["provenance_status"] == "complete"
    assert run_any("get", "e0000001")["provenance_status"] == "legacy"  # a source has no outgoing edge
    # recall (keyword mode: the v4 brain has no embedder) carries the statuses too.
    results = {r["id"]: r for r in run_any("recall", "half-open window")["results"]}
    assert results["c0000002-0000-4000-8000-000000000002"]["provenance_status"] == "legacy"
    assert results["c0000002-0000-4000-8000-000000000002"]["origin_status"] == "legacy"


def test_v5_keeps_its_boundary(upgraded, run_any):
    path = upgraded("v5")
    assert meta(path, "provenance_convention_since") == "2026-08-12 06:45:30"
    assert {i: n["provenance_status"] for i, n in listed(run_any).items()} == V5_PROVENANCE


def test_nothing_is_legacy_without_a_boundary(upgraded, run_any):
    path = upgraded("v4")
    raw_exec(path, "DELETE FROM schema_meta WHERE key = 'provenance_convention_since'")
    statuses = {i: n["provenance_status"] for i, n in listed(run_any).items()}
    assert statuses == {i: ("complete" if s == "complete" else "none") for i, s in V4_PROVENANCE.items()}
    raw_exec(path, "INSERT INTO schema_meta (key, value) VALUES ('provenance_convention_since', 'not a time')")
    assert {i: n["provenance_status"] for i, n in listed(run_any).items()} == statuses


def test_boundary_is_strict_and_compared_as_time(upgraded, run_any, at):
    path = upgraded("v4")
    at(UPGRADED_AT)
    on_the_boundary = run_any("add", "written at the upgrade instant")["id"]
    at(UPGRADED_AT - timedelta(seconds=1))
    just_before = run_any("add", "written a second before the upgrade instant")["id"]
    at(UPGRADED_AT + timedelta(minutes=30))
    half_hour_after = run_any("add", "written half an hour after the upgrade instant")["id"]
    nodes = listed(run_any)
    assert nodes[on_the_boundary]["provenance_status"] == "none"
    assert nodes[just_before]["provenance_status"] == "legacy"
    assert nodes[half_hour_after]["provenance_status"] == "none"
    # The origin boundary was stamped at the same instant, with the same strict comparison.
    assert nodes[on_the_boundary]["origin_status"] == "unknown"
    assert nodes[just_before]["origin_status"] == "legacy"
    # The same instant written as RFC 3339 with an offset: the comparison is on parsed time, so a node
    # stored as "2026-09-01 12:30:00" is after it (a string compare would call it earlier: ' ' < 'T').
    raw_exec(
        path, "UPDATE schema_meta SET value = '2026-09-01T14:00:00+02:00' WHERE key = 'provenance_convention_since'"
    )
    nodes = listed(run_any)
    assert nodes[on_the_boundary]["provenance_status"] == "none"
    assert nodes[just_before]["provenance_status"] == "legacy"
    assert nodes[half_hour_after]["provenance_status"] == "none"


# --------------------------------------------------------------------------- origin_status


@pytest.mark.parametrize("name", ["v4", "v5"])
def test_origin_legacy_for_upgraded_nodes(upgraded, run_any, at, name):
    path = upgraded(name)
    assert meta(path, "origin_convention_since") == UPGRADED_TEXT
    nodes = listed(run_any)
    assert set(nodes) == set(V4_PROVENANCE)
    assert {n["origin_status"] for n in nodes.values()} == {"legacy"}
    at(UPGRADED_AT + timedelta(hours=1))
    fresh = run_any("add", "a note after the upgrade")["id"]
    assert run_any("get", fresh)["origin_status"] == "unknown"


def test_origin_recorded_unknown(run, at, monkeypatch):
    at(0)
    anonymous = run("add", "nobody said who")["id"]
    by_flag = run("add", "by flag", "--origin-actor", "claude-code")["id"]
    monkeypatch.setenv("CEREBRO_ORIGIN_ACTOR", "codex")
    by_env = run("add", "by environment")["id"]
    monkeypatch.setenv("CEREBRO_ORIGIN_ACTOR", "")
    empty_env = run("add", "empty actor variable")["id"]
    nodes = listed(run)
    assert nodes[anonymous]["origin_status"] == "unknown"
    assert nodes[by_flag]["origin_status"] == "recorded" and nodes[by_flag]["origin_actor"] == "claude-code"
    assert nodes[by_env]["origin_status"] == "recorded" and nodes[by_env]["origin_actor"] == "codex"
    assert nodes[empty_env]["origin_status"] == "unknown"
    # supersede records the superseder's identity.
    monkeypatch.setenv("CEREBRO_ORIGIN_ACTOR", "reviewer")
    newer = run("supersede", anonymous, "somebody said who")["id"]
    assert run("get", newer)["origin_status"] == "recorded"
    assert run("get", anonymous)["origin_status"] == "unknown"


def test_statuses_on_every_node_json(run, at, fake_brain):
    at(0)
    node = run("add", "any memory at all")["id"]
    for data in (run("get", node), run("list")["memories"][0], run("recall", "any memory at all")["results"][0]):
        assert data["provenance_status"] == "none"
        assert data["origin_status"] == "unknown"


def test_unknown_start_node(cli, fake_brain_path):
    assert_one_line_error(cli("get", MISSING_ID, "--with-provenance"), exit_code=3)


def test_walk_on_an_upgraded_go_brain(upgraded, run_any):
    upgraded("v4")
    data = run_any("get", "f0000004", "--with-provenance")
    # derived_from → e0000005; e0000005's relates_to → e0000001 is not provenance.
    assert provenance_of(data) == [("e0000005-0000-4000-8000-000000000005", 1)]
    assert provenance_of(run_any("get", "e0000005", "--with-provenance")) == []


def test_recall_markdown_puts_each_provenance_under_its_own_result(fake_brain, run, at):
    """A memory whose text has a blank line in it must not shift the provenance sections of the results."""
    at(0)
    first_source = fake_brain.add("zebra source one")
    second_source = fake_brain.add("zebra source two")
    multi = fake_brain.add("zebra summary\n\nsecond paragraph about the zebra summary", type="concept")
    single = fake_brain.add("zebra other summary", type="concept")
    fake_brain.consolidate(multi, [first_source])
    fake_brain.consolidate(single, [second_source])
    text = run("recall", "zebra summary", "--with-provenance", fmt="md")
    sections = {s[:8]: s for s in re.split(r"(?m)^## ", text)[1:]}
    assert set(sections) == {multi[:8], single[:8]}, text
    for result, own, other in ((multi, first_source, second_source), (single, second_source, first_source)):
        section = sections[result[:8]]
        assert "### Provenance" in section, text
        assert f"- {own[:8]} [episode/consolidated]" in section, text
        assert other[:8] not in section, text


def test_origin_statuses_of_a_v6_brain(upgraded, run_any):
    """v6.sql keeps its origin boundary (2026-08-26 08:00:00): before it and without an actor is legacy;
    an actor (alice, claude-code, import) is recorded wherever the node falls; after it without one is
    unknown."""
    path = upgraded("v6")
    assert meta(path, "origin_convention_since") == "2026-08-26 08:00:00"
    statuses = {i[:8]: n["origin_status"] for i, n in listed(run_any).items()}
    assert statuses == {
        "e0000001": "legacy",
        "c0000002": "recorded",
        "d0000003": "recorded",
        "f0000004": "unknown",
        "e0000005": "legacy",
        "c0000006": "legacy",
        "c0000007": "recorded",
        "e0000008": "legacy",
        "d0000009": "legacy",
        "f0000010": "recorded",
        "e0000011": "recorded",
    }
