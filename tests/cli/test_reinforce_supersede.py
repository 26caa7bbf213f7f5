"""cerebro reinforce and supersede."""

from __future__ import annotations

import socket
from datetime import UTC, datetime

from cerebro import Brain, clock

from .helpers import MISSING_ID, assert_one_line_error, detail, fts_match, fts_rows, node, ok

T0 = datetime(2026, 3, 11, 10, 0, 0, tzinfo=UTC)
T1 = datetime(2026, 3, 12, 8, 0, 0, tzinfo=UTC)
T2 = datetime(2026, 3, 13, 8, 0, 0, tzinfo=UTC)


# ------------------------------------------------------------------------------------------ reinforce


def test_reinforce_counts_and_stamps(cli, add, brain_path):
    clock.set_now(T0)
    node_id = add("reinforce me")
    clock.set_now(T1)
    first = ok(cli("reinforce", node_id[:8]))
    assert first.stdout == f"Reinforced {node_id[:8]} (access count 1, reinforced 1x)\n"
    n = node(brain_path, node_id)
    assert (n.access_count, n.times_reinforced) == (1, 1)
    assert (n.last_accessed, n.last_reinforced) == (T1, T1)
    assert n.created_at == T0
    assert n.updated_at is None

    clock.set_now(T2)
    data = ok(cli("reinforce", node_id, "--format", "json")).json()
    assert data["id"] == node_id
    assert (data["access_count"], data["times_reinforced"]) == (2, 2)
    assert data["last_accessed"] == data["last_reinforced"] == "2026-03-13T08:00:00Z"


def test_reinforce_non_active_is_not_found(cli, add, brain_path, brain_snapshot):
    old = add("old")
    ok(cli("supersede", old, "new"))
    before = brain_snapshot(brain_path)
    assert_one_line_error(cli("reinforce", old), "not found or not active", exit_code=3)
    assert brain_snapshot(brain_path) == before


def test_reinforce_unknown_id(cli, brain_path, brain_snapshot):
    before = brain_snapshot(brain_path)
    assert_one_line_error(cli("reinforce", MISSING_ID), exit_code=3)
    assert brain_snapshot(brain_path) == before


# ------------------------------------------------------------------------------------------ supersede


def test_supersede(cli, add, brain_path, monkeypatch):
    clock.set_now(T0)
    old = add("Use pip for installs", "--type", "procedure", "--subtype", "tooling", "--importance", "0.9")
    clock.set_now(T1)
    monkeypatch.setenv("CEREBRO_ORIGIN_ACTOR", "superseder")

    result = ok(cli("supersede", old[:8], "Use uv for installs"))
    new = result.stdout.strip()
    assert result.stdout == new + "\n" and len(new) == 36 and new != old

    o, n = node(brain_path, old), node(brain_path, new)
    assert o.status == "superseded"
    assert o.content == "Use pip for installs"
    assert (n.status, n.type, n.subtype) == ("active", "procedure", "tooling")
    assert n.content == "Use uv for installs"
    assert n.decay_rate == 0.005
    assert n.importance == 0.9  # inherited, as type and subtype are (issue 16)
    assert n.created_at == T1
    assert (n.origin.actor, n.origin.channel, n.origin.host) == ("superseder", "cli", socket.gethostname())

    # A supersedes edge new → old, seen from both sides.
    edges = detail(brain_path, new).edges
    assert [(e.source_id, e.target_id, e.relation) for e in edges] == [(new, old, "supersedes")]
    assert [(e.source_id, e.target_id) for e in detail(brain_path, old).edges] == [(new, old)]

    # FTS: old row removed, new one indexed.
    rows = fts_rows(brain_path)
    assert old not in rows
    assert rows[new] == ("Use uv for installs", "tooling")
    assert fts_match(brain_path, "pip") == set()
    assert fts_match(brain_path, "uv") == {new}


def test_supersede_keeps_other_edges(cli, add, brain_path):
    old, other = add("old"), add("other")
    ok(cli("edge", other, old, "supports"))
    new = ok(cli("supersede", old, "new")).stdout.strip()
    pairs = {(e.source_id, e.relation) for e in detail(brain_path, old).edges}
    assert pairs == {(other, "supports"), (new, "supersedes")}


def test_supersede_json_and_overrides(cli, add, brain_path):
    old = add("old", "--type", "concept", "--subtype", "decision")
    data = ok(
        cli(
            "supersede",
            old[:5],
            "replacement",
            "--type",
            "reflection",
            "--subtype",
            "",
            "--importance",
            "0.7",
            "--metadata",
            '{"why": "moved"}',
            "--provenance-root",
            "--origin-actor",
            "bob",
            "--format",
            "json",
        )
    ).json()
    assert set(data) == {"id", "superseded"}
    assert data["superseded"] == old
    n = node(brain_path, data["id"])
    assert (n.type, n.subtype, n.importance, n.metadata) == ("reflection", None, 0.7, {"why": "moved"})
    assert n.provenance_root is True
    assert n.origin.actor == "bob"


def test_supersede_importance_given_overrides_and_zero_means_the_default(cli, add, brain_path):
    old = add("old", "--importance", "0.9")
    assert node(brain_path, ok(cli("supersede", old, "new", "--importance", "0.3")).stdout.strip()).importance == 0.3
    newer = add("another", "--importance", "0.9")
    assert node(brain_path, ok(cli("supersede", newer, "x", "--importance", "0")).stdout.strip()).importance == 0.5


def test_the_library_and_mcp_supersede_inherit_importance_too(fake_brain):
    old = fake_brain.add("old", importance=0.8)
    new = fake_brain.supersede(old, "new")
    assert fake_brain.get(new).node.importance == 0.8
    assert fake_brain.get(fake_brain.supersede(new, "newer", importance=0.2)).node.importance == 0.2


def test_supersede_subtype_override(cli, add, brain_path):
    old = add("old", "--subtype", "bug")
    new = ok(cli("supersede", old, "new", "--subtype", "fix")).stdout.strip()
    assert node(brain_path, new).subtype == "fix"


def test_supersede_reads_stdin(cli, add, brain_path):
    old = add("old")
    new = ok(cli("supersede", old, "-", stdin="from stdin\n")).stdout.strip()
    assert node(brain_path, new).content == "from stdin"


def test_supersede_twice_fails_unchanged(cli, add, brain_path, brain_snapshot):
    old = add("old")
    ok(cli("supersede", old, "new"))
    before = brain_snapshot(brain_path)
    assert_one_line_error(cli("supersede", old, "newer"), "not found or not active", exit_code=3)
    assert brain_snapshot(brain_path) == before


def test_supersede_bad_input_unchanged(cli, add, brain_path, brain_snapshot):
    old = add("old")
    before = brain_snapshot(brain_path)
    assert_one_line_error(cli("supersede", old, "new", "--type", "bogus"), exit_code=2)
    assert_one_line_error(cli("supersede", old, "new", "--importance", "2"), exit_code=2)
    assert_one_line_error(cli("supersede", old, "new", "--metadata", "{bad"), exit_code=2)
    assert_one_line_error(cli("supersede", old, " "), exit_code=2)
    assert_one_line_error(cli("supersede", MISSING_ID, "new"), exit_code=3)
    assert brain_snapshot(brain_path) == before
    with Brain.open(brain_path) as brain:
        assert brain.get(old).node.status == "active"
