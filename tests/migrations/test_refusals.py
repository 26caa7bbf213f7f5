"""What opening a brain must not do: touch a brain written by a newer cerebro, import Alembic for a brain
already at head, or leave a half-upgraded brain behind when an upgrade fails.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cerebro import Brain, clock, paths
from cerebro.db.migrate import HEAD_REVISION
from cerebro.errors import MigrationFailed, SchemaTooNew


def _upgraded_v7(kit, path):
    kit.load("v7", path)
    Brain.open(path).close()
    return path


def _unknown_revision(kit, path):
    """A brain stamped by a newer cerebro-py: a revision these scripts do not have."""
    _upgraded_v7(kit, path)
    conn = kit.connect(path)
    conn.execute("UPDATE alembic_version SET version_num = 'zz9999'")
    conn.commit()
    conn.execute("PRAGMA journal_mode = DELETE")  # as a copy restored from a backup is
    conn.close()


def _go_brain_saying(kit, path, fixture: str, schema_version: str):
    """A Go brain (no alembic_version) whose schema_meta claims another ``schema_version``."""
    kit.load(fixture, path)
    conn = kit.connect(path)
    conn.execute("UPDATE schema_meta SET value = ? WHERE key = 'schema_version'", (schema_version,))
    conn.commit()
    conn.close()


def _go_schema_8(kit, path):
    """A brain written by a newer Go cerebro: schema_version 8 and no alembic_version."""
    _go_brain_saying(kit, path, "v7", "8")


def _head_then_go_schema_8(kit, path):
    """Upgraded by us (alembic_version at head, schema_version 7), then opened by a newer Go cerebro, which
    migrated it to its schema 8 — Go does not know alembic_version and leaves it at our head."""
    _upgraded_v7(kit, path)
    conn = kit.connect(path)
    conn.execute("UPDATE schema_meta SET value = '8' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()


TOO_NEW = {
    "unknown-revision": _unknown_revision,
    "go-schema-8": _go_schema_8,
    "head-revision-but-schema-8": _head_then_go_schema_8,
}


@pytest.mark.parametrize("case", sorted(TOO_NEW))
def test_brain_from_a_newer_cerebro_is_refused_and_untouched(case, kit, tmp_path, isolated_home, brain_snapshot):
    path = tmp_path / "brain.sqlite"
    TOO_NEW[case](kit, path)
    backups_before = _backups(isolated_home)
    before = brain_snapshot(path)

    mode = _journal_mode(kit, path)

    with pytest.raises(SchemaTooNew) as raised:
        Brain.open(path)
    assert "upgrade cerebro" in str(raised.value)
    assert f"brain {path} was written by a newer cerebro" in str(raised.value)
    what = "(revision zz9999)" if case == "unknown-revision" else "(schema_version 8)"
    assert what in str(raised.value)
    assert brain_snapshot(path) == before
    assert _journal_mode(kit, path) == mode  # not even the journal switched to WAL: the file is as it was
    assert _backups(isolated_home) == backups_before


def _journal_mode(kit, path) -> str:
    conn = kit.connect(path)
    try:
        return conn.execute("PRAGMA journal_mode").fetchone()[0]
    finally:
        conn.close()


@pytest.mark.parametrize("case", sorted(TOO_NEW))
def test_cli_refuses_a_brain_from_a_newer_cerebro_with_exit_5(case, kit, cli, project, brain_snapshot):
    path = paths.project_brain_path(project)
    paths.ensure_private_dir(path.parent)
    TOO_NEW[case](kit, path)
    before = brain_snapshot(path)

    result = cli("stats", "--format", "json")
    assert result.exit_code == 5, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "upgrade cerebro" in lines[0]
    assert result.stdout == ""
    assert brain_snapshot(path) == before


def test_alembic_cli_refuses_a_go_brain_newer_than_v7(kit, tmp_path, brain_snapshot):
    """`alembic -x brain=PATH upgrade head` from a checkout must not adopt a schema_version 8 brain either.

    Today env.py does no adoption check: the chain replays from v1 over the v8 brain (every step is
    IF NOT EXISTS / only-if-absent) and v7's set_schema_version rewrites '8' to '7', then stamps py0001
    — after which Brain.open sees head and opens it without complaint.
    """
    path = tmp_path / "brain.sqlite"
    _go_schema_8(kit, path)
    before = brain_snapshot(path)
    result = kit.alembic_binary("upgrade", "head", brain=path, home=tmp_path / "home")
    assert result.returncode != 0, "alembic upgraded a schema_version 8 brain"
    assert "upgrade cerebro" in result.stdout + result.stderr
    assert brain_snapshot(path) == before
    assert kit.meta(path)["schema_version"] == "8"


def _backups(home):
    directory = home / "backups"
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


def test_opening_a_brain_at_head_does_not_import_alembic(kit, tmp_path):
    path = tmp_path / "head.sqlite"
    Brain.init(path)
    code = f"import sys, cerebro\nb = cerebro.Brain.open({str(path)!r})\nb.stats()\nprint('alembic' in sys.modules)\n"
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        check=False,
        env={**_clean_env(), "CEREBRO_HOME": str(tmp_path / "home")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def _clean_env():
    import os

    skip = ("CEREBRO_NOW", "CEREBRO_LOG", "CLAUDE_PROJECT_DIR")
    return {k: v for k, v in os.environ.items() if k not in skip}


DANGLING = "deadbeef-0000-4000-8000-000000000000"


def _v4_with_dangling_edge(kit, path, end: str = "source"):
    """The v4 fixture plus an edge whose source (or target) is not a node (written with foreign keys off, as
    a crashed or hand-edited brain might be): PRAGMA foreign_key_check fails at the end of the upgrade."""
    kit.load("v4", path)
    conn = kit.connect(path)
    conn.execute("PRAGMA foreign_keys = OFF")
    real = "c0000002-0000-4000-8000-000000000002"
    source, target = (DANGLING, real) if end == "source" else (real, DANGLING)
    conn.execute(
        "INSERT INTO edges (id, source_id, target_id, relation, weight, created_at) "
        "VALUES (99, ?, ?, 'relates_to', 1.0, '2026-07-30 10:00:00')",
        (source, target),
    )
    conn.commit()
    conn.close()
    return path


def _without_stamp(snapshot: dict) -> dict:
    return {table: rows for table, rows in snapshot.items() if table != "alembic_version"}


def _v4_with_broken_keyword_table(kit, path):
    """The v4 fixture plus an ordinary table squatting on the name nodes_fts (a hand-edited brain):
    the keyword-index rebuild (py0002) fails half-way through the upgrade chain."""
    kit.load("v4", path)
    conn = kit.connect(path)
    conn.execute("DROP TABLE IF EXISTS nodes_fts")
    conn.execute("CREATE TABLE nodes_fts (x TEXT)")
    conn.commit()
    conn.close()
    return path


def test_failed_upgrade_leaves_the_brain_unchanged(kit, tmp_path, isolated_home, brain_snapshot):
    path = _v4_with_broken_keyword_table(kit, tmp_path / "brain.sqlite")
    before = brain_snapshot(path)
    before_rows = kit.read_tables(path)
    assert "alembic_version" not in before

    clock.set_now(kit.PINNED)
    with pytest.raises(MigrationFailed) as raised:
        Brain.open(path)
    assert "rolled back" in str(raised.value)

    after = brain_snapshot(path)
    # Every row as it was: still v4, no boundary stamped, no column added, timestamps untouched — and
    # not even the adoption stamp, which now shares the upgrade's transaction.
    assert after == before
    assert kit.meta(path)["schema_version"] == "4"
    assert kit.columns(path, "nodes") == kit.node_columns(4)
    assert kit.columns(path, "edges") == kit.edge_columns(4)
    assert "relations" not in kit.tables(path) and "inbox_candidates" not in kit.tables(path)
    assert kit.read_tables(path) == before_rows
    # A backup was taken first...
    backups = [p for p in (isolated_home / "backups").iterdir() if p.suffix == ".sqlite"]
    assert len(backups) == 1
    assert brain_snapshot(backups[0]) == before

    # ...and opening again (as every hook call would) fails the same way, changes nothing, and reuses it.
    with pytest.raises(MigrationFailed):
        Brain.open(path)
    assert brain_snapshot(path) == before
    assert len([p for p in (isolated_home / "backups").iterdir() if p.suffix == ".sqlite"]) == 1

    # Once the squatting table is gone, the upgrade goes through with every row kept.
    conn = kit.connect(path)
    conn.execute("DROP TABLE nodes_fts")
    conn.commit()
    conn.close()
    with Brain.open(path) as brain:
        assert brain.stats().revision == HEAD_REVISION


@pytest.mark.parametrize("end", ["source", "target"])
def test_dangling_edges_from_go_are_removed_on_adoption(kit, tmp_path, isolated_home, end):
    """Go deletes nodes with foreign keys off; adoption drops the edges left pointing at nothing, from
    either end."""
    path = _v4_with_dangling_edge(kit, tmp_path / "brain.sqlite", end)
    before = kit.read_tables(path)
    with Brain.open(path) as brain:
        assert brain.stats().revision == HEAD_REVISION
    after = kit.read_tables(path)
    assert len(after["edges"]) == len(before["edges"]) - 1
    assert 99 in before["edges"] and 99 not in after["edges"]
    assert {k: v for k, v in before["edges"].items() if k != 99}.keys() == after["edges"].keys()


def test_cli_reports_a_failed_upgrade_with_exit_8(kit, cli, project, brain_snapshot):
    path = paths.project_brain_path(project)
    paths.ensure_private_dir(path.parent)
    _v4_with_broken_keyword_table(kit, path)
    before = brain_snapshot(path)
    result = cli("stats", "--format", "json")
    assert result.exit_code == 8, (result.stdout, result.stderr)
    assert result.stderr.strip().count("\n") == 0
    assert "rolled back" in result.stderr
    assert brain_snapshot(path) == before


# ------------------------------------------------------------------ what only the upgrade itself refuses


def _plain_sqlite(kit, path):
    """Some other program's SQLite file: tables, but no schema_meta."""
    conn = kit.connect(path)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.execute("INSERT INTO notes VALUES ('mine')")
    conn.commit()
    conn.close()


