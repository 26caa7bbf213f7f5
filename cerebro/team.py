"""Which projects keep their brain in a team database, and as which project there (ADR 0030).

A project folder is bound to a team brain by ``cerebro init --store URL``: a small file beside where its brain file
would be (``CEREBRO_HOME/projects/<hash>.store.json``) names the database and the project key. From then on every
command, hook and server run for that folder opens the team brain instead of a file. ``CEREBRO_STORE_URL`` (with
``CEREBRO_TEAM_PROJECT``) binds every project of a process at once — CI agents, containers.

Credentials are never written: a password in the URL is dropped from the binding (libpq takes it from
``PGPASSWORD`` or ``~/.pgpass``, or the URL given in the environment).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import NamedTuple
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from cerebro import paths

ENV_STORE_URL = "CEREBRO_STORE_URL"
ENV_TEAM_PROJECT = "CEREBRO_TEAM_PROJECT"

# The schemes a store URL may have. SQLAlchemy's spelling is the documented one; the plain ones are libpq's.
SCHEMES = ("postgresql+psycopg", "postgresql", "postgres")
# A project key names a brain inside the team database: printable, short, no control characters.
_PROJECT_KEY = r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$"  # compiled on first use (re caches it): not at import


def is_store_url(text: str | object) -> bool:
    """Whether ``text`` names a team database rather than a brain file."""
    return isinstance(text, str) and any(text.startswith(scheme + "://") for scheme in SCHEMES)


def check_project_key(key: str) -> str:
    if not isinstance(key, str) or not re.fullmatch(_PROJECT_KEY, key):
        from cerebro.errors import InvalidInput

        raise InvalidInput(
            f"bad team project key {key!r}: 1–200 characters of letters, digits and . _ : / @ + -, "
            "starting with a letter or digit"
        )
    return key


class Binding(NamedTuple):  # a NamedTuple, not a dataclass: ~1 ms less at import on the hooks' path (ADR 0053)
    url: str
    project: str


def _project_file(project_dir: str | os.PathLike[str], suffix: str) -> Path:
    brain = paths.project_brain_path(project_dir)
    return brain.with_name(brain.stem + suffix)


def binding_file(project_dir: str | os.PathLike[str]) -> Path:
    """Where ``init --store`` records that the folder's brain is a team brain."""
    return _project_file(project_dir, ".store.json")


def remote_file(project_dir: str | os.PathLike[str]) -> Path:
    """Where ``team connect`` records the team brain the folder's brain file shares with."""
    return _project_file(project_dir, ".team.json")


def default_project_key(project_dir: str | os.PathLike[str]) -> str:
    """The folder's name, made a valid key: teammates' checkouts of one repository share a name more often than
    a path. ``--team-project`` names it outright."""
    name = re.sub(r"[^A-Za-z0-9._:/@+-]+", "-", paths.brain_owner(project_dir).name).strip("-._:/@+")
    return name[:200] or "project"


def _read(found: Path, fix: str) -> Binding | None:
    if not found.is_file():
        return None
    import json  # here: a folder bound to a team brain is the rare case (the hooks' path imports this module)

    try:
        data = json.loads(found.read_text(encoding="utf-8"))
        return Binding(str(data["url"]), str(data["project"]))
    except (OSError, ValueError, KeyError, TypeError):
        from cerebro.errors import BrainUnreadable

        raise BrainUnreadable(f"{found} does not say which team brain this project uses; run '{fix}'") from None


def _write(target: Path, url: str, project: str) -> Path:
    import json

    paths.ensure_private_dir(target.parent)
    record = json.dumps({"url": without_password(url), "project": project}, indent=1) + "\n"
    with paths.written_in_one_step(target, overwrite=True) as partial:
        partial.write_text(record, encoding="utf-8")
    return target


def binding(project_dir: str | os.PathLike[str]) -> Binding | None:
    """The team brain this folder's commands use, or None (its brain is a file)."""
    url = os.environ.get(ENV_STORE_URL)
    if url:
        return Binding(url, os.environ.get(ENV_TEAM_PROJECT) or default_project_key(project_dir))
    return _read(binding_file(project_dir), "cerebro init --store URL")


def remote(project_dir: str | os.PathLike[str]) -> Binding | None:
    """The team brain this folder's brain file pushes to and pulls from (``cerebro team connect``), or None."""
    return _read(remote_file(project_dir), "cerebro team connect URL")


# libpq's URL parameters that hold a secret (``…?password=…``): never written, masked in messages.
SECRET_PARAMETERS = ("password", "sslpassword")


def without_password(url: str) -> str:
    """``url`` without its password: neither the one after the user name nor one given as a parameter."""
    parts = urlsplit(url)
    if parts.password is not None:
        host = parts.netloc.rsplit("@", 1)[-1]
        parts = parts._replace(netloc=f"{parts.username}@{host}" if parts.username else host)
    query = [(key, value) for key, value in parse_qsl(parts.query, keep_blank_values=True)]
    kept = [(key, value) for key, value in query if key.lower() not in SECRET_PARAMETERS]
    if len(kept) != len(query):
        parts = parts._replace(query=urlencode(kept))
    return urlunsplit(parts)


def bind(project_dir: str | os.PathLike[str], url: str, project: str) -> Path:
    """Record that this folder's brain is ``project`` in the team database at ``url`` (password dropped)."""
    return _write(binding_file(project_dir), url, project)


def connect(project_dir: str | os.PathLike[str], url: str, project: str) -> Path:
    """Record that this folder's brain file shares with ``project`` in the team database at ``url`` (no password)."""
    return _write(remote_file(project_dir), url, project)
