"""forget --subject: case-insensitive literal matching, --subtype, dry run by default, --apply archives
(reason redundant) out of every lane in one transaction, --hard deletes (spec §5)."""

from __future__ import annotations

import pytest

from .conftest import (
    archive_rows,
    assert_one_line_error,
    day,
    edge_rows,
    fts_ids,
    full_snapshot,
    layout,
    node_ids,
    node_row,
    vec_ids,
)


@pytest.fixture
def notes(fake_brain, at, fake_brain_path):
    b = fake_brain
    at(0)
    n = {
        "a": b.add("Deploy notes for the API", subtype="deploy"),
        "b": b.add("deploy: use BLUE/green", type="procedure"),
        "c": b.add("We need 100% coverage on the parser"),
        "d": b.add("coverage is at 100 percent"),
        "e": b.add("snake_case names in python", type="concept"),
        "f": b.add("snakeXcase is not a thing"),
        "g": b.add("nothing related at all"),
        "h": b.add("we DePlOy with jenkins"),
        "i": b.add("the deploy rehearsal went fine"),
        "k": b.add("Rehearse before shipping", type="concept"),
    }
    n["new"] = b.supersede(n["h"], "ship with github actions")
    b.consolidate(n["k"], [n["i"]])
    b.add_edge(n["a"], n["g"], "supports")
    b.add_edge(n["g"], n["b"], "contradicts")
    b.add_edge(n["c"], n["d"], "supports")
    n["path"] = fake_brain_path
    at(2)
    return n


DEPLOY = {"a", "b", "h", "i"}


def matched(report) -> set[str]:
    return {m["id"] for m in report["matched"]}


def ids(notes, *keys) -> set[str]:
    return {notes[k] for k in keys}


def test_dry_run_is_the_default_and_changes_nothing(run, notes):
    before = full_snapshot(notes["path"])
    report = run("forget", "--subject", "DEPLOY")
    assert report["subject"] == "DEPLOY" and report["applied"] is False and report["hard"] is False
    assert matched(report) == ids(notes, *DEPLOY)
    statuses = {m["id"]: m["status"] for m in report["matched"]}
    assert statuses[notes["h"]] == "superseded" and statuses[notes["i"]] == "consolidated"
    text = run("forget", "--subject", "deploy", fmt="md")
    assert text.splitlines()[0] == "Would forget 4 memories:"
    assert "--apply" in text
    assert full_snapshot(notes["path"]) == before


@pytest.mark.parametrize(
    ("subject", "expected"),
    [
        ("100%", {"c"}),
        ("%", {"c"}),
        ("0% C", {"c"}),
        ("snake_case", {"e"}),
        ("_", {"e"}),
        ("e_c", {"e"}),
        ("blue/GREEN", {"b"}),
        ("%deploy%", set()),
        ("snake%case", set()),
    ],
)
def test_match_is_case_insensitive_and_literal(run, notes, subject, expected):
    assert matched(run("forget", "--subject", subject)) == ids(notes, *expected)


def test_subtype_narrows(run, notes):
    assert matched(run("forget", "--subject", "deploy", "--subtype", "deploy")) == ids(notes, "a")
    assert matched(run("forget", "--subject", "deploy", "--subtype", "")) == ids(notes, "b", "h", "i")
    assert matched(run("forget", "--subject", "deploy", "--subtype", "nope")) == set()


def test_apply_archives_and_cleans_every_lane(run, notes):
    path = notes["path"]
    created = {k: node_row(path, notes[k])["created_at"] for k in DEPLOY}
    report = run("forget", "--subject", "deploy", "--apply")
    assert report["applied"] is True
    assert matched(report) == ids(notes, *DEPLOY)

    archived = archive_rows(path)
    assert set(archived) == ids(notes, *DEPLOY)
    expected_status = {"a": "active", "b": "active", "h": "superseded", "i": "consolidated"}
    for key in DEPLOY:
        row = archived[notes[key]]
        assert row["archive_reason"] == "redundant"
        assert row["status"] == expected_status[key]
        assert row["original_created_at"] == created[key]
        assert row["archived_at"] == layout(day(2))
    assert archived[notes["b"]]["type"] == "procedure"
    assert archived[notes["a"]]["subtype"] == "deploy"
    assert all(archived[notes[k]]["metadata"] is None for k in DEPLOY)  # none had any: NULL, not "null"

    gone = ids(notes, *DEPLOY)
    assert not gone & node_ids(path)
    assert not gone & vec_ids(path)
    assert not gone & fts_ids(path)
    assert [(e[1], e[2], e[3]) for e in edge_rows(path)] == [(notes["c"], notes["d"], "supports")]
    kept = ids(notes, "c", "d", "e", "f", "g", "k", "new")
    assert node_ids(path) == kept
    assert kept - {notes["k"], notes["new"]} <= fts_ids(path)
    # The archived memories are out of recall.
    results = {r["id"] for r in run("recall", "deploy notes blue green jenkins rehearsal")["results"]}
    assert not results & gone
    # Forgetting again finds nothing.
    assert run("forget", "--subject", "deploy")["matched"] == []


