"""cerebro update: content re-indexes and stamps updated_at; importance/metadata do not; subtype clears."""

from __future__ import annotations

from datetime import UTC, datetime

from cerebro import clock

from .helpers import assert_one_line_error, fts_match, fts_rows, node, ok

T0 = datetime(2026, 3, 11, 10, 0, 0, tzinfo=UTC)
T1 = datetime(2026, 3, 12, 9, 30, 0, tzinfo=UTC)


def test_content_change_stamps_updated_at_and_reindexes(cli, add, brain_path, brain_snapshot):
    clock.set_now(T0)
    node_id = add("the old wording about pelicans", "--subtype", "note")
    assert fts_match(brain_path, "pelicans") == {node_id}
    clock.set_now(T1)

    result = ok(cli("update", node_id[:8], "--content", "the new wording about walruses"))
    assert result.stdout == f"Updated {node_id[:8]}\n"

    n = node(brain_path, node_id)
    assert n.content == "the new wording about walruses"
    assert n.updated_at == T1
    assert n.created_at == T0
    # FTS: the row was replaced, not duplicated (snapshot of nodes_fts_content and a real MATCH).
    fts_content = brain_snapshot(brain_path)["nodes_fts_content"]
    texts = [row for row in fts_content if node_id in row]
    assert len(texts) == 1 and "the new wording about walruses" in texts[0]
    assert fts_rows(brain_path)[node_id] == ("the new wording about walruses", "note")
    assert fts_match(brain_path, "walruses") == {node_id}
    assert fts_match(brain_path, "pelicans") == set()


def test_update_json_shape(cli, add):
    node_id = add("shape")
    data = ok(cli("update", node_id, "--importance", "0.7", "--format", "json")).json()
    assert data["id"] == node_id
    assert data["importance"] == 0.7
    assert "edges" not in data
    assert {"content", "subtype", "metadata", "updated_at", "status", "origin_actor"} <= set(data)


def test_importance_only_does_not_stamp_updated_at(cli, add, brain_path, brain_snapshot):
    clock.set_now(T0)
    node_id = add("importance only")
    fts_before = brain_snapshot(brain_path)["nodes_fts_content"]
    clock.set_now(T1)
    ok(cli("update", node_id, "--importance", "0.95"))
    n = node(brain_path, node_id)
    assert n.importance == 0.95
    assert n.updated_at is None
    assert brain_snapshot(brain_path)["nodes_fts_content"] == fts_before


def test_metadata_only_does_not_stamp_updated_at(cli, add, brain_path):
    node_id = add("metadata only")
    ok(cli("update", node_id, "--metadata", '{"k": 1}'))
    n = node(brain_path, node_id)
    assert n.metadata == {"k": 1}
    assert n.updated_at is None


def test_subtype_change_stamps_and_reindexes(cli, add, brain_path):
    clock.set_now(T0)
    node_id = add("subtyped", "--subtype", "bug")
    clock.set_now(T1)
    ok(cli("update", node_id, "--subtype", "decision"))
    n = node(brain_path, node_id)
    assert n.subtype == "decision"
    assert n.updated_at == T1
    assert fts_rows(brain_path)[node_id] == ("subtyped", "decision")


def test_empty_subtype_clears_to_null(cli, add, brain_path):
    node_id = add("subtyped", "--subtype", "bug")
    ok(cli("update", node_id, "--subtype", ""))
    assert node(brain_path, node_id).subtype is None
    from .helpers import raw_rows

    assert raw_rows(brain_path, "SELECT subtype FROM nodes WHERE id = ?", (node_id,)) == [(None,)]
    assert fts_rows(brain_path)[node_id] == ("subtyped", "")


def test_metadata_merges_and_null_removes(cli, add, brain_path):
    node_id = add("meta", "--metadata", '{"a": 1, "b": {"x": 2}, "c": "keep"}')
    ok(cli("update", node_id, "--metadata", '{"a": null, "b": [1, 2], "d": true}'))
    assert node(brain_path, node_id).metadata == {"b": [1, 2], "c": "keep", "d": True}
    # Removing every key leaves no metadata at all.
    ok(cli("update", node_id, "--metadata", '{"b": null, "c": null, "d": null}'))
    assert node(brain_path, node_id).metadata is None
    # Removing a key that is absent is harmless.
    ok(cli("update", node_id, "--metadata", '{"zzz": null}'))
    assert node(brain_path, node_id).metadata is None


def test_several_fields_at_once(cli, add, brain_path):
    node_id = add("before")
    ok(cli("update", node_id, "--content", "after", "--importance", "0.1", "--subtype", "s", "--metadata", '{"m": 1}'))
    n = node(brain_path, node_id)
    assert (n.content, n.importance, n.subtype, n.metadata) == ("after", 0.1, "s", {"m": 1})


def test_nothing_to_update_is_rejected(cli, add, brain_path, brain_snapshot):
    node_id = add("x")
    before = brain_snapshot(brain_path)
    assert_one_line_error(cli("update", node_id), "nothing to update", exit_code=2)
    assert brain_snapshot(brain_path) == before


def test_empty_content_is_rejected(cli, add, brain_path, brain_snapshot):
    node_id = add("x")
    before = brain_snapshot(brain_path)
    assert_one_line_error(cli("update", node_id, "--content", "  "), "empty", exit_code=2)
    assert brain_snapshot(brain_path) == before