def _go_schema_0(kit, path):
    _go_brain_saying(kit, path, "v1", "0")


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (_plain_sqlite, "is an SQLite file but not a cerebro brain (no schema_version)"),
        (_go_schema_0, "has an invalid schema_version 0"),
    ],
    ids=["not-a-brain", "schema-version-0"],
)
def test_a_file_that_is_no_brain_of_any_version_is_refused_and_untouched(
    make, message, kit, tmp_path, isolated_home, brain_snapshot
):
    path = tmp_path / "brain.sqlite"
    make(kit, path)
    before = brain_snapshot(path)
    with pytest.raises(MigrationFailed) as raised:
        Brain.open(path)
    assert str(raised.value) == f"{path} {message}"
    assert brain_snapshot(path) == before
    assert _backups(isolated_home) == []  # refused before the backup: nothing to restore


def test_the_upgrade_itself_refuses_a_brain_that_became_too_new_after_the_check(kit, tmp_path, isolated_home):
    """Opening checks the version, then takes the upgrade lock: a Go cerebro may migrate the brain to its
    schema 8 in between. The upgrade reads the state again under the lock and refuses it, with no backup."""
    from cerebro.db.engine import create_engine
    from cerebro.db.migrate import ensure_current

    path = tmp_path / "brain.sqlite"
    _go_schema_8(kit, path)
    engine = create_engine(path)
    try:
        with pytest.raises(SchemaTooNew) as raised:
            ensure_current(engine, path)
    finally:
        engine.dispose()
    assert f"brain {path} was written by a newer cerebro (schema_version 8)" in str(raised.value)
    assert _backups(isolated_home) == []


