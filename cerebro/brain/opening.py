"""Opening and creating brains: the checks before a handle exists, the upgrade on open, ``init``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import cerebro  # cerebro.reports loads on first use: hooks never define the reports (ADR 0036)
from cerebro import paths, team
from cerebro.brain.handle import Handle
from cerebro.errors import BrainNotFound, BrainUnreadable, InvalidInput

if TYPE_CHECKING:
    import cerebro.reports
    from cerebro.db.types import Session


def open_handle(path: str | os.PathLike[str], *, create: bool = False, team_project: str | None = None) -> Handle:
    """The handle on the brain at ``path``, upgraded first if it is behind. ``create`` makes a new one.
    ``path`` may be a team database's URL (``postgresql+psycopg://…``), with ``team_project`` naming the brain."""

    if team.is_store_url(path):
        return open_team_handle(str(path), team_project, create=create)
    from cerebro.db.engine import connect_raw, create_engine, driver
    from cerebro.db.migrate import ensure_current, has_no_tables, needs_upgrade

    brain_path = Path(path).expanduser()
    empty = not brain_path.exists() or brain_path.stat().st_size == 0
    if create and empty and brain_path.is_symlink():  # a planted link: a brain would be written into another file
        raise InvalidInput(
            f"{brain_path} is a symbolic link: cerebro creates a brain only as a file of its own (remove the link)"
        )
    if not brain_path.exists() or (not create and empty):
        # An empty file is what an interrupted init leaves: not a brain until init runs again.
        if not create:
            raise BrainNotFound(f"no brain at {brain_path} — run 'cerebro init' first")
        paths.create_private_file(brain_path)
    paths.tighten_private_file(brain_path)
    # A cheap check on a raw connection: a brain at head never imports Alembic.
    try:
        raw = connect_raw(brain_path, wal=False)
        try:
            if not create and has_no_tables(raw):
                # What an init killed before its first table leaves: not a brain until init finishes it.
                raise BrainNotFound(f"no brain at {brain_path} (an interrupted init?) — run 'cerebro init'")
            behind = needs_upgrade(raw, brain_path)
        finally:
            raw.close()
    except driver().DatabaseError as exc:
        raise BrainUnreadable(
            f"{brain_path} is not a readable brain ({exc}); restore a copy from {paths.backups_dir()}"
        ) from None
    if not behind:
        handle = Handle(brain_path)
    else:
        engine = create_engine(brain_path)
        try:
            backup = ensure_current(engine, brain_path)
        except BaseException:
            engine.dispose()
            raise
        handle = Handle(brain_path, engine, backup=backup)
    from cerebro.db.migrate import NEEDS_FTS_REBUILD

    try:
        with handle.snapshot() as conn:
            asked = handle.store.reads.meta(conn, NEEDS_FTS_REBUILD) is not None
        if asked:  # a sql dump was loaded into this file
            from cerebro.brain.exports import rebuild_keyword_lane

            rebuild_keyword_lane(handle)
    except BaseException:
        handle.close()
        raise
    return handle


def project_handle(project_dir: str | os.PathLike[str] | None = None, *, create: bool = False) -> Handle:
    """``Brain.for_project``'s handle: the brain of ``project_dir`` (default: ``$CLAUDE_PROJECT_DIR``, else the
    current directory) — its file, or the team brain the folder is bound to (ADR 0030) — knowing the directory."""
    directory = paths.resolve_project_dir(project_dir)
    if create and not directory.is_dir():
        raise InvalidInput(f"project folder {directory} does not exist: a brain belongs to an existing folder")
    bound = team.binding(directory)  # the folder's brain is a team brain (ADR 0030)
    if bound is not None:
        handle = open_handle(bound.url, create=create, team_project=bound.project)
    else:
        handle = open_handle(paths.project_brain_path(directory), create=create)
    handle.project = directory
    return handle


def open_team_handle(url: str, team_project: str | None, *, create: bool = False) -> Handle:
    """The handle on one project's brain in a team database (ADR 0030): the schema brought to head first, when
    behind (a new database included); a project without a brain there is not found unless ``create``."""
    from cerebro.db import postgres
    from cerebro.db.migrate import HEAD_REVISION
    from cerebro.store.connectors import PostgresConnector

    team_project = team_project or os.environ.get(team.ENV_TEAM_PROJECT)  # as the CLI's binding reads it
    if not team_project:
        raise InvalidInput("a team brain holds many projects: name this one (--team-project, or CEREBRO_TEAM_PROJECT)")
    connector = PostgresConnector(url, team_project)
    handle = Handle(None, connector=connector)
    try:
        try:
            revision = postgres.revision(handle.raw)
        except postgres.DriverError() as exc:  # no server, refused, bad credentials
            reason = postgres.scrubbed(" ".join(str(exc).split()), url) or exc.__class__.__name__
            raise BrainUnreadable(f"cannot reach the team brain at {connector.location}: {reason}") from None
        if revision != HEAD_REVISION:
            from cerebro.db.migrate import too_new_message
            from cerebro.errors import SchemaTooNew

            if revision is not None and revision_is_newer(revision):
                raise SchemaTooNew(too_new_message(Path(connector.location), f"revision {revision}"))
            if revision is None and not create:
                raise BrainNotFound(f"no team brain at {connector.location} — run 'cerebro init --store URL' first")
            postgres.upgrade(url)
        if not create and not _has_project(handle):
            raise BrainNotFound(
                f"no brain for project {team_project!r} in the team database at {postgres.redact(url)} — run "
                f"'cerebro init --store URL --team-project {team_project}' first"
            )
    except BaseException:
        handle.close()
        raise
    return handle


