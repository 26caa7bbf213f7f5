"""Upgrading the fixture brains (fixtures/brains/*.sql) to head, three ways: Alembic's command line,
``Brain.open`` and the CLI. Every row and value must survive; timestamps end in the storage layout;
nodes_fts holds exactly the active nodes; the first open backs the brain up, the second changes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cerebro import Brain, clock, paths
from cerebro.db.migrate import HEAD_REVISION


def backup_files(directory: Path) -> list[Path]:
    """The backups (reading one in WAL mode leaves -wal/-shm files beside it: not backups)."""
    return sorted(p for p in directory.iterdir() if p.suffix == ".sqlite")


# --------------------------------------------------------------------------- the fixtures themselves


def test_every_fixture_file_is_listed(kit):
    on_disk = {p.stem for p in kit.FIXTURE_DIR.glob("*.sql")}
    assert on_disk == set(kit.FIXTURES)
    assert (kit.FIXTURE_DIR / "README.md").exists()


def test_fixture_is_go_shaped(fixture_name, kit, tmp_path):
    """Each fixture is what Go would leave: schema_version N, no alembic_version, varied rows."""
    path = kit.load(fixture_name, tmp_path / "brain.sqlite")
    version = kit.START_VERSION[fixture_name]
    names = kit.tables(path)
    assert "alembic_version" not in names
    assert kit.meta(path)["schema_version"] == str(version)
    assert kit.meta(path)["embedding_provider"] == "none"
    assert kit.meta(path)["config.prime_limit"] == "7"
    assert kit.columns(path, "nodes") == kit.node_columns(version)
    assert kit.columns(path, "edges") == kit.edge_columns(version)
    assert ("relations" in names) == (version >= 6)
    assert ("inbox_candidates" in names) == (version >= 7)
    has_fts = (fixture_name.startswith("v") or fixture_name == "go_v7_odd_metadata") and version >= 3
    assert ("nodes_fts" in names) == has_fts
    assert ("provenance_convention_since" in kit.meta(path)) == (version >= 5)
    assert ("origin_convention_since" in kit.meta(path)) == (version >= 6)
    rows = kit.read_tables(path)
    nodes = rows["nodes"].values()
    assert {n["type"] for n in nodes} == {"episode", "concept", "procedure", "reflection"}
    assert {n["status"] for n in nodes} == {"active", "consolidated", "superseded", "archived"}
    assert {0.0, 0.5, 1.0} <= {n["importance"] for n in nodes}
    assert any(n["subtype"] is None for n in nodes)
    assert 6 <= len(rows["nodes"]) <= 12
    assert len({e["relation"] for e in rows["edges"].values()}) >= 3
    assert any(e["weight"] != 1.0 for e in rows["edges"].values())
    assert rows["nodes_archive"]
    if has_fts:
        assert kit.fts_rows(path) == kit.active_index(rows)
    assert kit.foreign_key_problems(path) == []


# --------------------------------------------------------------------------- (1) alembic's command line


@pytest.fixture(scope="module")
def alembic_upgraded(kit, tmp_path_factory):
    """Every fixture upgraded with `alembic -x brain=PATH upgrade head` at the pinned instant, in one
    process."""
    root = tmp_path_factory.mktemp("alembic-upgrade")
    loaded = {}
    steps = []
    for name in kit.FIXTURES:
        path = kit.load(name, root / f"{name}.sqlite")
        loaded[name] = (kit.read_tables(path), path)
        steps.append(kit.step("upgrade", "head", brain=path, now=kit.PINNED_ENV))
    kit.alembic_batch(steps, home=root / "home")
    return loaded


def test_alembic_cli_upgrade_keeps_every_row(fixture_name, kit, alembic_upgraded):
    before, path = alembic_upgraded[fixture_name]
    kit.assert_upgraded(path, before, kit.PINNED_TEXT)


def test_real_alembic_executable_upgrades_a_go_brain(kit, tmp_path):
    """The console script itself, exactly as a developer types it, on the RFC 3339 / no-FTS brain."""
    path = kit.load("go_v4_rfc3339", tmp_path / "go.sqlite")
    before = kit.read_tables(path)
    result = kit.alembic_binary("upgrade", "head", brain=path, home=tmp_path / "home", now=kit.PINNED_ENV)
    assert result.returncode == 0, result.stderr
    kit.assert_upgraded(path, before, kit.PINNED_TEXT)
    assert "Running upgrade v7 -> py0001" in result.stderr


# --------------------------------------------------------------------------- (2) Brain.open


def test_brain_open_upgrades_backs_up_and_is_idempotent(fixture_name, kit, tmp_path, isolated_home, brain_snapshot):
    path = kit.load(fixture_name, tmp_path / f"{fixture_name}.sqlite")
    before = kit.read_tables(path)
    before_fts = kit.fts_rows(path)
    before_snapshot = brain_snapshot(path)

    clock.set_now(kit.PINNED)
    with Brain.open(path) as brain:
        backup = brain.upgrade_backup
        stats = brain.stats()
    assert stats.schema_version == 7
    assert stats.revision == HEAD_REVISION
    kit.assert_upgraded(path, before, kit.PINNED_TEXT)

    # The backup: one file in $CEREBRO_HOME/backups, a readable copy of the brain before the upgrade.
    backups_dir = isolated_home / "backups"
    assert backup is not None
    assert Path(backup).parent == backups_dir
    assert backup_files(backups_dir) == [Path(backup)]
    assert brain_snapshot(Path(backup)) == before_snapshot
    assert kit.read_tables(Path(backup)) == before
    assert kit.fts_rows(Path(backup)) == before_fts

    # A second open (even later) takes no backup and changes nothing.
    upgraded = brain_snapshot(path)
    upgraded_fts = kit.fts_rows(path)
    clock.set_now(kit.later(60)[0])
    with Brain.open(path) as brain:
        assert brain.upgrade_backup is None
    assert brain_snapshot(path) == upgraded
    assert kit.fts_rows(path) == upgraded_fts
    assert backup_files(backups_dir) == [Path(backup)]


# --------------------------------------------------------------------------- (3) the CLI


def test_cli_opens_and_upgrades_a_project_brain(fixture_name, kit, cli, project, isolated_home):
    path = paths.project_brain_path(project)
    paths.ensure_private_dir(path.parent)
    kit.load(fixture_name, path)
    before = kit.read_tables(path)

    clock.set_now(kit.PINNED)
    result = cli("stats", "--format", "json")
    assert result.exit_code == 0, result.stderr
    data = result.json()
    assert data["schema_version"] == 7
    assert data["revision"] == HEAD_REVISION
    nodes = before["nodes"].values()
    assert data["total_nodes"] == len(before["nodes"])
    assert data["total_edges"] == len(before["edges"])
    for status in ("active", "consolidated", "superseded", "archived"):
        assert data[f"{status}_nodes"] == sum(n["status"] == status for n in nodes)
    assert data["nodes_by_type"] == {
        t: sum(n["type"] == t for n in nodes) for t in ("episode", "concept", "procedure", "reflection")
    }
    assert data["embedding_provider"] == "none"
    kit.assert_upgraded(path, before, kit.PINNED_TEXT)
    assert len(backup_files(isolated_home / "backups")) == 1

    again = cli("stats", "--format", "json")
    assert again.exit_code == 0, again.stderr
    assert again.json() == data
    assert len(backup_files(isolated_home / "backups")) == 1


# --------------------------------------------------------------------------- specific values


# Every timestamp of go_v4_rfc3339.sql that is not in the layout, with its value worked out by hand.
GO_V4_NORMALISED = {
    ("nodes", "e0000001-0000-4000-8000-000000000001", "created_at"): "2026-03-11 10:00:00",
    ("nodes", "e0000001-0000-4000-8000-000000000001", "last_accessed"): "2026-03-11 10:00:00",
    ("nodes", "e0000001-0000-4000-8000-000000000001", "last_reinforced"): "2026-03-12 08:30:15",
    ("nodes", "e0000001-0000-4000-8000-000000000001", "last_surfaced"): "2026-06-30 23:30:00",
    ("nodes", "c0000002-0000-4000-8000-000000000002", "created_at"): "2026-03-11 10:05:00",
    ("nodes", "c0000002-0000-4000-8000-000000000002", "last_accessed"): "2026-07-20 09:00:00",
    ("nodes", "c0000002-0000-4000-8000-000000000002", "updated_at"): "2026-07-19 23:59:59",
    ("nodes", "c0000002-0000-4000-8000-000000000002", "last_surfaced"): "2026-07-20 14:00:00",
    ("nodes", "d0000003-0000-4000-8000-000000000003", "created_at"): "2026-08-01 00:30:00",
    ("nodes", "d0000003-0000-4000-8000-000000000003", "last_accessed"): "2026-08-01 00:30:00",
    ("nodes", "f0000004-0000-4000-8000-000000000004", "created_at"): "2026-07-22 11:50:00",
    ("nodes", "e0000005-0000-4000-8000-000000000005", "created_at"): "2026-07-23 11:00:00",
    ("nodes", "e0000005-0000-4000-8000-000000000005", "last_accessed"): "2026-07-23 11:00:00",
    ("nodes", "c0000006-0000-4000-8000-000000000006", "created_at"): "2026-07-01 10:00:00",
    ("nodes", "c0000006-0000-4000-8000-000000000006", "last_accessed"): "2026-07-02 10:00:00",
    ("nodes", "c0000006-0000-4000-8000-000000000006", "last_reinforced"): "2026-07-24 06:00:00",
    ("nodes", "e0000007-0000-4000-8000-000000000007", "created_at"): "2026-07-05 08:00:00",
    ("nodes", "f0000008-0000-4000-8000-000000000008", "created_at"): "2026-07-25 12:15:42",
    ("edges", 1, "created_at"): "2026-07-20 09:00:00",
    ("edges", 1, "valid_at"): "2026-06-30 22:00:00",
    ("edges", 2, "valid_at"): "2026-08-01 00:30:00",
    ("edges", 2, "invalid_at"): "2026-09-01 00:00:00",
    ("edges", 3, "created_at"): "2026-07-23 11:00:00",
    ("edges", 4, "valid_at"): "2026-07-22 12:00:00",
    ("edges", 4, "invalid_at"): "2026-07-22 12:00:00",
    ("edges", 5, "created_at"): "2026-07-23 11:05:00",
    ("edges", 5, "invalid_at"): "2026-07-24 02:00:00",
    ("nodes_archive", "a0000101-0000-4000-8000-000000000101", "original_created_at"): "2026-05-31 23:00:00",
    ("nodes_archive", "a0000101-0000-4000-8000-000000000101", "archived_at"): "2026-07-01 03:00:00",
    ("nodes_archive", "a0000102-0000-4000-8000-000000000102", "archived_at"): "2026-07-02 03:00:00",
}

GO_V7_NORMALISED = {
    ("nodes", "e0000001-0000-4000-8000-000000000001", "last_accessed"): "2026-08-27 09:15:00",
    ("nodes", "e0000001-0000-4000-8000-000000000001", "last_reinforced"): "2026-08-27 09:15:00",
    ("nodes", "c0000002-0000-4000-8000-000000000002", "created_at"): "2026-08-05 07:30:00",
    ("nodes", "c0000002-0000-4000-8000-000000000002", "updated_at"): "2026-08-19 22:30:00",
    ("nodes", "d0000003-0000-4000-8000-000000000003", "created_at"): "2026-08-27 07:00:00",
    ("nodes", "f0000004-0000-4000-8000-000000000004", "last_accessed"): "2026-08-27 08:20:00",
    ("nodes", "c0000006-0000-4000-8000-000000000006", "created_at"): "2026-08-06 10:00:00",
    ("nodes", "d0000009-0000-4000-8000-000000000009", "created_at"): "2026-08-08 13:00:00",
    ("edges", 3, "created_at"): "2026-08-27 07:01:00",
    ("edges", 3, "valid_at"): "2026-08-27 07:00:00",
    ("edges", 5, "valid_at"): "2026-08-06 10:00:00",
    ("edges", 5, "invalid_at"): "2026-08-27 10:00:00",
    ("nodes_archive", "a0000101-0000-4000-8000-000000000101", "original_created_at"): "2026-07-01 15:00:00",
    ("nodes_archive", "a0000102-0000-4000-8000-000000000102", "archived_at"): "2026-08-02 03:00:00",
    ("inbox_candidates", "b0000201-0000-4000-8000-000000000201", "created_at"): "2026-08-27 10:00:00",
}


@pytest.mark.parametrize(
    ("name", "worked_out"), [("go_v4_rfc3339", GO_V4_NORMALISED), ("go_v7_no_fts", GO_V7_NORMALISED)]
)
def test_rfc3339_timestamps_become_utc_layout(name, worked_out, kit, tmp_path):
    path = kit.load(name, tmp_path / "brain.sqlite")
    before = kit.read_tables(path)
    # The hand-worked values agree with the fixture's own comments and the independent normaliser.
    for (table, key, column), value in worked_out.items():
        assert kit.norm_ts(before[table][key][column]) == value
    clock.set_now(kit.PINNED)
    Brain.open(path).close()
    after = kit.read_tables(path)
    for (table, key, column), value in worked_out.items():
        assert after[table][key][column] == value, (table, key, column, before[table][key][column])
    # Key cases, spelled out: an offset is converted, not dropped; a fraction is truncated, not rounded.
    if name == "go_v4_rfc3339":
        first = "e0000001-0000-4000-8000-000000000001"
        assert before["nodes"][first]["last_accessed"] == "2026-03-11T12:00:00+02:00"
        assert after["nodes"][first]["last_accessed"] == "2026-03-11 10:00:00"
        assert after["nodes"]["c0000002-0000-4000-8000-000000000002"]["updated_at"] == "2026-07-19 23:59:59"


def test_go_zero_time_normalises_to_a_four_digit_year(kit, tmp_path):
    """Go's zero time.Time marshals as '0001-01-01T00:00:00Z' (encoding/json, e.g. in an imported bundle);
    in the storage layout it is '0001-01-01 00:00:00' — what Go's own Format writes — with a 4-digit year,
    so string comparisons keep working."""
    path = kit.load("go_v4_rfc3339", tmp_path / "brain.sqlite")
    conn = kit.connect(path)
    conn.execute(
        "UPDATE nodes SET last_reinforced = '0001-01-01T00:00:00Z' WHERE id = 'e0000005-0000-4000-8000-000000000005'"
    )
    conn.commit()
    conn.close()
    assert kit.norm_ts("0001-01-01T00:00:00Z") == "0001-01-01 00:00:00"
    clock.set_now(kit.PINNED)
    Brain.open(path).close()
    node = kit.read_tables(path)["nodes"]["e0000005-0000-4000-8000-000000000005"]
    assert node["last_reinforced"] == "0001-01-01 00:00:00"


def test_go_brains_without_fts_get_a_backfilled_keyword_lane(kit, tmp_path):
    for name in ("go_v4_rfc3339", "go_v7_no_fts"):
        path = kit.load(name, tmp_path / f"{name}.sqlite")
        assert kit.fts_rows(path) is None
        clock.set_now(kit.PINNED)
        Brain.open(path).close()
        rows = kit.read_tables(path)
        assert kit.fts_rows(path) == kit.active_index(rows)
        assert len(kit.fts_rows(path)) == sum(n["status"] == "active" for n in rows["nodes"].values())


def test_fts_lane_answers_keyword_queries_after_upgrade(kit, tmp_path):
    """The rebuilt lane is a working FTS5 index (unicode61 folds diacritics), and holds no inactive node."""
    path = kit.load("go_v4_rfc3339", tmp_path / "brain.sqlite")
    Brain.open(path).close()
    conn = kit.connect(path)
    try:
        hits = {r[0] for r in conn.execute("SELECT node_id FROM nodes_fts WHERE nodes_fts MATCH 'import'")}
        assert hits == {"e0000001-0000-4000-8000-000000000001", "d0000003-0000-4000-8000-000000000003"}
        assert not conn.execute("SELECT 1 FROM nodes_fts WHERE nodes_fts MATCH 'lunch'").fetchall()
    finally:
        conn.close()


def test_v6_brain_with_the_inbox_quirk_upgrades(kit, tmp_path):
    """Go 3.4.0's v5→v6 step also creates inbox_candidates: a v6 brain may already have it (and rows)."""
    path = kit.load("v6", tmp_path / "brain.sqlite")
    conn = kit.connect(path)
    try:
        conn.executescript(
            """
            CREATE TABLE IF NOT EXISTS inbox_candidates (
                id TEXT PRIMARY KEY,
                type TEXT NOT NULL CHECK (type IN ('episode','concept','procedure','reflection')),
                subtype TEXT, content TEXT NOT NULL, metadata JSON, importance REAL DEFAULT 0.5,
                created_at DATETIME DEFAULT CURRENT_TIMESTAMP,
                origin_actor TEXT, origin_channel TEXT, origin_session TEXT, origin_host TEXT
            );
            INSERT INTO inbox_candidates (id, type, content, created_at, origin_actor)
            VALUES ('b0000301-0000-4000-8000-000000000301', 'episode', 'Candidate written before v7',
                    '2026-08-26T20:00:00+02:00', 'claude-code');
            """
        )
    finally:
        conn.close()
    before = kit.read_tables(path)
    assert kit.meta(path)["schema_version"] == "6"
    clock.set_now(kit.PINNED)
    Brain.open(path).close()
    kit.assert_upgraded(path, before, kit.PINNED_TEXT)
    inbox = kit.read_tables(path)["inbox_candidates"]
    assert inbox["b0000301-0000-4000-8000-000000000301"]["created_at"] == "2026-08-26 18:00:00"


def test_json_metadata_survives_byte_for_byte(kit, tmp_path):
    path = kit.load("v7", tmp_path / "brain.sqlite")
    before = {k: v["metadata"] for k, v in kit.read_tables(path)["nodes"].items()}
    Brain.open(path).close()
    after = {k: v["metadata"] for k, v in kit.read_tables(path)["nodes"].items()}
    assert after == before
    reflection = json.loads(after["f0000004-0000-4000-8000-000000000004"])
    assert reflection["note"] == "Ünïcödé ✓"
    assert reflection["outcomes"] == {"success": 2, "failure": 1}