def test_a_go_brains_upgrade_backup_is_named_for_its_schema_version(kit, tmp_path, isolated_home):
    """A Go brain has no revision: its backup says which version it was (what a user restores by hand)."""
    path = kit.load("v4", tmp_path / "brain.sqlite")
    with Brain.open(path) as brain:
        assert brain.upgrade_backup is not None
        assert Path(brain.upgrade_backup).name.startswith("brain-pre-v4-upgrade-")
    assert [name for name in _backups(isolated_home) if name.endswith(".sqlite")] == [Path(brain.upgrade_backup).name]


def test_the_backups_fingerprint_is_private_like_the_backup(kit, tmp_path, isolated_home):
    path = kit.load("v4", tmp_path / "brain.sqlite")
    with Brain.open(path) as brain:
        backup = Path(brain.upgrade_backup)
    marker = backup.with_suffix(".fingerprint")
    assert marker.is_file()
    assert (backup.stat().st_mode & 0o777, marker.stat().st_mode & 0o777) == (0o600, 0o600)


def _tree(root, *files):
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("")
    return root


def test_migration_scripts_come_from_the_wheel_else_the_checkout_else_a_clear_error(tmp_path, monkeypatch):
    """``cerebro/_migrations`` in an installed wheel, ``alembic/`` in a checkout; neither is an installation
    to repair, not a brain to blame."""
    from cerebro.db import migrate

    wheel = _tree(tmp_path / "wheel", "cerebro/db/migrate.py", "cerebro/_migrations/env.py")
    monkeypatch.setattr(migrate, "__file__", str(wheel / "cerebro/db/migrate.py"))
    assert migrate.script_location() == (wheel / "cerebro/_migrations").resolve()
    checkout = _tree(tmp_path / "checkout", "cerebro/db/migrate.py", "alembic/env.py", "cerebro/_migrations/README")
    monkeypatch.setattr(migrate, "__file__", str(checkout / "cerebro/db/migrate.py"))
    assert migrate.script_location() == (checkout / "alembic").resolve()
    broken = _tree(tmp_path / "broken", "cerebro/db/migrate.py")
    monkeypatch.setattr(migrate, "__file__", str(broken / "cerebro/db/migrate.py"))
    with pytest.raises(MigrationFailed) as raised:
        migrate.script_location()
    assert str(raised.value) == "cerebro's migration scripts are missing from this installation; reinstall cerebro"


