"""Every brain under ``CEREBRO_HOME``: which project each serves, how big and how recent (``cerebro brains``).

Read without opening a brain the usual way: no upgrade, no backup, no file made — a listing must never change what
it lists. A file that cannot be read is still listed, with no memory count.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from cerebro import identity, paths, values


def brains() -> list[values.BrainInfo]:
    """Project brains (sorted by project, unrecorded last), then the global brain if there is one."""
    found = []
    folder = paths.projects_dir()
    if folder.is_dir():
        found = [describe(path, "project") for path in sorted(folder.glob("*.sqlite"))]
    found.sort(key=lambda info: (info.project is None, info.project or "", info.path))
    if paths.global_brain_path().is_file():
        found.append(describe(paths.global_brain_path(), "global"))
    return found


def describe(path: Path, scope: str) -> values.BrainInfo:
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
    return values.BrainInfo(
        path=str(path),
        scope=scope,
        project=project,
        project_exists=None if project is None else identity.folder_exists(project),
        git_dir=meta[identity.GIT_DIR],
        git_root=meta[identity.GIT_ROOT],
        memories=memories,
        size_bytes=sum(p.stat().st_size for p in files),
        last_used=datetime.fromtimestamp(last, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )
