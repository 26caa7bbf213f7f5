"""Checks 4–5: the brain file is sound (integrity, keyword and vector indexes, metadata) and its embedder loads."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from cerebro.doctor.base import (
    FAIL,
    WARN,
    Check,
    _clip,
    _cmd,
    _copy_into,
    _Findings,
    _flat,
    _n,
    _q,
    _scratch_home,
    _subprocess_env,
)

# The doctor examines a SQLite brain file, so it uses the SQLite store directly (raw DB-API reads: no ORM).
from cerebro.store.sqlite import SQLITE

if TYPE_CHECKING:
    from cerebro.db.types import Connection

# --------------------------------------------------------------------------- 4. brain


def _restore(brain: Path, project: Path) -> tuple[str, str]:
    """(fix, note) for a broken brain: move it aside with its -wal/-shm (a stale WAL must never meet the
    restored file), then put the newest backup of this brain in its place, or start anew."""
    from cerebro import paths

    moves = [
        f"mv {_q(str(brain) + suffix)} {_q(str(brain) + '.broken' + suffix)}"
        for suffix in ("", "-wal", "-shm")
        if Path(str(brain) + suffix).exists()
    ]
    backup = _newest_backup(brain)
    if backup is not None:
        return " && ".join([*moves, f"cp {_q(backup)} {_q(brain)}"]), f"newest backup: {backup.name}"
    return (
        " && ".join([*moves, _cmd(project, "cerebro init")]),
        f"no backup under {paths.backups_dir()}: the brain starts empty",
    )


def _newest_backup(brain: Path) -> Path | None:
    from cerebro import paths

    backups = sorted(paths.backups_dir().glob(f"{brain.stem}*.sqlite"), key=lambda p: p.stat().st_mtime)
    return backups[-1] if backups else None


def _kept(brain: Path, project: Path) -> tuple[str | None, str]:
    """(fix, note) for a brain whose file still holds its memories: the newest backup in its place if there is one
    (the file moved aside, not deleted), else nothing to run — never a fresh, empty brain over it."""
    if _newest_backup(brain) is not None:
        return _restore(brain, project)
    return None, "no backup to restore: keep the file (its memories are in it) and copy it before any repair"


_UPGRADE_PROBE = (
    "import sys\n"
    "from cerebro import Brain\n"
    "try:\n"
    "    Brain.open(sys.argv[1]).close()\n"
    "except Exception as exc:\n"
    "    print(' '.join(str(exc).split()) or exc.__class__.__name__)\n"
    "    sys.exit(1)\n"
)


def check_brain(project: Path) -> Check:
    """The project's brain exists, is an SQLite file that passes ``integrity_check``, has a current schema
    (or one this cerebro upgrades: the upgrade is run on the copy, to see that it succeeds), and its keyword
    and vector indexes agree with its memories."""
    from cerebro import paths, team
    from cerebro.db.engine import connect_raw, driver

    bound = team.binding(project)
    if bound is not None:
        from cerebro.doctor.team import check_team_brain

        return check_team_brain(project, bound)
    findings = _Findings("brain")
    brain = paths.project_brain_path(project)
    extra: dict[str, Any] = {"path": str(brain)}
    if not brain.is_file() or brain.stat().st_size == 0:
        what = "is empty (an interrupted init)" if brain.is_file() else "does not exist"
        return Check("brain", FAIL, f"no brain for this project: {brain} {what}", _cmd(project, "cerebro init"), extra)
    extra["size_bytes"] = brain.stat().st_size
    try:
        with _scratch_home() as home:
            copy = _copy_into(brain, home)
            conn = connect_raw(copy, wal=False)
            try:
                usable = _inspect_file(conn, project, brain, findings, extra)
            finally:
                conn.close()
            if usable and extra.get("upgrade_pending"):
                usable = _upgrade_copy(copy, home, project, brain, findings)
            if usable:
                conn = connect_raw(copy, wal=False)
                try:
                    _inspect_content(conn, project, brain, findings, extra)
                finally:
                    conn.close()
    except driver().DatabaseError as exc:
        if extra.get("integrity") == ["ok"]:  # a sound file whose contents cerebro cannot read: never move it aside
            kept, note = _kept(brain, project)
            why = _clip(_flat(str(exc)))
            findings.add(FAIL, f"the brain file is sound but cerebro cannot read it ({why}); {note}", kept)
        else:
            fix, note = _restore(brain, project)
            findings.add(FAIL, f"{brain} is not a readable SQLite database ({_flat(str(exc))}); {note}", fix)
    counts = extra.get("active_nodes")
    from cerebro.db.migrate import HEAD_REVISION

    schema = extra.get("revision") or f"v{extra.get('schema_version')} (Go cerebro)"
    upgrade = (
        f", upgraded to {HEAD_REVISION} by the next command (tried on a copy)" if extra.get("upgrade_pending") else ""
    )
    ok = f"{brain.name[:12]}… schema {schema}{upgrade}, integrity ok" + (
        f", {_n(counts, 'active memory', 'active memories')} indexed" if counts is not None else ""
    )
    return findings.check(ok, **extra)


KEYWORD_INDEX = "FTS5 table main.nodes_fts"  # how integrity_check names a problem of the keyword index


def _inspect_file(conn: Connection, project: Path, brain: Path, findings: _Findings, extra: dict[str, Any]) -> bool:
    """integrity_check and the schema's version; False when there is nothing more to inspect."""
    from cerebro.db import migrate

    integrity = SQLITE.checks.integrity(conn)
    extra["integrity"] = integrity
    # Damage to the keyword index alone (SQLite checks FTS5 tables too) is not a lost brain: the keyword check
    # below names it, and its fix rebuilds the index from the memories.
    if integrity != ["ok"] and not all(KEYWORD_INDEX in problem for problem in integrity):
        fix, note = _restore(brain, project)
        more = f" (+{len(integrity) - 1} more)" if len(integrity) > 1 else ""
        findings.add(FAIL, f"integrity_check: {_flat(integrity[0])}{more}; {note}", fix)
        return False
    version, revision, has_tables = migrate.read_state(conn)
    extra.update(revision=revision, schema_version=version)
    if not has_tables:
        findings.add(FAIL, "the brain file holds no tables (an interrupted init)", _cmd(project, "cerebro init"))
        return False
    if version is not None and version > migrate.UPSTREAM_SCHEMA_VERSION:
        findings.add(FAIL, f"written by a newer cerebro (schema_version {version})", "pip install -U cerebro-memory")
        return False
    if revision != migrate.HEAD_REVISION:
        if revision is not None and not migrate.known_revision(revision):
            findings.add(FAIL, f"written by a newer cerebro (revision {revision})", "pip install -U cerebro-memory")
            return False
        if revision is None and version is None:
            fix, note = _restore(brain, project)
            findings.add(FAIL, f"an SQLite file but not a cerebro brain (no schema_version); {note}", fix)
            return False
        extra["upgrade_pending"] = True  # upgraded (after a backup) by the next command that opens it
        return True
    present = SQLITE.checks.tables(conn)
    head = head_columns()
    # A table or a column dropped by hand fails every command that reads it: only a backup has what it held.
    missing = sorted(set(head) - set(present)) or [
        f"{table}.{column}" for table, columns in sorted(head.items()) for column in sorted(columns - present[table])
    ]
    if missing:
        kept, note = _kept(brain, project)
        what = "column" if "." in missing[0] else "table"
        findings.add(FAIL, f"the brain has no {', '.join(missing)} {what} (at the current schema); {note}", kept)
        return False
    return True


