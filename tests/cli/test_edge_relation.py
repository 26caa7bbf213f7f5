"""cerebro edge (upsert semantics, windows, registry warnings) and relation add|list|rm."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cerebro import Brain, clock

from .helpers import MISSING_ID, assert_one_line_error, detail, ok, raw_rows

T0 = datetime(2026, 3, 11, 10, 0, 0, tzinfo=UTC)
EDGE_RESULT_KEYS = {
    "id",
    "source_id",
    "target_id",
    "relation",
    "weight",
    "metadata",
    "created_at",
    "valid_at",
    "invalid_at",
    "created",
    "registered",
}


@pytest.fixture
def pair(add):
    return add("source memory"), add("target memory")


def test_edge_creates(cli, pair, brain_path):
    a, b = pair
    clock.set_now(T0)
    result = ok(cli("edge", a, b, "supports"))
    assert result.stdout == f"Added edge {a[:8]} -[supports]-> {b[:8]} (weight 1.00)\n"

    edges = detail(brain_path, a).edges
    assert len(edges) == 1
    e = edges[0]
    assert (e.source_id, e.target_id, e.relation, e.weight) == (a, b, "supports", 1.0)
    assert (e.valid_at, e.invalid_at) == (None, None)
    assert e.created_at == T0


def test_edge_json_shape(cli, pair):
    a, b = pair
    data = ok(cli("edge", a[:6], b[:6], "derived_from", "--weight", "0.25", "--format", "json")).json()
    assert set(data) == EDGE_RESULT_KEYS
    assert (data["source_id"], data["target_id"]) == (a, b)  # prefixes resolved to full ids
    assert data["weight"] == 0.25
    assert data["created"] is True
    assert data["registered"] is True
    assert isinstance(data["id"], int)


def test_readd_keeps_id_and_weight_unless_given_and_reasserts_window(cli, pair, brain_path):
    a, b = pair
    first = ok(
        cli(
            "edge",
            a,
            b,
            "supports",
            "--weight",
            "0.5",
            "--valid-at",
            "2026-01-01",
            "--invalid-at",
            "2026-06-01",
            "--format",
            "json",
        )
    ).json()

    # Re-add without --weight and with only one bound: weight kept, the omitted bound becomes null.
    second = ok(cli("edge", a, b, "supports", "--valid-at", "2026-02-01", "--format", "json")).json()
    assert second["id"] == first["id"]
    assert second["created"] is False
    assert second["weight"] == 0.5
    assert (second["valid_at"], second["invalid_at"]) == ("2026-02-01T00:00:00Z", None)

    # Re-add with --weight: the weight changes; no bounds at all: window fully open.
    third = ok(cli("edge", a, b, "supports", "--weight", "2"))
    assert third.stdout == f"Updated edge {a[:8]} -[supports]-> {b[:8]} (weight 2.00)\n"

    rows = raw_rows(brain_path, "SELECT id, weight, valid_at, invalid_at FROM edges")
    assert rows == [(first["id"], 2.0, None, None)]
    e = detail(brain_path, a).edges[0]
    assert (e.weight, e.valid_at, e.invalid_at) == (2.0, None, None)
    huge = ok(cli("edge", a, b, "supports", "--weight", "1e308"))
    assert huge.stdout == f"Updated edge {a[:8]} -[supports]-> {b[:8]} (weight 1e+308)\n"  # not 309 digits

    # Re-add with only the upper bound: it is the new window's.
    fourth = ok(cli("edge", a, b, "supports", "--invalid-at", "2026-09-01", "--format", "json")).json()
    assert (fourth["valid_at"], fourth["invalid_at"]) == (None, "2026-09-01T00:00:00Z")


def test_same_pair_different_relation_is_another_edge(cli, pair, brain_path):
    a, b = pair
    ok(cli("edge", a, b, "supports"))
    ok(cli("edge", a, b, "contradicts"))
    ok(cli("edge", b, a, "supports"))
    assert len(raw_rows(brain_path, "SELECT id FROM edges")) == 3


def test_unregistered_relation_warns_but_succeeds(cli, pair, brain_path):
    a, b = pair
    result = cli("edge", a, b, "inspired_by")
    assert result.exit_code == 0
    lines = result.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("cerebro: warning:")
    assert "inspired_by" in lines[0] and "not registered" in lines[0]
    assert result.stdout.startswith("Added edge")
    data = ok(cli("edge", a, b, "inspired_by", "--format", "json", "-q")).json()
    assert data["registered"] is False
    assert [e.relation for e in detail(brain_path, a).edges] == ["inspired_by"]


@pytest.mark.parametrize("position", ["before", "after"])
def test_quiet_silences_the_warning(cli, pair, position):
    a, b = pair
    args = ("-q", "edge", a, b, "inspired_by") if position == "before" else ("edge", a, b, "inspired_by", "--quiet")
    result = cli(*args)
    assert result.exit_code == 0
    assert result.stderr == ""
    assert result.stdout.startswith("Added edge")


def test_equal_bounds_are_allowed(cli, pair):
    a, b = pair
    window = ("--valid-at", "2026-01-01", "--invalid-at", "2026-01-01T00:00:00Z")
    data = ok(cli("edge", a, b, "supports", *window, "--format", "json")).json()
    assert data["valid_at"] == data["invalid_at"] == "2026-01-01T00:00:00Z"


@pytest.mark.parametrize(
    "extra",
    [
        ("--valid-at", "2026-02-01", "--invalid-at", "2026-01-01"),
        ("--valid-at", "2026-01-01T00:00:01Z", "--invalid-at", "2026-01-01"),
        ("--valid-at", "not-a-date"),
        ("--invalid-at", "2026-13-01"),
        ("--weight", "0"),
        ("--weight", "-1"),
        ("--weight", "nan"),
        ("--weight", "inf"),
        ("--weight", "abc"),
    ],
)
def test_bad_edge_options_rejected_unchanged(cli, pair, brain_path, brain_snapshot, extra):
    a, b = pair
    ok(cli("edge", a, b, "supports", "--weight", "0.5"))  # an existing edge must not be touched either
    before = brain_snapshot(brain_path)
    assert_one_line_error(cli("edge", a, b, "supports", *extra), exit_code=2)
    assert brain_snapshot(brain_path) == before


def test_inverted_window_message(cli, pair):
    a, b = pair
    assert_one_line_error(
        cli("edge", a, b, "supports", "--valid-at", "2026-02-01", "--invalid-at", "2026-01-01"),
        "invalid window",
        exit_code=2,
    )


@pytest.mark.parametrize("which", ["source", "target"])
def test_both_ids_must_resolve(cli, pair, brain_path, brain_snapshot, which):
    a, b = pair
    before = brain_snapshot(brain_path)
    args = (MISSING_ID, b) if which == "source" else (a, MISSING_ID)
    assert_one_line_error(cli("edge", *args, "supports"), "no node found", exit_code=3)
    assert_one_line_error(cli("edge", *((a, "ffff") if which == "target" else ("ffff", b)), "supports"), exit_code=3)
    assert brain_snapshot(brain_path) == before


def test_an_edge_from_a_memory_to_itself_is_refused_even_through_two_prefixes(cli, pair, brain_path, brain_snapshot):
    a, _ = pair
    before = brain_snapshot(brain_path)
    assert_one_line_error(cli("edge", a, a[:6], "supports"), "an edge links two memories", a, exit_code=2)
    assert brain_snapshot(brain_path) == before


@pytest.mark.parametrize("relation", ["", "   "])
def test_empty_relation_rejected(cli, pair, brain_path, brain_snapshot, relation):
    a, b = pair
    before = brain_snapshot(brain_path)
    assert_one_line_error(cli("edge", a, b, relation), "relation", exit_code=2)
    assert brain_snapshot(brain_path) == before


# ------------------------------------------------------------------------------------------ relation


SEEDED = ["contradicts", "derived_from", "supersedes", "supports"]


def test_relation_list_seeded(cli, brain_path):
    data = ok(cli("relation", "list", "--format", "json")).json()["relations"]
    assert [r["name"] for r in data] == SEEDED
    for r in data:
        assert set(r) == {"name", "traversal_class", "created_at"}
    md = ok(cli("relation", "list")).stdout
    lines = md.splitlines()
    assert len(lines) == len(SEEDED)
    for line, name in zip(lines, SEEDED, strict=True):
        assert line == f"- {name}" or line.startswith(f"- {name} (")


def test_relation_add_list_rm(cli, pair, brain_path):
    added = ok(cli("relation", "add", "cites", "--class", "citation"))
    assert added.stdout == "Registered: cites\n"
    again = ok(cli("relation", "add", "cites", "--format", "json")).json()
    assert again["created"] is False
    assert again["name"] == "cites"
    assert again["traversal_class"] == "citation"
    assert ok(cli("relation", "add", "cites")).stdout == "Already registered: cites\n"

    assert "- cites (citation)" in ok(cli("relation", "list")).stdout
    with Brain.open(brain_path) as brain:
        assert {r.name: r.traversal_class for r in brain.relations()}["cites"] == "citation"

    # Registered now: no warning.
    a, b = pair
    assert ok(cli("edge", a, b, "cites")).stderr == ""

    removed = ok(cli("relation", "rm", "cites"))
    assert removed.stdout == "Removed relation: cites\n"
    assert ok(cli("relation", "rm", "supports", "--format", "json")).json() == {"removed": "supports"}
    with Brain.open(brain_path) as brain:
        names = [r.name for r in brain.relations()]
    assert "cites" not in names and "supports" not in names
    # Existing edges are kept.
    assert [e.relation for e in detail(brain_path, a).edges] == ["cites"]
    # And the relation is now unregistered again.
    assert "not registered" in cli("edge", b, a, "cites").stderr


def test_relation_add_json_shape(cli, brain_path):
    data = ok(cli("relation", "add", "blocks", "--format", "json")).json()
    assert set(data) == {"name", "traversal_class", "created_at", "created"}
    assert data["created"] is True
    assert data["traversal_class"] is None


def test_relation_rm_unknown(cli, brain_path, brain_snapshot):
    before = brain_snapshot(brain_path)
    assert_one_line_error(cli("relation", "rm", "nope"), "nope", exit_code=3)
    assert brain_snapshot(brain_path) == before


def test_relation_add_empty_name(cli, brain_path, brain_snapshot):
    before = brain_snapshot(brain_path)
    assert_one_line_error(cli("relation", "add", "  "), exit_code=2)
    assert brain_snapshot(brain_path) == before


def test_relation_add_again_with_class_updates_it(cli, brain_path):
    ok(cli("relation", "add", "cites"))
    data = ok(cli("relation", "add", "cites", "--class", "citation", "--format", "json")).json()
    assert (data["created"], data["traversal_class"]) == (False, "citation")
    said = ok(cli("relation", "add", "cites", "--class", "structural")).stdout
    assert said == "Already registered: cites (class now structural)\n"  # not a bare "Already registered"
    ok(cli("relation", "add", "cites", "--class", "citation"))
    with Brain.open(brain_path) as brain:
        assert {r.name: r.traversal_class for r in brain.relations()}["cites"] == "citation"


def test_edge_timestamps_are_rfc3339(cli, pair):
    a, b = pair
    clock.set_now(T0)
    result = cli("edge", a, b, "supports", "--invalid-at", "2026-04-01T12:30:00Z", "--format", "json")
    data = ok(result).json()
    assert data["created_at"] == "2026-03-11T10:00:00Z"
    assert data["invalid_at"] == "2026-04-01T12:30:00Z"
