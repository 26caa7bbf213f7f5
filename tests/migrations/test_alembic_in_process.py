"""``alembic -x brain=PATH …`` from a checkout, run in this process through ``alembic.config.main`` (the
console script's entry point). The sweeps in test_chain.py and test_upgrade_fixtures.py run the same
command lines in subprocesses; here the checkout's own way in — creating a missing brain, adopting a Go
brain at its version, refusing a newer one, ``alembic check`` — is exercised where the test sees it.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from cerebro import clock, paths
from cerebro.db.migrate import HEAD_REVISION, UPSTREAM_SCHEMA_VERSION


@pytest.fixture
def alembic(
    kit: SimpleNamespace, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[..., None]]:
    """Run one ``alembic -c alembic.ini -x brain=PATH <args>`` command line in-process, clock pinned."""
    from alembic.config import CommandLine, Config

    scratch = tmp_path_factory.mktemp("cwd")
    # alembic.ini names its scripts relative to itself (%(here)s): run from a scratch folder, so that nothing a
    # broken path handling writes lands in the checkout.
    monkeypatch.chdir(scratch)
    monkeypatch.delenv("ALEMBIC_CONFIG", raising=False)
    # The checkout's env.py configures logging from alembic.ini, as the console script should: put the
    # test process's logging back afterwards.
    root = logging.getLogger()
    saved = (root.level, root.handlers[:])
    named = {
        name: (logger.level, logger.handlers[:], logger.propagate, logger.disabled)
        for name, logger in logging.Logger.manager.loggerDict.items()
        if isinstance(logger, logging.Logger)
    }
    clock.set_now(kit.PINNED)

    def run(*args: str, brain: Path | str) -> None:
        # What alembic's console script does, with the output stream given: Config's default is the
        # sys.stdout of when alembic was imported, which a test runner may have closed since.
        cli = CommandLine(prog="alembic")
        ini = os.fspath(kit.REPO / "alembic.ini")
        options = cli.parser.parse_args(["-c", ini, "-x", f"brain={brain}", *args])
        cli.run_cmd(Config(file_=ini, ini_section=options.name, cmd_opts=options, stdout=sys.stdout), options)

    yield run
    clock.set_now(None)
    root.setLevel(saved[0])
    root.handlers[:] = saved[1]
    for name, (level, handlers, propagate, disabled) in named.items():
        logger = logging.getLogger(name)
        logger.setLevel(level)
        logger.handlers[:] = handlers
        logger.propagate, logger.disabled = propagate, disabled


def _version(path: Path) -> tuple[str | None, str | None]:
    conn = sqlite3.connect(path)
    try:
        revision = conn.execute("SELECT version_num FROM alembic_version").fetchone()
        schema = conn.execute("SELECT value FROM schema_meta WHERE key = 'schema_version'").fetchone()
    finally:
        conn.close()
    return (revision[0] if revision else None), (schema[0] if schema else None)


def test_a_missing_brain_is_created_private_under_a_tilde_path_and_brought_to_head(
    alembic: Callable[..., None], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", os.fspath(tmp_path))
    alembic("upgrade", "head", brain="~/fresh.sqlite")
    brain = tmp_path / "fresh.sqlite"
    assert stat.S_IMODE(brain.stat().st_mode) == 0o600  # memories may hold secrets
    assert _version(brain) == (HEAD_REVISION, str(UPSTREAM_SCHEMA_VERSION))


@pytest.mark.parametrize("fixture", ["v1", "v3", "v7"])
def test_a_go_brain_is_stamped_at_its_version_then_upgraded_keeping_every_row(
    alembic: Callable[..., None], kit: SimpleNamespace, tmp_path: Path, fixture: str
) -> None:
    brain = kit.load(fixture, tmp_path / f"{fixture}.sqlite")
    before = kit.read_tables(brain)
    alembic("upgrade", "head", brain=brain)
    kit.assert_upgraded(brain, before, kit.PINNED_TEXT)


def test_a_brain_from_a_newer_cerebro_is_refused_naming_the_fix_and_left_alone(
    alembic: Callable[..., None], kit: SimpleNamespace, tmp_path: Path
) -> None:
    brain = kit.load("v7", tmp_path / "newer.sqlite")
    conn = sqlite3.connect(brain)
    conn.execute("UPDATE schema_meta SET value = ? WHERE key = 'schema_version'", (str(UPSTREAM_SCHEMA_VERSION + 1),))
    conn.commit()
    conn.close()
    before = kit.read_tables(brain)
    with pytest.raises(SystemExit) as refused:
        alembic("upgrade", "head", brain=brain)
    assert str(refused.value) == (
        f"brain {brain} was written by a newer cerebro (schema_version {UPSTREAM_SCHEMA_VERSION + 1}) than this "
        f"one; upgrade cerebro (pip install -U cerebro-memory) or restore a backup from {paths.backups_dir()}"
    )
    assert kit.read_tables(brain) == before  # not stamped, not touched (opening it set WAL, as every open does)


def test_downgrading_to_v1_drops_every_later_column(
    alembic: Callable[..., None], kit: SimpleNamespace, tmp_path: Path
) -> None:
    brain = tmp_path / "b.sqlite"
    alembic("upgrade", "head", brain=brain)
    alembic("downgrade", "v1", brain=brain)
    assert kit.columns(brain, "nodes") == set(kit.NODE_COLUMNS_V1)
    assert kit.columns(brain, "edges") == set(kit.EDGE_COLUMNS_V1)


def test_alembic_check_finds_the_models_and_the_migrated_schema_in_step(
    alembic: Callable[..., None], tmp_path: Path
) -> None:
    # Raises CommandError on drift: a DATETIME column compared by its Python type, or the FTS5/vec0
    # lanes' tables taken for entities the models lack, would both show up as operations.
    brain = tmp_path / "b.sqlite"
    alembic("upgrade", "head", brain=brain)
    alembic("check", brain=brain)


def test_without_a_brain_it_prints_the_usage_and_offline_it_refuses(
    alembic: Callable[..., None], tmp_path: Path
) -> None:
    """``-x brain=`` left empty: the usage; ``--sql`` (offline): the revisions inspect the database they upgrade."""
    with pytest.raises(SystemExit, match=r"^usage: alembic -x brain=/path/to/brain\.sqlite upgrade head$"):
        alembic("upgrade", "head", brain="")
    with pytest.raises(SystemExit, match=r"^these migrations run online only: alembic -x brain=/path/to/brain"):
        alembic("upgrade", "head", "--sql", brain=tmp_path / "b.sqlite")
    assert not (tmp_path / "b.sqlite").exists()


def test_py0005_is_a_mark_taken_without_a_backup_and_not_taken_back_from_an_integer_brain(
    alembic: Callable[..., None], tmp_path: Path, isolated_home: Path
) -> None:
    """ADR 0041: a mark (py0005; py0007 on a brain file) changes no table — a brain below only such revisions is moved
    to head in place, with no backup (py0006 rebuilds the keyword index: an upgrade across it takes one) — and going
    back below py0005 is refused while the brain holds the integer model's vectors (a cerebro below it would embed
    that brain in float32 under the integer model's name)."""
    from cerebro import Brain

    floats = tmp_path / "float.sqlite"
    Brain.init(floats, embed_model="all-MiniLM-L6-v2-onnx-int8")
    alembic("downgrade", "py0006", brain=floats)
    assert _version(floats)[0] == "py0006"
    with Brain.open(floats) as brain:
        assert brain.upgrade_backup is None  # nothing but the revision changed
        brain.add("a memory after the upgrade")
    assert _version(floats)[0] == HEAD_REVISION == "py0007"
    assert not paths.backups_dir().exists() or list(paths.backups_dir().iterdir()) == []

    integer = tmp_path / "integer.sqlite"
    Brain.init(integer)  # the default: the integer model
    with pytest.raises(RuntimeError, match="cerebro reembed --model all-MiniLM-L6-v2-onnx-int8"):
        alembic("downgrade", "py0004", brain=integer)
    assert _version(integer)[0] == "py0007"


