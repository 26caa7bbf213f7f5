"""mark-consolidated and consolidate: fail-closed (nothing written unless every id is good), the
derived_from edges, idempotence, and --suggest (spec §5)."""

from __future__ import annotations

import pytest

from cerebro.errors import InvalidInput
from tests.postgres import connect_brain

from .conftest import (
    MISSING_ID,
    assert_one_line_error,
    edge_rows,
    fts_ids,
    full_snapshot,
    node_row,
    raw_rows,
    vec_ids,
)


@pytest.fixture
def world(fake_brain, at, fake_brain_path):
    """Three active episodes, a superseded episode, a concept (the usual into-node), a procedure, and a
    pre-existing derived_from edge concept → e1 with weight 0.4 and a validity window (set up through the
    library, which is faster; the commands under test run through the CLI)."""
    b = fake_brain
    at(0)
    e1 = b.add("episode one: the deploy failed on a missing env var", subtype="deploy")
    e2 = b.add("episode two: the deploy failed again, same env var", subtype="deploy")
    e3 = b.add("episode three: added the env var to the template")
    old = b.add("episode old: deploys go through jenkins")
    new = b.supersede(old, "episode new: deploys go through github actions")
    concept = b.add("concept: every deploy needs the env var in the template", type="concept")
    procedure = b.add("procedure: check the template before a deploy", type="procedure")
    b.add_edge(concept, e1, "derived_from", weight=0.4, valid_at="2026-01-01", invalid_at="2027-01-01")
    at(1)
    return {
        "e1": e1,
        "e2": e2,
        "e3": e3,
        "old": old,
        "new": new,
        "concept": concept,
        "procedure": procedure,
        "path": fake_brain_path,
    }


def derived_edges(path) -> dict[tuple[str, str], tuple]:
    return {(r[1], r[2]): r for r in edge_rows(path) if r[3] == "derived_from"}


# --------------------------------------------------------------------------- fail-closed


BAD_CASES = {
    "missing source": lambda w: ("consolidate", "--into", w["concept"], w["e2"], w["e3"], MISSING_ID),
    "concept source": lambda w: ("consolidate", "--into", w["procedure"], w["e2"], w["concept"]),
    "procedure source": lambda w: ("consolidate", "--into", w["concept"], w["e2"], w["procedure"]),
    "superseded source": lambda w: ("consolidate", "--into", w["concept"], w["e2"], w["e3"], w["old"]),
    "missing into": lambda w: ("consolidate", "--into", MISSING_ID, w["e2"], w["e3"]),
    "into itself": lambda w: ("consolidate", "--into", w["e2"], w["e3"], w["e2"]),
    "too short prefix": lambda w: ("consolidate", "--into", w["concept"], w["e2"], "ab"),
    "no sources": lambda w: ("consolidate", "--into", w["concept"]),
    "no into": lambda w: ("consolidate", w["e2"], w["e3"]),
    "mark: missing id": lambda w: ("mark-consolidated", w["e2"], w["e3"], MISSING_ID),
    "mark: concept": lambda w: ("mark-consolidated", w["e2"], w["concept"]),
    "mark: superseded": lambda w: ("mark-consolidated", w["e2"], w["e3"], w["old"]),
}


@pytest.mark.parametrize("case", list(BAD_CASES))
def test_bad_ids_change_nothing(cli, world, case):
    before = full_snapshot(world["path"])
    result = cli(*BAD_CASES[case](world))
    assert_one_line_error(result)
    assert full_snapshot(world["path"]) == before


def test_error_messages_name_the_problem(cli, world):
    assert_one_line_error(
        cli("consolidate", "--into", world["concept"], world["e2"], MISSING_ID), MISSING_ID, exit_code=3
    )
    assert_one_line_error(cli("consolidate", "--into", world["concept"], world["procedure"]), "episode", exit_code=2)
    assert_one_line_error(cli("consolidate", "--into", world["concept"], world["old"]), "superseded")
    assert_one_line_error(cli("consolidate", "--into", world["e2"], world["e2"]), "itself")


