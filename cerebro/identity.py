"""Which project a brain belongs to, recorded in the brain itself (``schema_meta``) when it is initialised.

Brains are files named by a hash of the project's path, which says nothing once the project moves. So ``init``
records the project's real path and, for a git project, the repository's common git folder (shared by its
worktrees) and its root commit (shared by its clones): ``cerebro brains`` can then say which project each brain
serves, flag a project folder that no longer exists, and recognise the same repository elsewhere.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

PATH = "project_path"
GIT_DIR = "project_git_dir"
GIT_ROOT = "project_git_root"
KEYS = (PATH, GIT_DIR, GIT_ROOT)
GIT_TIMEOUT_SECONDS = 5.0


def describe(directory: str | os.PathLike[str]) -> dict[str, str]:
    """The identity to record for a project folder: its real path, and for a git project its common git folder
    and root commit (the oldest, when a history has several)."""
    real = os.path.realpath(directory)
    found = {PATH: real}
    git_dir = _git(real, "rev-parse", "--path-format=absolute", "--git-common-dir")
    if git_dir:
        found[GIT_DIR] = os.path.realpath(git_dir)
        roots = _git(real, "rev-list", "--max-parents=0", "HEAD")
        if roots:
            found[GIT_ROOT] = sorted(roots.split())[0]
    return found


def _git(directory: str, *args: str) -> str | None:
    """git's answer, or None when this is not a repository, git is missing, or it takes too long."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
    try:
        done = subprocess.run(  # noqa: S603 - a fixed program with an argument list, no shell
            ["git", "-C", directory, *args],  # noqa: S607 - git from PATH, as the user runs it
            capture_output=True,
            stdin=subprocess.DEVNULL,
            text=True,
            timeout=GIT_TIMEOUT_SECONDS,
            env=env,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def folder_exists(path: str | None) -> bool:
    return path is not None and Path(path).is_dir()
