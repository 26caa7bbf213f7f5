"""Fixtures and independent helpers for the lifecycle tests (gc, consolidation, provenance, outcome, forget).

Expectations here are computed without cerebro's own code: the retention formula is written out again
from the spec (upstream-behaviour.md §5), rows are read with plain SQLite drivers, and timestamps are
compared as the storage layout text.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import snapshot, team_brain
from tests.helpers import MISSING_ID, assert_one_line_error  # noqa: F401 - re-exported to the lifecycle tests
from tests.postgres import TeamBrainRef, all_columns

REPO = Path(__file__).resolve().parents[2]
FIXTURE_DIR = REPO / "fixtures" / "brains"

# The template brain is created with the clock pinned here, so both convention boundaries sit long
# before any instant the tests use: new nodes are never "legacy" by accident.
TEMPLATE_BOUNDARY = datetime(2020, 1, 1, tzinfo=UTC)
# Day 0 of most tests.
T0 = datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC)

# The instant fixture brains are upgraded at (Brain.open stamps missing boundaries with it).
UPGRADED_AT = datetime(2026, 9, 1, 12, 0, 0, tzinfo=UTC)
UPGRADED_TEXT = "2026-09-01 12:00:00"


# Spec §3: λ per day by type.
LAMBDA = {"episode": 0.15, "concept": 0.02, "procedure": 0.005, "reflection": 0.05}


def day(n: float, hours: float = 0) -> datetime:
    return T0 + timedelta(days=n, hours=hours)


def layout(instant: datetime) -> str:
    """The storage layout, written independently of cerebro.clock."""
    u = instant.astimezone(UTC)
    return f"{u.year:04d}-{u.month:02d}-{u.day:02d} {u.hour:02d}:{u.minute:02d}:{u.second:02d}"


def parse_json_time(text: str | None) -> datetime | None:
    if text is None:
        return None
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def expected_retention(importance: float, access_count: int, node_type: str, days: float) -> float:
    """0.5·importance·(1+ln(1+accesses)) + 0.5·e^(−λ·days), λ per day by type (spec §5 gc)."""
    return 0.5 * importance * (1 + math.log(1 + access_count)) + 0.5 * math.exp(-LAMBDA[node_type] * days)


def retention_of(node_json: dict[str, Any], now: datetime) -> float:
    """The retention of a node as the CLI prints it (``list``/``get`` JSON)."""
    since = parse_json_time(node_json["last_accessed"] or node_json["created_at"])
    days = max(0.0, (now - since).total_seconds() / 86400)
    return expected_retention(node_json["importance"], node_json["access_count"], node_json["type"], days)


# --------------------------------------------------------------------------- raw reads


def _vec_connect(path: Path) -> Any:
    import sqlean.dbapi2 as sqlean
    import sqlite_vec

    conn = sqlean.connect(os.fspath(path))
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    conn.enable_load_extension(False)
    return conn


def _connect(path: Path) -> Any:
    """sqlean with sqlite-vec for a brain file; the project's raw connection for a team brain (SQLite's SQL runs
    there as the store's does: cerebro.db.postgres.pg_sql)."""
    return path.connect() if isinstance(path, TeamBrainRef) else _vec_connect(path)


def raw_rows(path: Path, sql: str, params: tuple = ()) -> list[tuple]:
    """A read with sqlean (FTS5) and sqlite-vec loaded (a team brain: its own connection)."""
    conn = _connect(path)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def raw_exec(path: Path, sql: str, params: tuple | list = (), *, many: bool = False) -> None:
    conn = _connect(path)
    try:
        if many:
            conn.executemany(sql, params)
        else:
            conn.execute(sql, params)
        conn.commit()
    finally:
        conn.close()


def has_table(path: Path, name: str) -> bool:
    if isinstance(path, TeamBrainRef):
        return name in {"nodes_fts", "vec_nodes"} or bool(
            raw_rows(path, "SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = ?", (name,))
        )
    return bool(raw_rows(path, "SELECT 1 FROM sqlite_master WHERE name = ?", (name,)))


def vec_ids(path: Path) -> set[str]:
    """The memories the vector lane holds a vector for."""
    if isinstance(path, TeamBrainRef):
        return {r[0] for r in raw_rows(path, "SELECT node_id FROM node_vectors")}
    if not has_table(path, "vec_nodes"):
        return set()
    return {r[0] for r in raw_rows(path, "SELECT node_id FROM vec_nodes")}


def fts_ids(path: Path) -> set[str]:
    """The memories the keyword lane finds (a team brain searches its active memories' own column)."""
    if isinstance(path, TeamBrainRef):
        return {r[0] for r in raw_rows(path, "SELECT id FROM nodes WHERE status = 'active'")}
    return {r[0] for r in raw_rows(path, "SELECT node_id FROM nodes_fts")}


def node_ids(path: Path) -> set[str]:
    return {r[0] for r in raw_rows(path, "SELECT id FROM nodes")}


