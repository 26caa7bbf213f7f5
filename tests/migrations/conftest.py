"""Helpers for the migration tests: load the SQL fixture brains, read every row back, say what an
upgraded brain must hold, and drive Alembic's command line in a subprocess.

The expectations here are computed independently of cerebro's code: timestamps are normalised with the
standard library (``datetime.fromisoformat``), not with ``cerebro.clock``.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURE_DIR = REPO / "fixtures" / "brains"

# Every fixture brain and the upstream schema_version it holds.
START_VERSION = {
    "v1": 1,
    "v2": 2,
    "v3": 3,
    "v4": 4,
    "v5": 5,
    "v6": 6,
    "v7": 7,
    "go_v4_rfc3339": 4,
    "go_v7_no_fts": 7,
    "go_v7_odd_metadata": 7,
}
FIXTURES = tuple(START_VERSION)

# The migration instant the tests pin (in-process with clock.set_now, in subprocesses with CEREBRO_NOW).
PINNED = datetime(2026, 9, 1, 12, 0, 0, tzinfo=UTC)
PINNED_TEXT = "2026-09-01 12:00:00"
PINNED_ENV = "2026-09-01T12:00:00Z"

LAYOUT = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$")

# Our own list of timestamp columns (spec §1), not the product's.
TIMESTAMP_COLUMNS = {
    "nodes": {"created_at", "last_accessed", "last_reinforced", "updated_at", "last_surfaced"},
    "edges": {"created_at", "valid_at", "invalid_at"},
    "nodes_archive": {"original_created_at", "archived_at"},
    "relations": {"created_at"},
    "inbox_candidates": {"created_at"},
}
PRIMARY_KEY = {
    "schema_meta": "key",
    "nodes": "id",
    "edges": "id",
    "nodes_archive": "id",
    "relations": "name",
    "inbox_candidates": "id",
    "sqlite_sequence": "name",
    "alembic_version": "version_num",
}
# Columns a later version adds, and the value an upgraded old row gets.
ADDED_COLUMN_DEFAULTS = {
    "nodes": {
        "updated_at": None,
        "last_surfaced": None,
        "provenance_root": 0,
        "origin_actor": None,
        "origin_channel": None,
        "origin_session": None,
        "origin_host": None,
    },
    "edges": {"valid_at": None, "invalid_at": None},
}
# Columns of each table at each upstream version (for downgrades).
NODE_COLUMNS_V1 = [
    "id",
    "type",
    "subtype",
    "content",
    "metadata",
    "importance",
    "decay_rate",
    "access_count",
    "times_reinforced",
    "status",
    "embedding_model",
    "created_at",
    "last_accessed",
    "last_reinforced",
]
EDGE_COLUMNS_V1 = ["id", "source_id", "target_id", "relation", "weight", "metadata", "created_at"]


def node_columns(version: int) -> set[str]:
    cols = set(NODE_COLUMNS_V1)
    if version >= 2:
        cols |= {"updated_at", "last_surfaced"}
    if version >= 5:
        cols.add("provenance_root")
    if version >= 6:
        cols |= {"origin_actor", "origin_channel", "origin_session", "origin_host"}
    return cols


def edge_columns(version: int) -> set[str]:
    return set(EDGE_COLUMNS_V1) | ({"valid_at", "invalid_at"} if version >= 4 else set())


SEED_RELATIONS = ("derived_from", "supports", "contradicts", "supersedes")
BOUNDARY_KEYS = ("provenance_convention_since", "origin_convention_since")


# --------------------------------------------------------------------------- loading and reading


def fts5_driver() -> ModuleType:
    """A DB-API module with FTS5: the stdlib's when it has it, else sqlean's."""
    try:
        conn = sqlite3.connect(":memory:")
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        conn.close()
        return sqlite3
    except sqlite3.OperationalError:
        import sqlean.dbapi2 as sqlean_driver

        return sqlean_driver


def load(name: str, dest: Path) -> Path:
    """Create ``dest`` from ``fixtures/brains/<name>.sql`` with plain ``executescript``."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    script = (FIXTURE_DIR / f"{name}.sql").read_text(encoding="utf-8")
    conn = fts5_driver().connect(os.fspath(dest))
    try:
        conn.executescript(script)
        conn.commit()
    finally:
        conn.close()
    return dest


def connect(path: Path) -> Any:
    """A plain read-write connection with FTS5 (no cerebro set-up: foreign keys off, as Go's tools)."""
    return fts5_driver().connect(os.fspath(path))


def _connect_ro(path: Path) -> Any:
    return fts5_driver().connect(f"file:{path}?mode=ro", uri=True)


def tables(path: Path) -> set[str]:
    conn = _connect_ro(path)
    try:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        conn.close()


def read_tables(path: Path) -> dict[str, dict[Any, dict[str, Any]]]:
    """Every row of every ordinary table (not the FTS lane), as {table: {primary key: {column: value}}}."""
    conn = _connect_ro(path)
    try:
        names = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'nodes_fts%' "
                "AND name NOT LIKE 'vec_nodes%'"
            )
        ]
        out: dict[str, dict[Any, dict[str, Any]]] = {}
        for table in names:
            cursor = conn.execute(f"SELECT * FROM {table}")
            cols = [d[0] for d in cursor.description]
            key = PRIMARY_KEY.get(table, cols[0])
            out[table] = {}
            for row in cursor.fetchall():
                record = dict(zip(cols, row, strict=True))
                out[table][record[key]] = record
        return out
    finally:
        conn.close()


def columns(path: Path, table: str) -> set[str]:
    conn = _connect_ro(path)
    try:
        return {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
    finally:
        conn.close()


def meta(path: Path) -> dict[str, str]:
    conn = _connect_ro(path)
    try:
        return dict(conn.execute("SELECT key, value FROM schema_meta").fetchall())
    finally:
        conn.close()


def fts_rows(path: Path) -> set[tuple[str, str, str]] | None:
    """(node_id, content, subtype) of nodes_fts, or None when the table is absent."""
    conn = _connect_ro(path)
    try:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name='nodes_fts'").fetchone():
            return None
        return set(conn.execute("SELECT node_id, content, subtype FROM nodes_fts").fetchall())
    finally:
        conn.close()


def fts_integrity_ok(path: Path) -> None:
    """FTS5's own check that the index matches its content (raises if not)."""
    conn = fts5_driver().connect(os.fspath(path))
    try:
        conn.execute("INSERT INTO nodes_fts(nodes_fts) VALUES('integrity-check')")
        conn.commit()
    finally:
        conn.close()


def foreign_key_problems(path: Path) -> list[tuple]:
    conn = _connect_ro(path)
    try:
        return conn.execute("PRAGMA foreign_key_check").fetchall()
    finally:
        conn.close()


def active_index(rows: dict[str, dict[Any, dict[str, Any]]]) -> set[tuple[str, str, str]]:
    """What nodes_fts must hold for these node rows: the active ones, subtype as COALESCE(subtype,'')."""
    return {(n["id"], n["content"], n["subtype"] or "") for n in rows["nodes"].values() if n["status"] == "active"}


# --------------------------------------------------------------------------- expectations


def norm_ts(value: Any) -> Any:
    """Independent normaliser: the storage layout in UTC, fractions truncated, zone-less taken as UTC."""
    if value is None or value == "" or not isinstance(value, str):
        return value
    if LAYOUT.match(value):
        return value
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    u = parsed.astimezone(UTC)
    # Not strftime: glibc's %Y does not zero-pad years below 1000.
    return f"{u.year:04d}-{u.month:02d}-{u.day:02d} {u.hour:02d}:{u.minute:02d}:{u.second:02d}"


def expected_after_upgrade(
    before: dict[str, dict[Any, dict[str, Any]]], now_text: str, head: str
) -> dict[str, dict[Any, dict[str, Any]]]:
    """What an upgraded copy of the brain ``before`` must hold, row for row."""
    expected: dict[str, dict[Any, dict[str, Any]]] = {}
    for table, rows in before.items():
        ts = TIMESTAMP_COLUMNS.get(table, set())
        expected[table] = {
            key: {col: (norm_ts(val) if col in ts else val) for col, val in row.items()} for key, row in rows.items()
        }
    for table, defaults in ADDED_COLUMN_DEFAULTS.items():
        for row in expected[table].values():
            for col, default in defaults.items():
                row.setdefault(col, default)
    meta_rows = expected["schema_meta"]
    meta_rows["schema_version"] = {"key": "schema_version", "value": "7"}
    for key in BOUNDARY_KEYS:  # stamped once, with the migration instant, only where absent
        meta_rows.setdefault(key, {"key": key, "value": now_text})
    expected.setdefault(
        "relations",
        {name: {"name": name, "traversal_class": None, "created_at": now_text} for name in SEED_RELATIONS},
    )
    expected.setdefault("inbox_candidates", {})
    expected["alembic_version"] = {head: {"version_num": head}}
    return expected


def assert_upgraded(path: Path, before: dict[str, dict[Any, dict[str, Any]]], now_text: str) -> None:
    """Every row and value kept, timestamps in the layout, at head, with the keyword lane in step."""
    from cerebro.db.migrate import HEAD_REVISION

    after = read_tables(path)
    expected = expected_after_upgrade(before, now_text, HEAD_REVISION)
    assert sorted(after) == sorted(expected), "tables differ"
    for table in expected:
        assert after[table] == expected[table], f"table {table} differs after the upgrade"
    for table, cols in TIMESTAMP_COLUMNS.items():
        for row in after[table].values():
            for col in cols:
                value = row[col]
                assert value is None or LAYOUT.match(value), f"{table}.{col} = {value!r} not in the layout"
    for key in BOUNDARY_KEYS:
        assert LAYOUT.match(after["schema_meta"][key]["value"])
    assert fts_rows(path) == active_index(after)
    fts_integrity_ok(path)
    assert foreign_key_problems(path) == []


# --------------------------------------------------------------------------- alembic's command line

# Runs several `alembic` command lines (alembic.config.main, the console script's entry point) in one
# process, so that a sweep over nine fixtures costs one interpreter start instead of nine. Each step may
# set environment variables first (CEREBRO_NOW) and copy the brain afterwards (a checkpoint).
_BATCH_DRIVER = r"""
import json, os, sqlite3, sys, traceback
from alembic.config import main
for number, step in enumerate(json.loads(sys.argv[1])):
    os.environ.update(step.get("env", {}))
    try:
        main(argv=step["argv"], prog="alembic")
    except SystemExit as exc:
        if exc.code not in (None, 0):
            print(f"step {number} {step['argv']} exited {exc.code}", file=sys.stderr)
            sys.exit(3)
    except BaseException:
        traceback.print_exc()
        print(f"step {number} {step['argv']} raised", file=sys.stderr)
        sys.exit(3)
    if step.get("checkpoint"):
        source = sqlite3.connect(step["brain"])
        copy = sqlite3.connect(step["checkpoint"])
        source.backup(copy)
        copy.close()
        source.close()
"""


def subprocess_env(home: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CEREBRO_NOW", "CEREBRO_LOG", "CLAUDE_PROJECT_DIR", "ALEMBIC_CONFIG")
    }
    env["CEREBRO_HOME"] = os.fspath(home)
    env.update(extra)
    return env


def step(*args: str, brain: Path, now: str | None = None, checkpoint: Path | None = None) -> dict[str, Any]:
    """One alembic command line on ``brain`` (``-x brain=PATH`` is added), optionally at a pinned instant."""
    item: dict[str, Any] = {"argv": ["-x", f"brain={brain}", *args], "brain": os.fspath(brain)}
    if now is not None:
        item["env"] = {"CEREBRO_NOW": now}
    if checkpoint is not None:
        item["checkpoint"] = os.fspath(checkpoint)
    return item


def alembic_batch(steps: list[dict[str, Any]], *, home: Path) -> subprocess.CompletedProcess[str]:
    """Run the steps in one subprocess from the checkout (alembic.ini there); fail the test on any error."""
    result = subprocess.run(
        [sys.executable, "-c", _BATCH_DRIVER, json.dumps(steps)],
        cwd=REPO,
        check=False,
        env=subprocess_env(home),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"alembic batch failed:\n{result.stdout}\n{result.stderr}"
    return result


def alembic_executable() -> str:
    candidate = Path(sys.executable).with_name("alembic")
    if candidate.exists():
        return os.fspath(candidate)
    import shutil

    found = shutil.which("alembic")
    assert found, "the alembic console script is not installed"
    return found


def alembic_binary(*args: str, brain: Path, home: Path, now: str | None = None) -> subprocess.CompletedProcess[str]:
    """The real ``alembic`` executable: ``alembic -x brain=PATH <args>``, run from the checkout."""
    extra = {"CEREBRO_NOW": now} if now else {}
    return subprocess.run(
        [alembic_executable(), "-x", f"brain={brain}", *args],
        cwd=REPO,
        check=False,
        env=subprocess_env(home, **extra),
        capture_output=True,
        text=True,
        timeout=120,
    )


def later(minutes: int) -> tuple[datetime, str, str]:
    """(datetime, layout text, CEREBRO_NOW text) some minutes after PINNED."""
    instant = PINNED + timedelta(minutes=minutes)
    return instant, instant.strftime("%Y-%m-%d %H:%M:%S"), instant.strftime("%Y-%m-%dT%H:%M:%SZ")


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def kit() -> SimpleNamespace:
    """The helpers above, for the test modules (a conftest cannot be imported by name)."""
    return SimpleNamespace(
        FIXTURES=FIXTURES,
        START_VERSION=START_VERSION,
        PINNED=PINNED,
        PINNED_TEXT=PINNED_TEXT,
        PINNED_ENV=PINNED_ENV,
        LAYOUT=LAYOUT,
        REPO=REPO,
        FIXTURE_DIR=FIXTURE_DIR,
        SEED_RELATIONS=SEED_RELATIONS,
        BOUNDARY_KEYS=BOUNDARY_KEYS,
        NODE_COLUMNS_V1=NODE_COLUMNS_V1,
        EDGE_COLUMNS_V1=EDGE_COLUMNS_V1,
        node_columns=node_columns,
        edge_columns=edge_columns,
        load=load,
        connect=connect,
        tables=tables,
        read_tables=read_tables,
        columns=columns,
        meta=meta,
        fts_rows=fts_rows,
        fts_integrity_ok=fts_integrity_ok,
        foreign_key_problems=foreign_key_problems,
        active_index=active_index,
        norm_ts=norm_ts,
        expected_after_upgrade=expected_after_upgrade,
        assert_upgraded=assert_upgraded,
        step=step,
        alembic_batch=alembic_batch,
        alembic_binary=alembic_binary,
        later=later,
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test asking for ``fixture_name`` runs once per fixture brain."""
    if "fixture_name" in metafunc.fixturenames:
        metafunc.parametrize("fixture_name", FIXTURES)