def head_columns() -> dict[str, set[str]]:
    """The tables a brain at the current schema has, and their columns: the SQLModel entities the migrations build
    (the keyword and vector lanes are checked on their own)."""
    from sqlmodel import SQLModel

    import cerebro.models  # noqa: F401 - registers the entities' tables

    return {table.name: {column.name for column in table.columns} for table in SQLModel.metadata.sorted_tables}


def _upgrade_copy(copy: Path, home: Path, project: Path, brain: Path, findings: _Findings) -> bool:
    """Open the copy as any command would (a subprocess on the scratch home: its lock and backup stay there),
    which upgrades it; False, with the reason, when that fails."""
    import subprocess
    import sys

    ran = subprocess.run(  # noqa: S603 - a fixed program with an argument list, no shell
        [sys.executable, "-c", _UPGRADE_PROBE, str(copy)],
        capture_output=True,
        text=True,
        env=_subprocess_env(home),
        timeout=600,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if ran.returncode == 0:
        return True
    why = _clip(_flat(ran.stdout) or _flat(ran.stderr)[-300:] or f"exit {ran.returncode}")
    fix, note = _restore(brain, project)
    findings.add(
        FAIL,
        f"the schema upgrade the next command runs fails on a copy ({why}); a newer cerebro may migrate it "
        f"(pip install -U cerebro-memory), else restore: {note}",
        fix,
    )
    return False


def _inspect_content(conn: Connection, project: Path, brain: Path, findings: _Findings, extra: dict[str, Any]) -> None:
    """The keyword and vector indexes against the memories, and metadata that is not an object."""
    tables = set(SQLITE.checks.tables(conn))
    if "nodes" not in tables:
        return
    active = SQLITE.checks.active_ids(conn)
    extra["active_nodes"] = len(active)
    _check_keyword_index(conn, project, brain, tables, active, findings, extra)
    _check_vector_index(conn, project, tables, active, findings, extra)
    _check_secrets(conn, project, findings, extra)
    bad = SQLITE.checks.metadata_not_object(conn)
    extra["metadata_not_object"] = bad[0]
    if bad[0]:
        findings.add(
            # The fix stores each as {"_raw_metadata": "<the text>"}: how cerebro reads such a value anyway.
            WARN,
            f"{_n(bad[0], 'memory has', 'memories have')} metadata that is not a JSON object "
            f"(first: {str(bad[1])[:8]}); the fix keeps the text under _raw_metadata",
            # A command shown to the user; nothing here runs it.
            # A BLOB (Go cerebro's odd rows) cannot go into json_object, nor be read as text (it need not be UTF-8):
            # its bytes are kept as hex digits.
            f"sqlite3 {_q(brain)} \"UPDATE nodes SET metadata = json_object('_raw_metadata', "  # noqa: S608
            "CASE WHEN typeof(metadata) = 'blob' THEN hex(metadata) ELSE metadata END) "
            "WHERE metadata IS NOT NULL AND metadata NOT IN ('', 'null') "
            "AND (json_valid(metadata) = 0 OR json_type(metadata) <> 'object')\"",
        )


def _check_secrets(conn: Connection, project: Path, findings: _Findings, extra: dict[str, Any]) -> None:
    """Secrets stored in clear (before redaction existed, or with --allow-secret) — unless the user turned
    redaction off for this brain, which says they are wanted (ADR 0027)."""
    from cerebro import config
    from cerebro.brain.secrets import findings as secret_findings

    if not config.effective("redact_secrets", SQLITE.reads.config_values(conn).get("redact_secrets")):
        extra["secrets_in_clear"] = None
        return
    holding = [f.id for f in secret_findings(SQLITE.texts.all_texts(conn))]  # what `cerebro secrets scan` would list
    extra["secrets_in_clear"] = len(holding)
    if holding:
        findings.add(
            WARN,
            f"{_n(len(holding), 'record holds', 'records hold')} secrets in clear (first: {holding[0][:8]}); "
            "see them with `cerebro secrets scan`",
            _cmd(project, "cerebro secrets redact"),
        )


def _check_keyword_index(
    conn: Connection,
    project: Path,
    brain: Path,
    tables: set[str],
    active: set[str],
    findings: _Findings,
    extra: dict[str, Any],
) -> None:
    """Exactly the active memories are in ``nodes_fts`` (once each), and FTS5's own integrity-check passes.
    The fix flags the rebuild a sql dump asks for (``needs_fts_rebuild``): the next command that opens the
    brain re-indexes every active memory."""
    rebuild = (  # a command shown to the user; nothing here runs it
        f"sqlite3 {_q(brain)} \"INSERT OR REPLACE INTO schema_meta (key, value) VALUES ('needs_fts_rebuild', "  # noqa: S608
        f"'true')\" && {_cmd(project, 'cerebro stats')}"
    )
    if "nodes_fts" not in tables:
        findings.add(WARN, "no keyword index (nodes_fts), so recall has no keyword lane; the fix rebuilds it", rebuild)
        return
    if SQLITE.reads.meta(conn, "needs_fts_rebuild") is not None:  # re-indexed by the next command that opens it
        extra["fts_rebuild_pending"] = True
        return
    ids = SQLITE.checks.keyword_rows(conn)
    indexed = set(ids)
    missing, extra_rows, doubled = len(active - indexed), len(indexed - active), len(ids) - len(indexed)
    extra.update(fts_rows=len(ids), fts_missing=missing, fts_extra=extra_rows, fts_duplicates=doubled)
    if missing or extra_rows or doubled:
        parts = [
            f"{_n(missing, 'active memory', 'active memories')} missing" if missing else "",
            f"{_n(extra_rows, 'row')} for memories not active" if extra_rows else "",
            f"{_n(doubled, 'duplicate row')}" if doubled else "",
        ]
        findings.add(
            WARN,
            f"keyword index out of sync: {', '.join(p for p in parts if p)} "
            f"({_n(len(ids), 'row')}, {_n(len(active), 'active memory', 'active memories')}); "
            "the fix re-indexes at the next open",
            rebuild,
        )
    apart = SQLITE.checks.keyword_rows_apart(conn)  # written by another tool (ADR 0066)
    extra["fts_apart"] = apart
    if apart:
        findings.add(
            WARN,
            f"{_n(apart, 'keyword row is', 'keyword rows are')} not at their memory's rowid: a change of such a memory "
            "reads the whole keyword index; the fix re-indexes at the next open",
            rebuild,
        )
    message = SQLITE.checks.keyword_index_problem(conn)
    extra["fts_integrity"] = message or "ok"
    if message is not None:
        findings.add(
            WARN,
            f"keyword index damaged (FTS5 integrity-check: {message}); the fix re-indexes at the "
            "next open (if that fails, restore a backup)",
            rebuild,
        )


def _check_vector_index(
    conn: Connection, project: Path, tables: set[str], active: set[str], findings: _Findings, extra: dict[str, Any]
) -> None:
    """Every active memory has a vector (when the brain embeds), no vector outlives its memory, and the
    vector table is as wide as the brain's model."""
    dims = int(SQLITE.reads.meta(conn, "embedding_dimensions", "0") or 0) if "schema_meta" in tables else 0
    extra["embedding_dimensions"] = dims
    if SQLITE.reads.meta(conn, "reembed.provider") is not None if "schema_meta" in tables else False:
        findings.add(WARN, "a switch of embedding model is half done", _cmd(project, "cerebro reembed"))
    if "vec_nodes" not in tables:
        if dims > 0:
            findings.add(
                WARN,
                f"no vector table although the brain embeds ({dims} dims)",
                _cmd(project, "cerebro reembed"),
            )
        return
    width = SQLITE.vectors.table_dimensions(conn)
    if dims > 0 and width is not None and width != dims:
        findings.add(
            WARN,
            f"vector table is {width} wide but the brain's model has {dims} dims",
            _cmd(project, "cerebro reembed"),
        )
    held = SQLITE.checks.vector_rows(conn)
    every = SQLITE.reads.node_ids(conn)
    have = set(held)
    orphans = len([h for h in held if h not in every])
    missing = len(active - have) if dims > 0 else 0
    extra.update(vectors=len(held), vectors_orphaned=orphans, vectors_missing=missing)
    if missing:
        findings.add(
            WARN,
            f"{_n(missing, 'active memory has', 'active memories have')} no vector (recall misses them by meaning)",
            _cmd(project, "cerebro embed --pending"),
        )
    if orphans:
        findings.add(
            WARN,
            f"{_n(orphans, 'vector belongs', 'vectors belong')} to memories that no longer exist",
            _cmd(project, "cerebro reembed --force"),  # without --force a brain on its model has "nothing to do"
        )