def node_row(path: Path, node_id: str) -> dict[str, Any] | None:
    conn = _connect(path)
    try:
        cur = conn.execute(f"SELECT {all_columns(path, 'nodes')} FROM nodes WHERE id = ?", (node_id,))
        row = cur.fetchone()
        return dict(zip([d[0] for d in cur.description], row, strict=True)) if row else None
    finally:
        conn.close()


def archive_rows(path: Path) -> dict[str, dict[str, Any]]:
    conn = _connect(path)
    try:
        cur = conn.execute(f"SELECT {all_columns(path, 'nodes_archive')} FROM nodes_archive")
        cols = [d[0] for d in cur.description]
        return {r[0]: dict(zip(cols, r, strict=True)) for r in cur.fetchall()}
    finally:
        conn.close()


def edge_rows(path: Path) -> list[tuple]:
    return sorted(raw_rows(path, f"SELECT {all_columns(path, 'edges')} FROM edges"), key=repr)


def full_snapshot(path: Path) -> dict[str, list[tuple]]:
    """tests.conftest.snapshot (every ordinary table and the FTS content) plus the vector lane."""
    data = snapshot(path)
    if not isinstance(path, TeamBrainRef) and has_table(path, "vec_nodes"):
        data["vec_nodes"] = sorted(raw_rows(path, "SELECT node_id, embedding FROM vec_nodes"), key=repr)
    return data


# --------------------------------------------------------------------------- fixture brains


def fts5_driver() -> Any:
    try:
        conn = sqlite3.connect(":memory:")
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        conn.close()
        return sqlite3
    except sqlite3.OperationalError:
        import sqlean.dbapi2 as sqlean_driver

        return sqlean_driver


def load_fixture(name: str, dest: Path) -> Path:
    """Create ``dest`` from ``fixtures/brains/<name>.sql`` (as Go cerebro left it; not yet upgraded)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    script = (FIXTURE_DIR / f"{name}.sql").read_text(encoding="utf-8")
    conn = fts5_driver().connect(os.fspath(dest))
    try:
        conn.executescript(script)
        conn.commit()
    finally:
        conn.close()
    return dest


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def _lifecycle_template(tmp_path_factory, fake_providers):
    """One brain on the fake embedder, initialised with the clock at TEMPLATE_BOUNDARY; tests copy it."""
    from cerebro import Brain, clock

    path = tmp_path_factory.mktemp("lifecycle-template") / "template.sqlite"
    home = tmp_path_factory.mktemp("lifecycle-template-home")
    old_home = os.environ.get("CEREBRO_HOME")
    os.environ["CEREBRO_HOME"] = os.fspath(home)
    clock.set_now(TEMPLATE_BOUNDARY)
    try:
        Brain.init(path, embed_provider="fake")
    finally:
        clock.set_now(None)
        if old_home is None:
            os.environ.pop("CEREBRO_HOME", None)
        else:
            os.environ["CEREBRO_HOME"] = old_home
    assert not path.with_name(path.name + "-wal").exists()
    return path


@pytest.fixture
def fake_brain_path(project, engine, request):
    """Same contract as tests/conftest.py's fake_brain_path (a fake-embedder brain for ``project``), copied
    from a template whose convention boundaries are at 2020-01-01 (a team brain has none: nothing is legacy)."""
    from cerebro import paths

    if engine == "postgresql":
        return team_brain(request, "fake")
    _lifecycle_template = request.getfixturevalue("_lifecycle_template")
    path = paths.project_brain_path(project)
    paths.ensure_private_dir(path.parent)
    shutil.copyfile(_lifecycle_template, path)
    os.chmod(path, paths.FILE_MODE)
    return path


@pytest.fixture
def upgraded(project, at):
    """``upgraded("v4")``: load a fixture brain (as Go left it) at the project's brain path and open it with
    Brain.open at UPGRADED_AT, which upgrades it and stamps any missing boundary with that instant."""
    from cerebro import Brain, paths

    def make(name: str) -> Path:
        path = load_fixture(name, paths.project_brain_path(project))
        at(UPGRADED_AT)
        with Brain.open(path) as brain:
            assert brain.upgrade_backup is not None  # it really was upgraded
        return path

    return make


@pytest.fixture
def at():
    """Pin the clock: ``at(day_number, hours=0)`` or ``at(datetime)``. Returns the instant."""
    from cerebro import clock

    def pin(when: float | datetime, hours: float = 0) -> datetime:
        instant = when if isinstance(when, datetime) else day(when, hours)
        clock.set_now(instant)
        return instant

    return pin


@pytest.fixture
def run_any(cli):
    """Run a CLI command that must succeed (exit 0, empty stderr); JSON output parsed when asked for."""

    def invoke(*args: str, fmt: str = "json") -> Any:
        argv = [*args, "--format", fmt]
        result = cli(*argv)
        assert result.exit_code == 0, result
        assert result.stderr == "", result.stderr
        return result.json() if fmt == "json" else result.stdout

    return invoke


@pytest.fixture
def run(run_any, fake_brain_path):
    """``run_any`` on the project's fake-embedder brain."""
    return run_any


@pytest.fixture
def add(run):
    """Add a memory through the CLI; returns its id."""

    def _add(content: str, *args: str) -> str:
        return run("add", content, *args)["id"]

    return _add


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
