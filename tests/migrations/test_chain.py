"""The revision chain itself: one head equal to HEAD_REVISION; base → head → base → head on an empty
file; every downgrade leaves schema_version at its number and works with data present, never losing a node or
an edge; `alembic check` finds no drift between the models and the migrated schema.

Alembic's command line runs in subprocesses from the checkout: the real ``alembic`` executable, or its
entry point ``alembic.config.main`` driven over several command lines in one process (kit.alembic_batch)
where a test needs many steps.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.config import Config
from alembic.script import ScriptDirectory

from cerebro import Brain, clock
from cerebro.db.migrate import HEAD_REVISION, script_location

CHAIN = ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "py0001", "py0002", "py0003", "py0004", "py0005", "py0006", "py0007"]


def _script(kit) -> ScriptDirectory:
    return ScriptDirectory.from_config(Config(str(kit.REPO / "alembic.ini")))


def test_single_head_equal_to_head_revision(kit):
    script = _script(kit)
    assert script.get_heads() == [HEAD_REVISION]
    # cerebro's own way in (what Brain.open uses) finds the same scripts and the same head.
    config = Config()
    config.set_main_option("script_location", str(script_location()))
    assert ScriptDirectory.from_config(config).get_heads() == [HEAD_REVISION]
    assert script_location().resolve() == (kit.REPO / "alembic").resolve()


def test_chain_is_linear_v1_to_head(kit):
    script = _script(kit)
    walked = [rev.revision for rev in script.walk_revisions("base", "heads")]
    assert list(reversed(walked)) == CHAIN
    assert script.get_bases() == ["v1"]
    for rev in script.walk_revisions("base", "heads"):
        assert not rev.is_merge_point and not rev.is_branch_point
        module = rev.module
        assert callable(getattr(module, "upgrade", None)), rev.revision
        assert callable(getattr(module, "downgrade", None)), rev.revision


def test_base_head_base_head_on_an_empty_file(kit, tmp_path):
    brain = tmp_path / "empty.sqlite"  # not there yet: `alembic -x brain=` creates it
    cp = {label: tmp_path / f"cp-{label}.sqlite" for label in ("head1", "base1", "head2", "base2", "head3")}
    cp.update({f"v{n}": tmp_path / f"cp-v{n}.sqlite" for n in range(1, 8)})
    t1, t2, t3 = "2026-09-01T12:00:00Z", "2026-09-02T12:00:00Z", "2026-09-03T12:00:00Z"
    steps = [
        kit.step("upgrade", "head", brain=brain, now=t1, checkpoint=cp["head1"]),
        kit.step("downgrade", "base", brain=brain, checkpoint=cp["base1"]),
        kit.step("upgrade", "head", brain=brain, now=t2, checkpoint=cp["head2"]),
    ]
    steps += [kit.step("downgrade", f"v{n}", brain=brain, checkpoint=cp[f"v{n}"]) for n in range(7, 0, -1)]
    steps += [
        kit.step("downgrade", "base", brain=brain, checkpoint=cp["base2"]),
        kit.step("upgrade", "head", brain=brain, now=t3, checkpoint=cp["head3"]),
    ]
    kit.alembic_batch(steps, home=tmp_path / "home")

    births = {"head1": "2026-09-01 12:00:00", "head2": "2026-09-02 12:00:00", "head3": "2026-09-03 12:00:00"}
    for label, born in births.items():
        rows = kit.read_tables(cp[label])
        assert rows["alembic_version"] == {HEAD_REVISION: {"version_num": HEAD_REVISION}}, label
        assert {k: v["value"] for k, v in rows["schema_meta"].items()} == {
            "schema_version": "7",
            "provenance_convention_since": born,
            "origin_convention_since": born,
        }, label
        assert rows["relations"] == {
            name: {"name": name, "traversal_class": None, "created_at": born} for name in kit.SEED_RELATIONS
        }
        assert rows["nodes"] == rows["edges"] == rows["nodes_archive"] == rows["inbox_candidates"] == {}
        assert kit.fts_rows(cp[label]) == set()
        assert kit.columns(cp[label], "nodes") == kit.node_columns(7)
        assert kit.columns(cp[label], "edges") == kit.edge_columns(7)
    for label in ("base1", "base2"):
        assert kit.tables(cp[label]) <= {"alembic_version", "sqlite_sequence"}, label
        assert kit.read_tables(cp[label])["alembic_version"] == {}
    for n in range(7, 0, -1):
        path = cp[f"v{n}"]
        assert kit.meta(path)["schema_version"] == str(n)
        assert kit.read_tables(path)["alembic_version"] == {f"v{n}": {"version_num": f"v{n}"}}
        _assert_shape(kit, path, n)


def _assert_shape(kit, path, version: int) -> None:
    names = kit.tables(path)
    assert kit.columns(path, "nodes") == kit.node_columns(version), version
    assert kit.columns(path, "edges") == kit.edge_columns(version), version
    assert ("nodes_fts" in names) == (version >= 3), version
    assert ("relations" in names) == (version >= 6), version
    assert ("inbox_candidates" in names) == (version >= 7), version


def _project(rows: dict, columns) -> dict:
    return {key: {c: row[c] for c in columns} for key, row in rows.items()}


DOWN_AND_UP = ("v7", "v6", "go_v7_no_fts")


@pytest.fixture(scope="module")
def walked_down_and_up(kit, tmp_path_factory):
    """Each brain: upgraded to head, then `downgrade v7` … `downgrade v1` one step at a time (a copy after
    each), then `upgrade head` a day later. All command lines in one subprocess."""
    root = tmp_path_factory.mktemp("down-and-up")
    _, later_text, later_env = kit.later(24 * 60)
    steps, runs = [], {}
    for name in DOWN_AND_UP:
        path = kit.load(name, root / f"{name}.sqlite")
        run = {
            "head": root / f"{name}-head.sqlite",
            "final": root / f"{name}-final.sqlite",
            "cp": {n: root / f"{name}-v{n}.sqlite" for n in range(1, 8)},
            "later_text": later_text,
        }
        steps.append(kit.step("upgrade", "head", brain=path, now=kit.PINNED_ENV, checkpoint=run["head"]))
        steps += [kit.step("downgrade", f"v{n}", brain=path, checkpoint=run["cp"][n]) for n in range(7, 0, -1)]
        steps.append(kit.step("upgrade", "head", brain=path, now=later_env, checkpoint=run["final"]))
        runs[name] = run
    kit.alembic_batch(steps, home=root / "home")
    return runs


@pytest.mark.parametrize("name", DOWN_AND_UP)
def test_populated_head_brain_downgrades_step_by_step_and_back(name, kit, walked_down_and_up):
    """Every downgrade runs with data present; nodes, edges and archive rows survive each step."""
    run = walked_down_and_up[name]
    head = kit.read_tables(run["head"])
    edge_count = len(head["edges"])
    assert edge_count >= 7
    assert head["alembic_version"] == {HEAD_REVISION: {"version_num": HEAD_REVISION}}
    cp, final, later_text = run["cp"], run["final"], run["later_text"]

    for n in range(7, 0, -1):
        rows = kit.read_tables(cp[n])
        meta = {k: v["value"] for k, v in rows["schema_meta"].items()}
        assert meta["schema_version"] == str(n)
        assert rows["alembic_version"] == {f"v{n}": {"version_num": f"v{n}"}}
        _assert_shape(kit, cp[n], n)
        # Nothing but the dropped columns is lost; boundaries and config stay.
        assert _project(rows["nodes"], kit.node_columns(n)) == _project(head["nodes"], kit.node_columns(n))
        assert _project(rows["edges"], kit.edge_columns(n)) == _project(head["edges"], kit.edge_columns(n))
        assert len(rows["edges"]) == edge_count
        assert rows["nodes_archive"] == head["nodes_archive"]
        assert {k: v for k, v in meta.items() if k != "schema_version"} == {
            k: v["value"] for k, v in head["schema_meta"].items() if k != "schema_version"
        }
        if n >= 3:
            assert kit.fts_rows(cp[n]) == kit.active_index(rows)
        if n >= 6:
            assert rows["relations"] == head["relations"]
        if n >= 7:
            assert rows["inbox_candidates"] == head["inbox_candidates"]
        assert kit.foreign_key_problems(cp[n]) == []

    # Up again: every node and edge is back with its v1 values, the lane rebuilt, the boundaries kept;
    # what the downgrades dropped comes back empty (columns at their defaults, relations re-seeded).
    rows = kit.read_tables(final)
    assert rows["alembic_version"] == {HEAD_REVISION: {"version_num": HEAD_REVISION}}
    assert _project(rows["nodes"], kit.NODE_COLUMNS_V1) == _project(head["nodes"], kit.NODE_COLUMNS_V1)
    assert _project(rows["edges"], kit.EDGE_COLUMNS_V1) == _project(head["edges"], kit.EDGE_COLUMNS_V1)
    assert len(rows["edges"]) == edge_count
    assert rows["nodes_archive"] == head["nodes_archive"]
    assert rows["schema_meta"] == head["schema_meta"]
    assert all(n["provenance_root"] == 0 and n["origin_actor"] is None for n in rows["nodes"].values())
    assert all(e["valid_at"] is None and e["invalid_at"] is None for e in rows["edges"].values())
    assert rows["relations"] == {
        r: {"name": r, "traversal_class": None, "created_at": later_text} for r in kit.SEED_RELATIONS
    }
    assert rows["inbox_candidates"] == {}
    assert kit.fts_rows(final) == kit.active_index(rows)
    assert kit.foreign_key_problems(final) == []


def test_alembic_check_finds_no_drift_on_a_new_brain(kit, tmp_path):
    path = tmp_path / "head.sqlite"
    Brain.init(path)
    result = kit.alembic_binary("check", brain=path, home=tmp_path / "home")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No new upgrade operations detected" in result.stdout + result.stderr
    assert "FAILED" not in result.stdout + result.stderr


def test_alembic_check_finds_no_drift_on_upgraded_fixture_brains(kit, tmp_path):
    """Adopted brains keep Go's DDL (v6 was built by ALTER TABLE steps): still no drift at head."""
    steps = []
    for name in kit.FIXTURES:
        path = kit.load(name, tmp_path / f"{name}.sqlite")
        clock.set_now(kit.PINNED)
        Brain.open(path).close()
        steps.append(kit.step("check", brain=path))
    result = kit.alembic_batch(steps, home=tmp_path / "home")
    output = result.stdout + result.stderr
    assert output.count("No new upgrade operations detected") == len(kit.FIXTURES)