def test_an_upgrade_across_a_revision_that_changes_tables_still_takes_a_backup(
    alembic: Callable[..., None], tmp_path: Path, isolated_home: Path
) -> None:
    from cerebro import Brain

    brain_path = tmp_path / "b.sqlite"
    Brain.init(brain_path, embed_provider="none")
    alembic("downgrade", "py0003", brain=brain_path)
    with Brain.open(brain_path) as brain:
        assert brain.upgrade_backup is not None and Path(brain.upgrade_backup).name.startswith("b-pre-py0003-upgrade-")
    assert _version(brain_path)[0] == "py0007"


def test_py0006_puts_each_keyword_row_at_its_memorys_rowid(
    alembic: Callable[..., None], tmp_path: Path, isolated_home: Path
) -> None:
    """ADR 0066: before py0006 FTS5 chose each keyword row's rowid, and a memory's row could only be found by a scan
    of the whole index. The upgrade rebuilds the index (its tokenizer kept) with each row at its memory's rowid, and
    leaves out rows that had drifted from the memories (one for a memory that is gone)."""
    from cerebro import Brain
    from cerebro.db.engine import connect_raw

    path = tmp_path / "b.sqlite"
    Brain.init(path, embed_provider="none")
    with Brain.open(path) as brain:
        ids = [brain.add(f"memory number {n}") for n in range(5)]
        brain.forget("number 1", apply=True, hard=True)  # a gap in the rowids: FTS5's own choice would differ
        ids.remove(ids[1])
    alembic("downgrade", "py0005", brain=path)
    conn = connect_raw(path)
    with conn:  # as any cerebro before py0006 or Go cerebro wrote them: rowids of FTS5's choosing
        conn.execute("DELETE FROM nodes_fts")
        conn.execute("INSERT INTO nodes_fts (node_id, content, subtype) VALUES ('gone', 'a memory that is gone', '')")
        for node_id in reversed(ids):
            conn.execute(
                "INSERT INTO nodes_fts (node_id, content, subtype) SELECT id, content, '' FROM nodes WHERE id = ?",
                (node_id,),
            )
    assert (
        conn.execute(
            "SELECT count(*) FROM nodes_fts f JOIN nodes n ON n.id = f.node_id WHERE f.rowid = n.rowid"
        ).fetchone()[0]
        < 5
    )
    conn.close()
    with Brain.open(path) as brain:
        assert brain.upgrade_backup is not None  # the keyword index changed
        assert brain.recall("number", lanes=("keyword",)).ids  # still searchable
    conn = connect_raw(path)
    rows = conn.execute(
        "SELECT f.node_id, f.rowid, n.rowid FROM nodes_fts f LEFT JOIN nodes n ON n.id = f.node_id"
    ).fetchall()
    tokenizer = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'nodes_fts'").fetchone()[0]
    conn.close()
    assert sorted(r[0] for r in rows) == sorted(ids) and all(r[1] == r[2] for r in rows)
    assert tokenizer.endswith("tokenize = 'porter unicode61')")