def test_refusals_in_full(fake_brain, world):
    """The API's messages word for word: 8-character ids, the type or status found, what would be needed."""
    cases = [
        (lambda: fake_brain.consolidate(world["concept"], []), "give at least one episode id"),
        (
            lambda: fake_brain.consolidate(world["concept"], [world["procedure"]]),
            f"{world['procedure'][:8]} is a procedure, not an episode: only episodes consolidate",
        ),
        (
            lambda: fake_brain.consolidate(world["concept"], [world["old"]]),
            f"{world['old'][:8]} is superseded: only active episodes consolidate",
        ),
        (
            lambda: fake_brain.consolidate(world["e2"], [world["e2"]]),
            f"{world['e2'][:8]} cannot be consolidated into itself",
        ),
    ]
    for call, message in cases:
        with pytest.raises(InvalidInput) as refused:
            call()
        assert str(refused.value) == message


def test_consolidating_into_a_consolidated_memory_is_refused(cli, fake_brain, world):
    """Its content lives on in its own summary: B's sources into A, then A's into B, left a derived_from cycle and
    no active memory holding either — both gone from recall."""
    fake_brain.consolidate(world["e2"], [world["e3"]])  # e3 → e2
    before = full_snapshot(world["path"])
    with pytest.raises(InvalidInput, match=f"{world['e3'][:8]} is consolidated itself"):
        fake_brain.consolidate(world["e3"], [world["e2"]])
    assert_one_line_error(cli("consolidate", "--into", world["e3"], world["e2"]), "consolidated itself", exit_code=2)
    assert full_snapshot(world["path"]) == before


# --------------------------------------------------------------------------- success


def test_consolidate_writes_edges_and_statuses(run, world):
    path = world["path"]
    report = run("consolidate", "--into", world["concept"], world["e2"][:8], world["e3"])
    assert report["into"] == world["concept"]
    assert report["sources"] == [world["e2"], world["e3"]]
    assert report["consolidated"] == 2
    assert report["edges_added"] == 2

    edges = derived_edges(path)
    assert set(edges) == {
        (world["concept"], world["e1"]),
        (world["concept"], world["e2"]),
        (world["concept"], world["e3"]),
    }
    for source in ("e2", "e3"):
        edge = edges[(world["concept"], world[source])]
        assert edge[4] == 1.0  # weight
        assert node_row(path, world[source])["status"] == "consolidated"
        assert world[source] not in fts_ids(path)
    assert node_row(path, world["concept"])["status"] == "active"
    assert node_row(path, world["e1"])["status"] == "active"
    assert {world["concept"], world["e1"]} <= fts_ids(path)
    # The into-node now reports a complete provenance.
    assert run("get", world["concept"])["provenance_status"] == "complete"


def test_second_identical_consolidate_adds_nothing(run, world):
    path = world["path"]
    run("consolidate", "--into", world["concept"], world["e2"], world["e3"])
    before = full_snapshot(path)
    report = run("consolidate", "--into", world["concept"], world["e2"], world["e3"])
    assert report["edges_added"] == 0
    assert report["consolidated"] == 0
    assert full_snapshot(path) == before


def test_existing_edge_is_left_exactly_as_it_was(run, world):
    path = world["path"]
    pre = derived_edges(path)[(world["concept"], world["e1"])]
    assert pre[4] == 0.4 and pre[7] is not None and pre[8] is not None  # weight, valid_at, invalid_at
    other_edges = [r for r in edge_rows(path) if (r[1], r[2]) != (world["concept"], world["e1"])]
    report = run("consolidate", "--into", world["concept"], world["e1"], world["e2"])
    assert report["edges_added"] == 1
    assert report["consolidated"] == 2
    edges = derived_edges(path)
    assert edges[(world["concept"], world["e1"])] == pre  # id, weight, metadata, created_at, window
    assert [
        r
        for r in edge_rows(path)
        if (r[1], r[2]) not in {(world["concept"], world["e1"]), (world["concept"], world["e2"])}
    ] == other_edges
    assert node_row(path, world["e1"])["status"] == "consolidated"
    # Again: still untouched.
    run("consolidate", "--into", world["concept"], world["e1"])
    assert derived_edges(path)[(world["concept"], world["e1"])] == pre


def test_duplicate_source_ids_count_once(run, world):
    report = run("consolidate", "--into", world["concept"], world["e2"], world["e2"][:6], world["e2"])
    assert report["sources"] == [world["e2"]]
    assert report["edges_added"] == 1
    rows = raw_rows(
        world["path"],
        "SELECT COUNT(*) FROM edges WHERE source_id = ? AND target_id = ?",
        (world["concept"], world["e2"]),
    )
    assert rows == [(1,)]


