"""Where brains live.

``CEREBRO_HOME`` (default ``~/.cerebro``) holds ``projects/<sha256(realpath(dir))>.sqlite`` per project (the
linked worktrees of a git repository share the main worktree's: :func:`brain_owner`),
``global.sqlite`` and ``backups/``. Memories may hold secrets, so every folder we create is 0700 and
every brain file 0600 (ADR 0004).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hashlib import sha256
else:  # the builtin hashlib wraps: importing hashlib loads OpenSSL (~3 ms of every command) for a digest or two
    try:
        from _sha256 import sha256  # Python 3.11
    except ImportError:  # 3.12 renamed it; a build without it has hashlib's
        try:
            from _sha2 import sha256
        except ImportError:
            from hashlib import sha256

ENV_HOME = "CEREBRO_HOME"
ENV_CLAUDE_PROJECT_DIR = "CLAUDE_PROJECT_DIR"
DIR_MODE = 0o700
FILE_MODE = 0o600


def home() -> Path:
    configured = os.environ.get(ENV_HOME)
    return Path(configured).expanduser() if configured else Path.home() / ".cerebro"


def projects_dir() -> Path:
    return home() / "projects"


def backups_dir() -> Path:
    return home() / "backups"


def logs_dir() -> Path:
    """Cerebro's own logs (the session-end worker's, gc evictions): private, never in a project's folder."""
    return home() / "logs"


def aftercare_dir() -> Path:
    """End-of-session work: its jobs (``pending/``, ``done/``) and its worker's lock (``integration.claude_code.
    aftercare``); here so that the session-start hook can see there is nothing pending without importing that module."""
    return home() / "aftercare"


def aftercare_pending_dir() -> Path:
    """The end-of-session jobs not yet done (not created here: reading it must create nothing)."""
    return aftercare_dir() / "pending"


def gc_log_path(project: Path) -> Path:
    """Evictions of a project's session-end gc: under CEREBRO_HOME (0600), never in the user's repository (a
    committed file there could inject text into the prime). Ids, types and scores only: no memory text."""
    return logs_dir() / f"{project_hash(project)}.gc.log"


def global_brain_path() -> Path:
    return home() / "global.sqlite"


def resolve_project_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """``--project`` > ``$CLAUDE_PROJECT_DIR`` > the current directory (upstream ADR-008)."""
    if explicit:
        return Path(explicit)
    env = os.environ.get(ENV_CLAUDE_PROJECT_DIR)
    if env:
        return Path(env)
    return Path.cwd()


def canonical_project_path(project_dir: str | os.PathLike[str]) -> str:
    """The absolute, symlink-resolved path whose hash names the brain; the absolute path if it cannot resolve."""
    absolute = os.path.abspath(os.fspath(project_dir))
    try:
        return os.path.realpath(absolute, strict=True)
    except OSError:
        return absolute


def project_hash(project_dir: str | os.PathLike[str]) -> str:
    return sha256(canonical_project_path(project_dir).encode("utf-8")).hexdigest()


def own_brain_path(project_dir: str | os.PathLike[str]) -> Path:
    """The brain named by this folder's own path (``init --own-brain`` creates it in a linked worktree)."""
    return projects_dir() / f"{project_hash(project_dir)}.sqlite"


def project_brain_path(project_dir: str | os.PathLike[str]) -> Path:
    """The brain serving ``project_dir``: the one of :func:`brain_owner`."""
    return own_brain_path(brain_owner(project_dir))


def brain_owner(project_dir: str | os.PathLike[str]) -> Path:
    """The folder whose brain serves ``project_dir``: the folder itself, unless it is a linked git worktree with
    no brain of its own — then the repository's main worktree, whose brain all its worktrees share (ADR 0025)."""
    if not own_brain_path(project_dir).exists():
        main = main_worktree(project_dir)
        if main is not None:
            return main
    return Path(canonical_project_path(project_dir))


def main_worktree(project_dir: str | os.PathLike[str]) -> Path | None:
    """The main worktree of the repository ``project_dir`` is a linked worktree of, or None (a plain folder, a
    main checkout, a submodule, a worktree of a bare repository). Read from the files git writes — ``.git`` is
    a file naming the worktree's git folder, whose ``commondir`` names the repository's — so no git process
    runs on the hooks' path."""
    dot_git = Path(project_dir) / ".git"
    try:
        if not dot_git.is_file():
            return None
        pointer = dot_git.read_text(encoding="utf-8").strip()
        if not pointer.startswith("gitdir:"):
            return None
        git_dir = Path(project_dir) / pointer.removeprefix("gitdir:").strip()  # absolute, or relative to the folder
        common = Path(os.path.realpath(git_dir / (git_dir / "commondir").read_text(encoding="utf-8").strip()))
    except (OSError, UnicodeDecodeError):
        return None  # no commondir: a submodule's git folder, not a worktree's
    if common.name != ".git" or not common.is_dir():
        return None  # a bare repository has no main worktree
    return common.parent