def test_an_upgrade_holds_the_write_lock_from_its_first_statement(kit, tmp_path, isolated_home, monkeypatch):
    """The upgrade's transaction begins IMMEDIATE: another writer waits for the whole upgrade rather than
    slipping in between its reads and its first write (a brain behind head that has a revision: no stamp
    writes first)."""
    import sqlean.dbapi2 as same_sqlite  # the engine's SQLite library: two libraries in one process break locks

    from alembic import command

    path = kit.load("v4", tmp_path / "brain.sqlite")
    Brain.open(path).close()
    kit.alembic_batch([kit.step("downgrade", "v7", brain=path)], home=isolated_home)
    probes: list[str] = []
    real_upgrade = command.upgrade

    def probing_upgrade(cfg, target):  # runs inside the upgrade's transaction, before any revision
        other = same_sqlite.connect(str(path), timeout=0)
        try:
            other.execute("BEGIN IMMEDIATE")
            probes.append("another writer got in")
            other.execute("ROLLBACK")
        except same_sqlite.OperationalError as exc:
            probes.append(str(exc))
        finally:
            other.close()
        return real_upgrade(cfg, target)

    monkeypatch.setattr(command, "upgrade", probing_upgrade)
    with Brain.open(path) as brain:
        assert brain.upgrade_backup is not None  # it did upgrade
    assert probes == ["database is locked"]


