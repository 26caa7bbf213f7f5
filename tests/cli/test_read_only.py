"""Read-only commands leave CEREBRO_HOME and the project exactly as they found them: no brain, metrics file,
lock, log or folder made as a side effect — with a brain, and (where a brain is needed) without one."""

from __future__ import annotations

from pathlib import Path

import pytest

READ_ONLY = [
    ("list",),
    ("stats",),
    ("usage",),
    ("search", "anything at all"),
    ("config", "list"),
    ("config", "get", "recall_threshold"),
    ("relation", "list"),
    ("consolidate", "--suggest"),
    ("gc", "--dry-run"),
    ("forget", "--subject", "anything"),
    ("export", "--format", "jsonl"),
    ("inbox", "list"),
    ("anchors",),
    ("brains",),
]


def _listing(*roots: Path) -> list[str]:
    """Every file and folder under the roots, with its size (a brain's own -wal/-shm come and go with each
    connection and are gone once it closes)."""
    return sorted(
        f"{path.relative_to(root.parent)}:{path.stat().st_size if path.is_file() else 'dir'}"
        for root in roots
        for path in root.rglob("*")
    )


@pytest.mark.parametrize("command", READ_ONLY, ids=" ".join)
def test_a_read_only_command_writes_no_file_with_a_brain(cli, add, brain_path, isolated_home, project, command):
    add("a memory about the read-only rule")
    before = _listing(isolated_home, project)
    result = cli(*command)
    assert result.exit_code == 0, result.stderr
    assert _listing(isolated_home, project) == before


@pytest.mark.parametrize("command", READ_ONLY, ids=" ".join)
def test_a_read_only_command_leaves_a_rollback_journal_brain_byte_for_byte(cli, add, brain_path, command):
    """A restored backup is in rollback-journal mode: the ORM's reads (gc --dry-run, forget without --apply, inbox
    list, relation list) switched it to WAL on open — a write, which also failed on a read-only file (a review)."""
    import sqlite3

    add("a memory about the read-only rule")
    conn = sqlite3.connect(brain_path)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    before = brain_path.read_bytes()
    result = cli(*command)
    assert result.exit_code == 0, result.stderr
    assert brain_path.read_bytes() == before


@pytest.mark.parametrize(
    "command", [*READ_ONLY, ("get", "00000000"), ("recall", "anything"), ("dashboard",)], ids=" ".join
)
def test_a_read_only_command_without_a_brain_creates_nothing(cli, isolated_home, project, command):
    before = _listing(isolated_home, project)
    result = cli(*command)
    assert result.exit_code != 0 or command[0] in ("usage", "relation", "config", "brains")
    assert _listing(isolated_home, project) == before


@pytest.mark.parametrize(
    "command",
    [
        ("stats",),
        ("list",),
        ("get", "{id}"),
        ("get", "{prefix}", "--as-of", "2026-01-01"),
        ("config", "list"),
        ("config", "get", "lane_depth"),
    ],
    ids=" ".join,
)
def test_a_read_imports_no_orm(add, brain_path, project, command):
    """Reads are served on the raw connection: SQLAlchemy, SQLModel and Alembic cost ~0.3 s of CPU to import
    (`cerebro stats`, `get`, `list` and `config` took ~0.45 s). Run in a fresh interpreter: this one has them."""
    import subprocess
    import sys

    node_id = add("a memory to read back")
    argv = [part.format(id=node_id, prefix=node_id[:8]) for part in command]
    code = (
        "import contextlib, io, sys\n"
        "from cerebro.cli.app import run\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    code = run([*sys.argv[2:], '--format', 'json', '-p', sys.argv[1]])\n"
        "heavy = [m for m in ('sqlalchemy', 'sqlmodel', 'alembic') if m in sys.modules]\n"
        "print(code, bool(out.getvalue().strip()), heavy)\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code, str(project), *argv], capture_output=True, text=True, timeout=60, check=False
    )
    assert shown.stdout.strip() == "0 True []", shown.stdout + shown.stderr


@pytest.mark.parametrize("opened_by", ["raw", "orm"])
def test_a_brain_read_while_read_only_takes_writes_again_once_writable(add, brain_path, opened_by):
    """SQLite makes a brain's -wal and -shm with the brain's mode: a read of a read-only (0400) brain left them
    read-only, and once the brain was made writable again every write failed ("attempt to write a readonly
    database"). A connection to a brain this process may write makes its sidecars writable again (0600, still
    private) before SQLite opens them. (As root, which CI runs as, a read-only file is still writable, so the failure
    itself cannot be shown here; the modes can.)"""
    import sqlean

    from cerebro.db.engine import connect_raw, create_engine, writable_sidecars

    add("a memory written before the brain was made read-only")
    sidecars = [Path(f"{brain_path}{suffix}") for suffix in ("-wal", "-shm")]
    brain_path.chmod(0o400)
    reader = sqlean.connect(f"{brain_path.as_uri()}?mode=ro", uri=True)  # a read of the read-only brain
    reader.execute("SELECT count(*) FROM nodes").fetchall()
    reader.close()
    assert [oct(s.stat().st_mode & 0o777) for s in sidecars] == ["0o400", "0o400"]  # as such a read leaves them
    writable_sidecars(brain_path)  # a read-only brain's are left as they are
    assert [oct(s.stat().st_mode & 0o777) for s in sidecars] == ["0o400", "0o400"]
    brain_path.chmod(0o600)
    if opened_by == "raw":
        conn = connect_raw(brain_path)
        modes = [oct(s.stat().st_mode & 0o777) for s in sidecars]
        conn.close()
    else:
        engine = create_engine(brain_path)
        with engine.connect():
            modes = [oct(s.stat().st_mode & 0o777) for s in sidecars]
        engine.dispose()
    assert modes == ["0o600", "0o600"]