def revision_is_newer(revision: str) -> bool:
    """A revision this cerebro does not know: written by a newer one."""
    from cerebro.db.migrate import known_revision

    return not known_revision(revision)


def _has_project(handle: Handle) -> bool:
    with handle.snapshot() as conn:
        return handle.store.reads.meta(conn, "embedding_provider") is not None


def record_project(handle: Handle, session: Session, recorded: dict[str, str]) -> None:
    """Write the project identity (:func:`cerebro.identity.describe`) into the brain."""
    for key, value in recorded.items():
        handle.store.meta.put(session, key, value)


def init(
    path: str | os.PathLike[str],
    *,
    embed_provider: str | None = None,
    embed_model: str | None = None,
    embed_dims: int | None = None,
    force: bool = False,
    project: str | os.PathLike[str] | None = None,
    team_project: str | None = None,
) -> cerebro.reports.InitResult:
    """Create a brain at ``path`` (idempotent). ``force`` backs it up, then re-writes its embedding settings
    (the given ones; with none given, the stored ones stay). ``project``: the folder the brain serves, recorded
    in it (path, git repository) so that ``cerebro brains`` can tell — on an existing brain too.

    ``path`` may be a team database's URL, with ``team_project`` naming the project's brain in it (ADR 0030).

    The default provider is ``local`` (MiniLM on onnxruntime: offline, no server). A brain that already
    holds vectors keeps its model: switching would mix vector spaces (re-embedding is a later command).
    """
    from cerebro import identity
    from cerebro.db import backup as backups
    from cerebro.embed.registry import DEFAULT_PROVIDER, resolve_settings

    recorded = identity.describe(project) if project is not None else {}

    keep_settings = embed_provider is None and embed_model is None and embed_dims is None
    provider, model, dims = resolve_settings(embed_provider or DEFAULT_PROVIDER, embed_model, embed_dims)
    on_team = team.is_store_url(path)
    backup = None
    if on_team:
        handle = open_team_handle(str(path), team_project, create=True)
        existed = True
    else:
        brain_path = Path(path).expanduser()
        existed = brain_path.exists() and brain_path.stat().st_size > 0
        if existed and force:
            from cerebro.db.engine import driver

            try:
                backup = str(backups.backup(brain_path, "pre-init"))
            except driver().DatabaseError as exc:
                raise BrainUnreadable(
                    f"{brain_path} is not a readable brain ({exc}); move it aside before re-initialising"
                ) from None
        handle = open_handle(brain_path, create=True)
    try:
        stored = handle.read_embedding_settings()
        # A file an interrupted init left (tables, no embedding settings yet) is finished now, as asked.
        existed = existed and handle.read(lambda s: handle.store.meta.get(s, "embedding_provider")) is not None
        if existed and not force:
            if recorded:
                handle.write(lambda session: record_project(handle, session, recorded))
            return cerebro.reports.InitResult(handle.location, False, *stored, backup=handle.upgrade_backup)
        if existed and keep_settings and stored[0]:
            provider, model, dims = stored  # --force with no embedding flags refreshes, never switches

        def write(session: Session) -> None:
            current_dims = handle.store.vectors.table_dimensions(session)
            if current_dims is not None and (stored[1], stored[2]) != (model, dims):
                held = handle.store.vectors.count(session)
                if held:
                    raise InvalidInput(
                        f"this brain holds {held} vectors from {stored[1] or stored[0]} ({stored[2]} dims); "
                        f"switching to {model or provider} would mix vector spaces — keep "
                        f"--embed-provider {stored[0]}"
                    )
                handle.store.vectors.drop_table(session)
            handle.store.meta.put(session, "embedding_provider", provider)
            handle.store.meta.put(session, "embedding_model", model)
            handle.store.meta.put(session, "embedding_dimensions", str(dims))
            handle.store.vectors.ensure_table(session, dims)
            handle.connector.prepare_new_brain(session)
            record_project(handle, session, recorded)

        handle.write(write)
    finally:
        handle.close()
    return cerebro.reports.InitResult(handle.location, not existed, provider, model, dims, backup=backup)


def purge(path: str | os.PathLike[str]) -> Path:
    """Back the brain at ``path`` up (label ``pre-purge``), then delete it with its ``-wal`` and ``-shm``
    files. Returns the backup's path."""
    from cerebro.db import backup as backups

    brain_path = Path(path).expanduser()
    if not brain_path.is_file():
        raise BrainNotFound(f"no brain at {brain_path}: nothing to purge")
    backup = backups.backup(brain_path, "pre-purge")
    for suffix in ("", "-wal", "-shm"):
        brain_path.with_name(brain_path.name + suffix).unlink(missing_ok=True)
    return backup