def append_private(path: Path, text: str) -> None:
    """Append to a log that is the user's alone: created 0600 whatever the umask, never through a symlink."""
    ensure_private_dir(path.parent)
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW, FILE_MODE)
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
        handle.write(text)


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` and any missing parents with mode 0700.

    Folders that already exist are left as they are — a user may point ``CEREBRO_HOME`` at a folder
    they share — except cerebro's own sub-folders of the home (``projects/``, ``backups/``…), which
    are tightened to 0700.
    """
    missing = []
    probe = path
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, DIR_MODE)
        except FileExistsError:  # another process made it meanwhile
            pass
        if not folder.is_symlink():  # never chmod through a link (issue 17)
            os.chmod(folder, DIR_MODE)  # mkdir's mode is filtered by the umask
    base = home()
    if path != base and base in path.parents and not path.is_symlink() and (path.stat().st_mode & 0o777) != DIR_MODE:
        try:
            os.chmod(path, DIR_MODE)
        except PermissionError:
            pass
    return path


def create_private_file(path: Path) -> None:
    """Create an empty 0600 file if absent, so SQLite (which copies the db's mode to -wal/-shm) inherits it."""
    ensure_private_dir(path.parent)
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_NOFOLLOW, FILE_MODE)  # never create through a link
    try:
        os.fchmod(fd, FILE_MODE)  # the file itself, whatever the umask
    finally:
        os.close(fd)


def tighten_private_file(path: Path) -> None:
    """Databases made elsewhere (copied in, adopted from Go, restored by hand) may be world-readable; memories
    and transcripts may hold secrets, so a file we own and its WAL files are made 0600, and cerebro's folder
    0700. Best effort: a file we cannot chmod is still read."""
    for suffix in ("", "-wal", "-shm"):
        candidate = Path(str(path) + suffix)
        try:
            info = candidate.lstat()
        except OSError:
            continue
        if stat.S_ISLNK(info.st_mode):
            continue  # never chmod through a link: its target is not ours to change (issue 17)
        if info.st_mode & 0o077 and info.st_uid == os.getuid():
            try:
                os.chmod(candidate, FILE_MODE)
            except OSError:
                pass
    if home() in path.parents:
        try:
            ensure_private_dir(path.parent)
        except OSError:
            pass


@contextmanager
def written_in_one_step(target: Path, *, overwrite: bool = False, mode: int = FILE_MODE) -> Iterator[Path]:
    """A temporary file beside ``target`` to write into; when the block succeeds it gets ``mode`` (private, 0600,
    unless told) and becomes ``target`` in one rename, so a reader — or a process killed half way — never sees a
    partial file, and a symlink at ``target`` is replaced rather than followed. Without ``overwrite`` an existing
    ``target`` is refused (checked again at the rename: a file that appeared meanwhile is never overwritten). On
    failure the temporary file is removed and ``target`` is as it was."""
    import tempfile

    from cerebro.errors import TargetExists

    target = Path(target)
    refusal = f"{target} already exists: choose another path (nothing was overwritten)"
    if not overwrite and os.path.lexists(target):
        raise TargetExists(refusal)
    if not target.parent.exists():
        ensure_private_dir(target.parent)
    # A fresh name each time (0600 until the end): a partial file a killed run left never blocks the next one.
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".partial")
    os.close(fd)
    partial = Path(name)
    try:
        yield partial
        os.chmod(partial, mode)
        if overwrite:
            os.replace(partial, target)
        else:
            try:
                os.link(partial, target)  # fails if target appeared meanwhile
            except FileExistsError:
                raise TargetExists(refusal) from None
            os.unlink(partial)
    finally:
        partial.unlink(missing_ok=True)


def claude_projects_dir() -> Path:
    """Where Claude Code keeps transcripts: ``$CLAUDE_CONFIG_DIR/projects`` when Claude Code's configuration was
    moved, else ``~/.claude/projects`` (``HOME`` is respected: ``Path.home`` reads it)."""
    moved = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(moved).expanduser() if moved else Path.home() / ".claude") / "projects"
