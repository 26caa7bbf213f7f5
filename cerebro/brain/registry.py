"""Every brain under ``CEREBRO_HOME``: which project each serves, how big and how recent (``cerebro brains``).

Read without opening a brain the usual way: no upgrade, no backup, no file made — a listing must never change what
it lists. A file that cannot be read is still listed, with no memory count.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from cerebro import clock, identity, paths, reports


def brains() -> list[reports.BrainInfo]:
    """Project brains (sorted by project, unrecorded last), then the global brain if there is one."""
    found = []
    folder = paths.projects_dir()
    if folder.is_dir():
        brains = [path for path in sorted(folder.glob("*.sqlite")) if not path.name.endswith(".metrics.sqlite")]
        found = [describe(path, "project") for path in brains]  # a project's metrics database is not a brain
    found.sort(key=lambda info: (info.project is None, info.project or "", info.path))
    if paths.global_brain_path().is_file():
        found.append(describe(paths.global_brain_path(), "global"))
    return found


def describe(path: Path, scope: str) -> reports.BrainInfo:
    from cerebro.db.engine import connect_raw
    from cerebro.store.sqlite import SQLITE

    meta: dict[str, str | None] = dict.fromkeys(identity.KEYS)
    memories = None
    try:
        conn = connect_raw(path, wal=False)  # reads only; a WAL brain is not switched (wal=False)
        try:
            for key in identity.KEYS:
                meta[key] = SQLITE.reads.meta(conn, key)
            memories = SQLITE.reads.count_active(conn)
        finally:
            conn.close()
    except Exception:  # noqa: BLE001, S110 - unreadable, locked, an old layout: still listed, without a count
        pass
    files = [p for p in (path, Path(f"{path}-wal")) if p.exists()]
    last = max(p.stat().st_mtime for p in files)
    project = meta[identity.PATH]
    return reports.BrainInfo(
        path=str(path),
        scope=scope,
        project=project,
        project_exists=None if project is None else identity.folder_exists(project),
        git_dir=meta[identity.GIT_DIR],
        git_root=meta[identity.GIT_ROOT],
        memories=memories,
        size_bytes=sum(p.stat().st_size for p in files),
        last_used=clock.rfc3339(datetime.fromtimestamp(last, UTC)),
    )


def relink(old: str | os.PathLike[str], new: str | os.PathLike[str]) -> reports.BrainInfo:
    """Give the brain of project folder ``old`` (moved or renamed) to folder ``new``: the file takes ``new``'s
    name and records ``new`` as its project. ``old`` is the folder's former path — the one ``cerebro brains``
    shows; it need not exist any more. Refused when ``new`` does not exist or already has a brain."""
    from cerebro.errors import BrainNotFound, InvalidInput

    target_dir = Path(new).expanduser()
    if not target_dir.is_dir():
        raise InvalidInput(f"project folder {target_dir} does not exist")
    source = _brain_recorded_for(Path(old).expanduser())
    if source is None:
        raise BrainNotFound(f"no brain for {old} (see `cerebro brains` for the projects brains are recorded for)")
    target = paths.project_brain_path(target_dir)
    if target == source:
        raise InvalidInput(f"{old} and {new} are the same project")
    if target.exists() and target.stat().st_size > 0:
        raise InvalidInput(f"{new} already has a brain ({target}): nothing was moved")
    from cerebro.brain.opening import open_handle, record_project
    from cerebro.db.backup import settle

    # Opened first: a brain from a newer cerebro is refused here, before anything moves (an older one is upgraded).
    open_handle(source).close()
    settle(source)  # one file to move: no -wal left behind
    os.replace(source, target)
    recorded = identity.describe(paths.brain_owner(target_dir))
    handle = open_handle(target)
    try:
        handle.write(lambda session: record_project(handle, session, recorded))
    finally:
        handle.close()
    return describe(target, "project")


def _brain_recorded_for(folder: Path) -> Path | None:
    """The brain file of ``folder``: the one its path names, else one that recorded this folder as its project."""
    named = paths.project_brain_path(folder)
    if named.is_file() and named.stat().st_size > 0:
        return named
    wanted = os.path.realpath(folder)
    for info in brains():
        if info.scope == "project" and info.project in (str(folder), wanted):
            return Path(info.path)
    return None