def test_the_upgrades_last_check_names_the_first_dangling_reference(tmp_path):
    """After the revisions, ``PRAGMA foreign_key_check`` must find nothing; what it finds fails the upgrade (and
    rolls it back) with the count and the first row, as SQLite reports them."""
    import sqlalchemy as sa

    from cerebro.db.migrate import check_foreign_keys

    engine = sa.create_engine(f"sqlite:///{tmp_path / 'fk.sqlite'}")
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
        conn.exec_driver_sql("CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parent(id))")
        conn.exec_driver_sql("INSERT INTO parent (id) VALUES (1)")
        check_foreign_keys(conn)  # nothing dangling: no error
        conn.exec_driver_sql("INSERT INTO child (id, parent_id) VALUES (7, 2), (8, 3), (9, 1)")
        with pytest.raises(MigrationFailed) as raised:
            check_foreign_keys(conn)
    engine.dispose()
    assert str(raised.value) == (
        "upgrade would leave 2 dangling reference(s) (first: ('child', 7, 'parent', 0)); the brain was left unchanged"
    )


def test_a_go_brain_is_stamped_at_its_version_before_the_chain_runs(kit, tmp_path, isolated_home, monkeypatch):
    """The stamp is what keeps the chain from replaying v1… over a v4 brain: the upgrade starts at v4."""
    from alembic import command

    path = kit.load("v4", tmp_path / "brain.sqlite")
    started_at: list[object] = []
    real_upgrade = command.upgrade

    def recording_upgrade(cfg, target):
        conn = cfg.attributes["connection"]
        started_at.append(conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar())
        return real_upgrade(cfg, target)

    monkeypatch.setattr(command, "upgrade", recording_upgrade)
    Brain.open(path).close()
    assert started_at == ["v4"]


@pytest.mark.parametrize("version", ["v4", "v7"])
def test_an_adopted_go_brains_keyword_index_holds_each_active_memory_once(kit, tmp_path, isolated_home, version):
    """Go brains from v3 on have ``nodes_fts``: adopting one must keep it, not add every memory to it again."""
    path = kit.load(version, tmp_path / "brain.sqlite")
    Brain.open(path).close()
    conn = kit.connect(path)
    try:
        indexed = sorted(r[0] for r in conn.execute("SELECT node_id FROM nodes_fts").fetchall())
        active = sorted(r[0] for r in conn.execute("SELECT id FROM nodes WHERE status = 'active'").fetchall())
    finally:
        conn.close()
    assert indexed == active and active


def test_adoption_rewrites_boundaries_and_timestamps_in_other_layouts_and_keeps_what_it_cannot_read(
    kit, tmp_path, isolated_home
):
    """Opening an adopted brain brings Go's and hand-edited times to the storage layout: the provenance and origin
    boundaries in schema_meta too. A value no parser reads stays as it was; the others around it are rewritten."""
    path = kit.load("v7", tmp_path / "brain.sqlite")
    conn = kit.connect(path)
    conn.execute("UPDATE schema_meta SET value = '2026-08-25T09:00:00Z' WHERE key = 'provenance_convention_since'")
    conn.execute("UPDATE schema_meta SET value = 'not a time' WHERE key = 'origin_convention_since'")
    ids = [r[0] for r in conn.execute("SELECT id FROM nodes ORDER BY rowid LIMIT 2").fetchall()]
    conn.execute("UPDATE nodes SET updated_at = 'garbled' WHERE id = ?", (ids[0],))
    conn.execute("UPDATE nodes SET updated_at = '2026-09-01T08:30:00+02:00' WHERE id = ?", (ids[1],))
    conn.commit()
    conn.close()
    Brain.open(path).close()
    meta = kit.meta(path)
    assert meta["provenance_convention_since"] == "2026-08-25 09:00:00"
    assert meta["origin_convention_since"] == "not a time"
    conn = kit.connect(path)
    try:
        updated = dict(conn.execute("SELECT id, updated_at FROM nodes WHERE id IN (?, ?)", ids).fetchall())
    finally:
        conn.close()
    assert updated == {ids[0]: "garbled", ids[1]: "2026-09-01 06:30:00"}