def test_keyword_index_uses_porter_at_head_and_unicode61_below(tmp_path):
    """py0002 rebuilds nodes_fts with Porter stemming, keeping its rows; its downgrade restores unicode61."""
    import subprocess
    import sys

    from cerebro import Brain

    path = tmp_path / "b.sqlite"
    Brain.init(path, embed_provider="none")
    with Brain.open(path) as brain:
        brain.add("the deploys were failing on Fridays")
        assert [r.node.content for r in brain.recall("deploy")]  # stemmed match
    repo = Path(__file__).resolve().parents[2]
    alembic = [sys.executable, "-m", "alembic", "-x", f"brain={path}"]
    subprocess.run([*alembic, "downgrade", "py0001"], cwd=repo, check=True, capture_output=True)
    import sqlean.dbapi2 as sqlean

    conn = sqlean.connect(str(path))
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name='nodes_fts'").fetchone()[0]
    rows = conn.execute("SELECT count(*) FROM nodes_fts").fetchone()[0]
    conn.close()
    assert "porter" not in sql and rows == 1
    subprocess.run([*alembic, "upgrade", "head"], cwd=repo, check=True, capture_output=True)
    conn = sqlean.connect(str(path))
    assert "porter" in conn.execute("SELECT sql FROM sqlite_master WHERE name='nodes_fts'").fetchone()[0]
    conn.close()
