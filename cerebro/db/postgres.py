"""Connections to a team brain on PostgreSQL (ADR 0030): store URLs, the project scope, the schema's upgrade.

One database holds many projects' brains. Every table has a ``project`` column, and row-level security scopes
every statement — ORM or raw, read or write — to the project named by the connection's ``cerebro.project``
setting: a row of another project is neither visible nor writable, whatever a query forgets to say. The column's
default is that setting, so an insert never names it either. A connection that has not set it fails closed (the
policy reads the setting without a fallback: an error, not an empty scope).

Row-level security does not bind superusers or roles with ``BYPASSRLS``; a team connects as an ordinary role
(README, "Team brain"), and :func:`connect` refuses one that would bypass the scope.

psycopg (``pip install "cerebro-memory[team]"``) is imported only here and only when a store URL is used.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from cerebro.errors import InvalidInput

if TYPE_CHECKING:
    from cerebro.db.types import Engine

# The schemes a store URL may have. SQLAlchemy's spelling is the documented one; the plain ones are libpq's.
SCHEMES = ("postgresql+psycopg", "postgresql", "postgres")
# Longest a statement may run before the server cancels it (a stuck query must not hold a writer's locks).
STATEMENT_TIMEOUT_MS = 30_000
# A project key names a brain inside the team database: printable, short, no control characters.
_PROJECT_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$")


def is_store_url(text: str | object) -> bool:
    """Whether ``text`` names a PostgreSQL store rather than a brain file."""
    return isinstance(text, str) and any(text.startswith(scheme + "://") for scheme in SCHEMES)


def libpq_url(url: str) -> str:
    """The URL as libpq (psycopg) reads it: SQLAlchemy's ``+psycopg`` driver suffix dropped."""
    _check(url)
    return "postgresql://" + url.split("://", 1)[1]


def sqlalchemy_url(url: str) -> str:
    """The URL as SQLAlchemy reads it, with the psycopg (3) driver."""
    _check(url)
    return "postgresql+psycopg://" + url.split("://", 1)[1]


def redact(url: str) -> str:
    """The URL with any password replaced: what messages and logs may show (credentials are never written)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable store URL>"
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    userinfo = (parts.username or "") + ":***"
    return urlunsplit(parts._replace(netloc=f"{userinfo}@{netloc[-1]}"))


def check_project_key(key: str) -> str:
    if not isinstance(key, str) or not _PROJECT_KEY.match(key):
        raise InvalidInput(
            f"bad team project key {key!r}: 1–200 characters of letters, digits and . _ : / @ + -, "
            "starting with a letter or digit"
        )
    return key


def _check(url: str) -> None:
    if not is_store_url(url):
        raise InvalidInput(f"not a PostgreSQL store URL: {redact(url)!r} (expected postgresql+psycopg://…)")


def _driver() -> Any:  # noqa: ANN401 - the psycopg module, typed only where it is installed
    try:
        import psycopg
    except ImportError:
        raise InvalidInput('a team brain on PostgreSQL needs psycopg: pip install "cerebro-memory[team]"') from None
    return psycopg


def _options() -> str:
    return f"-c statement_timeout={STATEMENT_TIMEOUT_MS} -c application_name=cerebro"


def scope(dbapi_conn: Any, project: str) -> None:  # noqa: ANN401 - a psycopg connection
    """Scope a fresh connection to ``project`` for its whole life, after checking its role cannot bypass the
    scope. Commits, so that the setting outlives the transaction it was made in."""
    row = dbapi_conn.execute("SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user").fetchone()
    if row is None or row[0]:
        dbapi_conn.rollback()
        raise InvalidInput(
            "this role bypasses row-level security (a superuser, or BYPASSRLS): connect to the team brain as an "
            "ordinary role, which keeps each project's memories to itself (README, 'Team brain')"
        )
    dbapi_conn.execute("SELECT set_config('cerebro.project', %s, false)", (project,))
    dbapi_conn.commit()


def connect(url: str, project: str) -> Any:  # noqa: ANN401 - a psycopg connection
    """A DB-API connection scoped to ``project`` (the hot paths' raw connection)."""
    check_project_key(project)
    conn = _driver().connect(libpq_url(url), options=_options())
    try:
        scope(conn, project)
    except BaseException:
        conn.close()
        raise
    return conn


def create_engine(url: str, project: str | None) -> Engine:
    """A SQLAlchemy engine whose every connection is scoped to ``project`` (None: unscoped, for migrations)."""
    import sqlalchemy as sa

    _driver()
    if project is not None:
        check_project_key(project)
    engine = sa.create_engine(
        sqlalchemy_url(url), connect_args={"options": _options()}, pool_pre_ping=True, pool_size=2, max_overflow=4
    )
    if project is not None:

        @sa.event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn: Any, _record: object) -> None:  # noqa: ANN401 - a psycopg connection
            scope(dbapi_conn, project)

    return engine


def upgrade(url: str) -> None:
    """Bring the team database's schema to head (``alembic upgrade head`` on it), in one transaction."""
    from alembic import command
    from cerebro.db.migrate import alembic_config

    engine = create_engine(url, None)
    try:
        with engine.begin() as conn:
            command.upgrade(alembic_config(conn), "head")
    finally:
        engine.dispose()
