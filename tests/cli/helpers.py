"""Shared assertions and helpers for the CLI tests (imported as ``from .helpers import ...``)."""

from __future__ import annotations

from pathlib import Path

from cerebro import Brain
from tests.helpers import MISSING_ID, assert_one_line_error  # noqa: F401 - re-exported


def ok(result):
    """Assert success (exit 0, nothing on stderr) and return the result."""
    assert result.exit_code == 0, result
    assert result.stderr == "", result.stderr
    return result


def node(brain_path: Path, node_id: str):
    with Brain.open(brain_path) as brain:
        return brain.get(node_id).node


def detail(brain_path: Path, node_id: str, **kw):
    with Brain.open(brain_path) as brain:
        return brain.get(node_id, **kw)


def raw_rows(brain_path: Path, sql: str, params: tuple = ()) -> list[tuple]:
    """Run a read query with the sqlean driver (it has FTS5, so MATCH works)."""
    import sqlean.dbapi2 as sqlean

    conn = sqlean.connect(str(brain_path))
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def raw_exec(brain_path: Path, sql: str, params: tuple = ()) -> None:
    import sqlean.dbapi2 as sqlean

    conn = sqlean.connect(str(brain_path))
    try:
        conn.execute(sql, params)
        conn.commit()
    finally:
        conn.close()


def fts_rows(brain_path: Path) -> dict[str, tuple[str, str]]:
    """node_id → (content, subtype) as held by the nodes_fts keyword index."""
    rows = raw_rows(brain_path, "SELECT node_id, content, subtype FROM nodes_fts")
    return {r[0]: (r[1], r[2]) for r in rows}


def fts_match(brain_path: Path, query: str) -> set[str]:
    rows = raw_rows(brain_path, "SELECT node_id FROM nodes_fts WHERE nodes_fts MATCH ?", (query,))
    return {r[0] for r in rows}
