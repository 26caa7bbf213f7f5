"""cerebro stats: counts, JSON fields, md."""

from __future__ import annotations

from cerebro import Brain

from .helpers import ok

SPEC_FIELDS = {
    "total_nodes",
    "active_nodes",
    "consolidated_nodes",
    "superseded_nodes",
    "archived_nodes",
    "nodes_by_type",
    "total_edges",
    "pending_embeddings",
    "embedding_model",
    "embedding_dimensions",
    "schema_version",
}


def test_stats_empty_brain(cli, brain_path):
    data = ok(cli("stats", "--format", "json")).json()
    assert set(data) >= SPEC_FIELDS
    assert data["total_nodes"] == data["active_nodes"] == data["total_edges"] == 0
    assert data["nodes_by_type"] == {"episode": 0, "concept": 0, "procedure": 0, "reflection": 0}
    assert data["pending_embeddings"] == 0
    assert data["embedding_model"] == "all-MiniLM-L6-v2-onnx-int8-dq7"
    assert data["embedding_dimensions"] == 384
    assert data["schema_version"] == 7


def test_stats_counts(cli, add, brain_path):
    a = add("a")
    b = add("b", "--type", "concept")
    add("c", "--type", "procedure")
    ok(cli("edge", a, b, "supports"))
    ok(cli("supersede", a, "a2"))

    data = ok(cli("stats", "--format", "json")).json()
    assert data["total_nodes"] == 4
    assert data["active_nodes"] == 3
    assert data["superseded_nodes"] == 1
    assert data["consolidated_nodes"] == 0
    assert data["archived_nodes"] == 0
    assert data["nodes_by_type"] == {"episode": 2, "concept": 1, "procedure": 1, "reflection": 0}
    assert data["total_edges"] == 2

    with Brain.open(brain_path) as brain:
        assert brain.stats().to_dict() == data

    md = ok(cli("stats")).stdout
    assert md.startswith("# Cerebro Brain Stats\n")
    assert "Memories: 4 (active 3, consolidated 0, superseded 1, archived 0)" in md
    assert "Edges: 2" in md
    assert "Schema: v7" in md


def test_stats_is_read_only(cli, add, brain_path, brain_snapshot):
    add("x")
    before = brain_snapshot(brain_path)
    ok(cli("stats"))
    assert brain_snapshot(brain_path) == before
