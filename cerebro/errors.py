"""The error tree. Every error carries the exit code the CLI returns and a message that names the fix.

The CLI maps these to a one-line message on stderr in one place (``cerebro.cli.app``); library callers
catch :class:`CerebroError` or a subclass.
"""

from __future__ import annotations


class CerebroError(Exception):
    """Base class. ``exit_code`` is what the CLI exits with."""

    exit_code = 1


class InvalidInput(CerebroError):
    """A value the user gave is malformed or out of range (bad flag value, bad JSON, unknown type…)."""

    exit_code = 2


class TargetExists(InvalidInput):
    """The file a command would write exists already (and is not to be overwritten)."""


class NotFound(CerebroError):
    """An id, prefix, key or relation that does not exist."""

    exit_code = 3


class AmbiguousId(InvalidInput):
    """A short id prefix that matches more than one memory."""


class BrainNotFound(CerebroError):
    """No brain file where one was expected; the message says how to create one."""

    exit_code = 4


class SchemaTooNew(CerebroError):
    """The brain was written by a newer cerebro (or a newer upstream) than this one."""

    exit_code = 5


class DriverUnavailable(CerebroError):
    """No SQLite driver on this machine can load sqlite-vec / has FTS5."""

    exit_code = 6


class BrainBusy(CerebroError):
    """The brain stayed locked by other writers after every retry."""

    exit_code = 7


class MigrationFailed(CerebroError):
    """An upgrade could not complete; the brain was left as it was (a backup was taken first)."""

    exit_code = 8


class BrainUnreadable(CerebroError):
    """The file is not an SQLite database (corrupt, truncated, or something else entirely)."""

    exit_code = 9


class EmbeddingError(CerebroError):
    """The embedding provider could not embed (down, refused, malformed answer)."""

    exit_code = 10


class IntegrationFailed(CerebroError):
    """The brain is fine but a Claude Code file could not be written or removed (the warnings say which)."""

    exit_code = 11


class ChecksFailed(CerebroError):
    """``cerebro doctor`` found at least one failing check (each one is reported with its fix)."""

    exit_code = 12


class ModelUnavailable(CerebroError):
    """The local model's files are missing or do not match their recorded digest."""

    exit_code = 13


class MigrationLocked(CerebroError):
    """Another ``cerebro migrate --realpath-hashes`` is running."""

    exit_code = 14


class RerankError(CerebroError):
    """The reranker command failed; recall reports it as a notice and keeps the composite order."""

    exit_code = 15


QUOTED_CHARACTERS = 200  # of a value named in a message: a 200,000-character query is not echoed back whole


def quote(value: object) -> str:
    """Quote user text in messages as Go's %q does (double quotes, escapes), so messages stay one line — its first
    QUOTED_CHARACTERS characters, then "…"."""
    import json

    return json.dumps(shortened(str(value), QUOTED_CHARACTERS), ensure_ascii=False)


def shortened(text: str, limit: int) -> str:
    """``text``, cut to ``limit`` characters with "…" when it is longer."""
    return text if len(text) <= limit else text[:limit] + "…"


def from_sqlite(exc: BaseException) -> CerebroError | None:
    """What SQLite's refusal of a brain file is to its user (None: not one): a full disk, a read-only file or folder,
    a file it cannot open. Each was "internal error: OperationalError: database or disk is full" (with SQLAlchemy's
    statement and background link from the ORM paths); the transaction was rolled back, the brain is as it was."""
    orig = getattr(exc, "orig", None) or exc
    if type(orig).__module__.split(".")[0] not in ("sqlean", "sqlite3"):
        return None
    message = str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__
    if "disk is full" in message or "disk I/O error" in message:
        return BrainUnreadable(f"the brain could not be written: {message} (nothing was written; free some space)")
    if "readonly database" in message or "unable to open database file" in message:
        return BrainUnreadable(
            f"the brain could not be written: {message} (nothing was written; check the brain file's and its "
            "folder's permissions, and its -wal and -shm files')"
        )
    return None


def from_team_database(exc: BaseException) -> CerebroError | None:
    """What a PostgreSQL failure in the middle of a command is to its user (None: not one): a statement the server
    canceled (its time limit, an administrator) or a lock it could not get is a busy brain; a server gone or refusing
    is an unreadable one. Each was "internal error: QueryCanceled …" with SQLAlchemy's background link; the write's
    transaction was rolled back either way. Told apart by the driver's module and SQLSTATE, without importing it."""
    orig = getattr(exc, "orig", None) or exc
    if not type(orig).__module__.startswith("psycopg"):
        return None
    first = " ".join(str(orig).strip().splitlines()[:1]) or type(orig).__name__
    if getattr(orig, "sqlstate", None) == "54000":  # a text with more distinct words than a tsvector holds (1 MB)
        return InvalidInput(f"the team brain cannot index this text ({first}): split it into smaller memories")
    if getattr(orig, "sqlstate", None) in ("57014", "55P03", "40001", "40P01"):
        return BrainBusy(f"the team database stopped the statement ({first}); nothing was written: try again")
    return BrainUnreadable(f"the team database failed ({first}); nothing was written")


def from_database(exc: BaseException) -> CerebroError | None:
    """What a database's refusal in the middle of a command is to its user — the team database's server
    (:func:`from_team_database`) or SQLite's disk (:func:`from_sqlite`) — or None: a bug. The CLI and the MCP server
    both ask this."""
    return from_team_database(exc) or from_sqlite(exc)


def exit_name(code: int) -> str:
    """The name of an exit code, for machines (``--format json`` errors): the snake_case name of the error class
    that owns it (each code has exactly one), ``error`` for 1, ``interrupted`` for 130."""
    import re

    if code == 130:
        return "interrupted"
    owners = [cls for cls in _all_errors() if cls.__dict__.get("exit_code") == code]
    if code == 1 or not owners:
        return "error"
    return re.sub(r"(?<!^)(?=[A-Z])", "_", owners[0].__name__).lower()


def _all_errors() -> list[type[CerebroError]]:
    found, stack = [], [CerebroError]
    while stack:
        cls = stack.pop()
        found.append(cls)
        stack.extend(cls.__subclasses__())
    return found