def test_already_consolidated_source_gets_its_edge(run, world):
    path = world["path"]
    run("mark-consolidated", world["e3"])
    report = run("consolidate", "--into", world["concept"], world["e3"])
    assert report["consolidated"] == 0
    assert report["edges_added"] == 1
    assert (world["concept"], world["e3"]) in derived_edges(path)
    assert node_row(path, world["e3"])["status"] == "consolidated"


def test_into_may_be_any_type_and_status(run, world):
    """The into-node can be an episode, a procedure, or even a superseded memory."""
    path = world["path"]
    run("consolidate", "--into", world["e1"], world["e2"])
    run("consolidate", "--into", world["procedure"], world["e3"])
    assert {(world["e1"], world["e2"]), (world["procedure"], world["e3"])} <= set(derived_edges(path))
    e4 = run("add", "episode four: env var typo")["id"]
    run("consolidate", "--into", world["old"], e4)
    assert (world["old"], e4) in derived_edges(path)


def test_mark_consolidated_changes_status_only(run, world):
    path = world["path"]
    edges_before = edge_rows(path)
    vectors_before = vec_ids(path)
    report = run("mark-consolidated", world["e2"], world["e3"][:8])
    assert report["consolidated"] == 2
    assert report["into"] is None
    for key in ("e2", "e3"):
        assert node_row(path, world[key])["status"] == "consolidated"
        assert world[key] not in fts_ids(path)
    assert edge_rows(path) == edges_before  # no edges
    assert vec_ids(path) == vectors_before
    # Idempotent: a second run changes nothing.
    before = full_snapshot(path)
    again = run("mark-consolidated", world["e2"], world["e3"])
    assert again["consolidated"] == 0
    assert full_snapshot(path) == before
    text = run("mark-consolidated", world["e2"], fmt="md")
    assert text.strip() == "Marked 0 episode(s) consolidated (1 given)."


# --------------------------------------------------------------------------- --suggest


@pytest.fixture
def episodes_by_subtype(fake_brain, at):
    """deploy ×4 (one more later consolidated), test ×2, no subtype ×1, written on different days and out
    of order, plus a concept with a subtype (never suggested)."""
    made: dict[str | None, list[tuple[int, str]]] = {"deploy": [], "test": [], None: []}
    plan = [
        (3, "deploy"),
        (1, "test"),
        (5, None),
        (0, "deploy"),
        (4, "test"),
        (2, "deploy"),
        (6, "deploy"),
        (7, "deploy"),
    ]
    ids = {}
    for number, subtype in plan:
        at(number)
        ids[number] = fake_brain.add(f"episode on day {number}", subtype=subtype)
        made[subtype].append((number, ids[number]))
    at(8)
    fake_brain.add("a deploy concept", type="concept", subtype="deploy")
    fake_brain.mark_consolidated([ids[7]])
    made["deploy"] = [m for m in made["deploy"] if m[0] != 7]
    return {k: [i for _, i in sorted(v)] for k, v in made.items()}


def test_suggest_groups_biggest_first_oldest_first(run, episodes_by_subtype):
    groups = run("consolidate", "--suggest")["groups"]
    assert [g["subtype"] for g in groups] == ["deploy", "test", None]
    assert [g["count"] for g in groups] == [4, 2, 1]
    for group in groups:
        assert [e["id"] for e in group["episodes"]] == episodes_by_subtype[group["subtype"]]
        assert all(e["type"] == "episode" and e["status"] == "active" for e in group["episodes"])


def test_suggest_limit_truncates_but_counts_stay_exact(run, episodes_by_subtype):
    groups = run("consolidate", "--suggest", "--limit", "5")["groups"]
    assert [g["count"] for g in groups] == [4, 2, 1]
    assert [len(g["episodes"]) for g in groups] == [4, 1, 0]
    assert [e["id"] for e in groups[1]["episodes"]] == episodes_by_subtype["test"][:1]
    groups = run("consolidate", "--suggest", "--limit", "2")["groups"]
    assert [g["count"] for g in groups] == [4, 2, 1]
    assert [[e["id"] for e in g["episodes"]] for g in groups] == [episodes_by_subtype["deploy"][:2], [], []]