def test_hard_deletes_without_archive_rows(run, notes):
    path = notes["path"]
    report = run("forget", "--subject", "deploy", "--apply", "--hard")
    assert report["hard"] is True and report["applied"] is True
    assert archive_rows(path) == {}
    gone = ids(notes, *DEPLOY)
    assert not gone & node_ids(path)
    assert not gone & vec_ids(path)
    assert not gone & fts_ids(path)
    assert [(e[1], e[2], e[3]) for e in edge_rows(path)] == [(notes["c"], notes["d"], "supports")]
    text = run("forget", "--subject", "coverage", "--apply", "--hard", fmt="md")
    assert text.splitlines()[0] == "Deleted 2 memories:"


def test_hard_without_apply_is_refused(cli, notes):
    before = full_snapshot(notes["path"])
    line = assert_one_line_error(cli("forget", "--subject", "deploy", "--hard"), exit_code=2)
    assert line == "cerebro: error: --hard only makes sense with --apply"
    assert full_snapshot(notes["path"]) == before


@pytest.mark.parametrize("subject", ["", "   "])
def test_empty_subject_is_refused(cli, notes, subject):
    before = full_snapshot(notes["path"])
    line = assert_one_line_error(cli("forget", "--subject", subject, "--apply"), exit_code=2)
    assert line == "cerebro: error: forget needs a non-empty --subject"
    assert full_snapshot(notes["path"]) == before


def test_no_match_with_apply_changes_nothing(run, notes):
    before = full_snapshot(notes["path"])
    report = run("forget", "--subject", "kubernetes", "--apply")
    assert report["matched"] == []
    assert full_snapshot(notes["path"]) == before


@pytest.mark.parametrize("hard", [False, True])
def test_apply_is_one_transaction(fake_brain, notes, monkeypatch, hard):
    vec = fake_brain.handle.store.vectors  # the engine's own vector lane
    before = full_snapshot(notes["path"])
    real_delete = vec.delete
    calls = []

    def failing_delete(session, node_id):
        calls.append(node_id)
        if len(calls) == 3:
            raise RuntimeError("power cut")
        return real_delete(session, node_id)

    monkeypatch.setattr(vec, "delete", failing_delete)
    with pytest.raises(RuntimeError, match="power cut"):
        fake_brain.forget("deploy", apply=True, hard=hard)
    assert len(calls) == 3
    assert full_snapshot(notes["path"]) == before


def test_case_insensitive_beyond_ascii(fake_brain, at):
    """ "Case-insensitively" (spec §5 forget) is about letters, not only A–Z: BRÜCKE is Brücke."""
    at(0)
    bridge = fake_brain.add("Über die Brücke gehen")
    school = fake_brain.add("ÉCOLE normale supérieure")
    assert [m["id"] for m in fake_brain.forget("BRÜCKE").matched] == [bridge]
    assert [m["id"] for m in fake_brain.forget("über").matched] == [bridge]
    assert [m["id"] for m in fake_brain.forget("école").matched] == [school]


def test_rows_with_the_legacy_archived_status_are_not_matched(upgraded, run_any):
    """v4.sql keeps e0000008 ('Scratch note about lunch') in nodes with status 'archived'."""
    path = upgraded("v4")
    assert node_row(path, "e0000008-0000-4000-8000-000000000008")["status"] == "archived"
    assert run_any("forget", "--subject", "LUNCH")["matched"] == []
    report = run_any("forget", "--subject", "edges", "--apply")  # no vector table in this brain
    assert matched(report) == {"c0000006-0000-4000-8000-000000000006", "c0000007-0000-4000-8000-000000000007"}
    assert {"c0000006-0000-4000-8000-000000000006", "c0000007-0000-4000-8000-000000000007"} <= set(archive_rows(path))
    assert not {"c0000006-0000-4000-8000-000000000006", "c0000007-0000-4000-8000-000000000007"} & node_ids(path)


@pytest.mark.file_only  # SQLite's write lock (a team brain's writers lock rows, not the file)
def test_dry_runs_answer_while_another_agent_holds_the_write_lock(notes, monkeypatch):
    """A dry run only reads: it must not queue behind (or fail on) a writer, as forget --apply would."""
    from cerebro import Brain
    from cerebro.db.engine import connect_raw

    monkeypatch.setenv("CEREBRO_BUSY_TIMEOUT_MS", "20")
    holder = connect_raw(notes["path"])
    holder.execute("BEGIN IMMEDIATE")
    try:
        with Brain.open(notes["path"]) as brain:
            assert {m["id"] for m in brain.forget("deploy").matched} == ids(notes, *DEPLOY)
            assert brain.gc(threshold=0.5, dry_run=True).dry_run
    finally:
        holder.rollback()
        holder.close()


def test_an_unreadable_creation_time_is_archived_as_unknown(fake_brain, at):
    from sqlalchemy import text

    from cerebro.store import reads

    at(0)
    node = fake_brain.add("a note with an odd past", metadata={"k": 1})
    fake_brain.handle.write(
        lambda s: s.execute(text("UPDATE nodes SET created_at = 'long ago' WHERE id = :id"), {"id": node})
    )
    fake_brain.forget("odd past", apply=True)
    with fake_brain.handle.snapshot() as conn:
        (row,) = reads.rows(conn, "nodes_archive", ("original_created_at", "metadata"), "id")
    assert tuple(row) == (None, '{"k": 1}')