def test_a_bad_identifier_never_reaches_the_sql_of_a_revision() -> None:
    from types import SimpleNamespace

    from cerebro.db.revisions import column_exists

    bind = SimpleNamespace(exec_driver_sql=lambda *args: pytest.fail(f"SQL ran: {args}"))
    with pytest.raises(ValueError, match=r"^bad identifier 'nodes; DROP TABLE nodes'$"):
        column_exists(bind, "nodes; DROP TABLE nodes", "id")


def _file_with(tmp_path, *statements: str):
    """A raw connection to a new file after ``statements`` (what a half-made or foreign database holds)."""
    from cerebro.db.engine import connect_raw

    conn = connect_raw(tmp_path / "odd.sqlite", wal=False)
    for statement in statements:
        conn.execute(statement)
    return conn


def test_the_state_of_odd_files_is_read_without_error(tmp_path) -> None:
    """What opening decides from: a schema_version that is no number is unknown, an empty alembic_version has no
    revision, and a file holding only SQLite's own sqlite_sequence has no table of a brain."""
    from cerebro.db.migrate import read_state

    conn = _file_with(
        tmp_path,
        "CREATE TABLE schema_meta (key TEXT PRIMARY KEY, value TEXT)",
        "INSERT INTO schema_meta VALUES ('schema_version', 'seven')",
        "CREATE TABLE alembic_version (version_num TEXT)",
    )
    assert read_state(conn) == (None, None, True)
    conn.close()
    (tmp_path / "odd.sqlite").unlink()
    conn = _file_with(
        tmp_path,
        "CREATE TABLE gone (id INTEGER PRIMARY KEY AUTOINCREMENT)",
        "INSERT INTO gone DEFAULT VALUES",
        "DROP TABLE gone",
    )
    assert conn.execute("SELECT name FROM sqlite_master").fetchall() == [("sqlite_sequence",)]
    assert read_state(conn) == (None, None, False)
    conn.close()


def test_an_upgrade_while_another_process_writes_a_rollback_journal_brain_is_busy_not_an_internal_error(
    kit, cli, project, brain_snapshot
) -> None:
    """Restored backups and sqlite exports are rollback-journal files: switching one to WAL for its upgrade needs the
    write lock at once (SQLite does not wait there). Another writer holding it was "internal error", exit 1."""
    import subprocess
    import sys

    path = paths.project_brain_path(project)
    paths.ensure_private_dir(path.parent)
    kit.load("v4", path)
    before = brain_snapshot(path)
    hold = (  # another process: SQLite's file locks do not keep one process's connections apart
        "import sqlite3, sys; c = sqlite3.connect(sys.argv[1], isolation_level=None); c.execute('BEGIN IMMEDIATE'); "
        "print('holding', flush=True); sys.stdin.read()"
    )
    writer = subprocess.Popen([sys.executable, "-c", hold, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert writer.stdout is not None and writer.stdout.readline() == b"holding\n"
        result = cli("stats", "--format", "json")
    finally:
        writer.communicate(b"", timeout=30)
    assert result.exit_code == 7, (result.exit_code, result.stderr)
    assert len(result.stderr.strip().splitlines()) == 1 and "another process" in result.stderr
    assert brain_snapshot(path) == before
    assert cli("stats", "--format", "json").exit_code == 0  # once it is done, the upgrade goes ahead