def test_suggest_text(run, episodes_by_subtype):
    text = run("consolidate", "--suggest", "--limit", "5", fmt="md")
    lines = text.splitlines()
    assert lines[0] == "## deploy — 4 episode(s)"
    assert "## test — 2 episode(s)" in lines
    assert "## (no subtype) — 1 episode(s)" in lines
    assert lines[1] == f"- {episodes_by_subtype['deploy'][0][:8]}: episode on day 0"


def test_suggest_on_an_empty_brain(run):
    assert run("consolidate", "--suggest") == {"groups": []}
    assert run("consolidate", "--suggest", fmt="md").strip() == "No active episodes."


# --------------------------------------------------------------------------- a brain upgraded from Go


def test_legacy_statuses_on_an_upgraded_brain(upgraded, run_any, cli, at):
    """v4.sql holds an already consolidated episode (e0000005) and one with the legacy status 'archived'
    still in nodes (e0000008): the first may be consolidated again, the second is refused, whole."""
    from datetime import timedelta

    from .conftest import UPGRADED_AT

    path = upgraded("v4")
    at(UPGRADED_AT + timedelta(hours=1))
    into = run_any("add", "a summary of the timestamp work", "--type", "concept")["id"]
    before = full_snapshot(path)
    assert_one_line_error(cli("consolidate", "--into", into, "e0000001", "e0000008"), "archived")
    assert_one_line_error(cli("mark-consolidated", "e0000001", "e0000008"), "archived")
    assert full_snapshot(path) == before
    report = run_any("consolidate", "--into", into, "e0000001", "e0000005")
    assert report["edges_added"] == 2 and report["consolidated"] == 1
    assert node_row(path, "e0000001-0000-4000-8000-000000000001")["status"] == "consolidated"
    assert "e0000001-0000-4000-8000-000000000001" not in fts_ids(path)
    # The Go-written edge f0000004 → e0000005 (derived_from) is untouched.
    assert derived_edges(path)[
        ("f0000004-0000-4000-8000-000000000004", "e0000005-0000-4000-8000-000000000005")
    ] == next(r for r in before["edges"] if r[1] == "f0000004-0000-4000-8000-000000000004" and r[3] == "derived_from")


def test_suggestions_see_every_active_episode_and_list_twenty_by_default(fake_brain):
    fake_brain.add_many([{"content": f"bulk episode {i}", "subtype": "bulk"} for i in range(120)])
    (group,) = fake_brain.consolidation_suggestions()
    assert group["count"] == 120 and len(group["episodes"]) == 20
    (group,) = fake_brain.consolidation_suggestions(limit=1000)
    assert len(group["episodes"]) == 120


def test_an_undated_group_sorts_after_a_dated_one_of_the_same_size(fake_brain, fake_brain_path, at):
    # A hand-edited brain may hold a created_at that is not a time: it must not break the suggestions.

    at(0)
    undated = fake_brain.add("undated episode", subtype="odd")
    dated = fake_brain.add("dated episode", subtype="fine")
    conn = connect_brain(fake_brain_path)
    conn.execute("UPDATE nodes SET created_at = 'someday' WHERE id = ?", (undated,))
    conn.commit()
    conn.close()
    groups = fake_brain.consolidation_suggestions()
    assert [(g["subtype"], [e.id for e in g["episodes"]]) for g in groups] == [("fine", [dated]), ("odd", [undated])]


def test_consolidate_names_what_it_needs(tmp_path) -> None:
    from cerebro import Brain
    from cerebro.errors import InvalidInput

    Brain.init(tmp_path / "b.db", embed_provider="none")
    with Brain.open(tmp_path / "b.db") as brain, pytest.raises(InvalidInput) as refused:
        brain.consolidate("", ["abcd1234"])
    assert str(refused.value) == "consolidate needs --into <id>"


def test_derived_from_edges_are_stamped_with_the_time_of_consolidation(fake_brain, world):
    from cerebro import clock

    fake_brain.consolidate(world["concept"], [world["e2"]])
    (edge,) = [e for e in fake_brain.get(world["concept"]).edges if e.target_id == world["e2"]]
    assert edge.created_at == clock.now()  # pinned by the world fixture (day 1)
