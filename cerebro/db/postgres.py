"""Connections to a team brain on PostgreSQL (ADR 0030): store URLs, the project scope, the schema's upgrade.

One database holds many projects' brains. Every table has a ``project`` column, and row-level security scopes
every statement — ORM or raw, read or write — to the project named by the connection's ``cerebro.project``
setting: a row of another project is neither visible nor writable, whatever a query forgets to say. The column's
default is that setting, so an insert never names it either. A connection that has not set it fails closed (the
policy reads the setting without a fallback: an error, not an empty scope).

Row-level security does not bind superusers or roles with ``BYPASSRLS``; a team connects as an ordinary role
(README, "Team brain"), and :func:`connect` refuses one that would bypass the scope.

The store's SQL is written once, for SQLite (``cerebro/store/``). On PostgreSQL, :func:`pg_sql` turns its few
SQLite spellings into PostgreSQL's — a short, enumerated list, each rule tested — and :class:`RawConnection` gives
psycopg the ``sqlite3`` API the store's raw paths use, so each part of the store has one implementation; the
parts whose engines truly differ (the keyword and vector lanes, checks, compaction) have PostgreSQL modules of
their own (``cerebro/store/postgres/``).

psycopg (``pip install "cerebro-memory[team]"``) is imported only here and only when a store URL is used.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from cerebro.errors import InvalidInput
from cerebro.team import check_project_key, is_store_url

if TYPE_CHECKING:
    from cerebro.db.types import Connection, Engine

# Longest a statement may run before the server cancels it (a stuck query must not hold a writer's locks).
STATEMENT_TIMEOUT_MS = 30_000


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
    from urllib.parse import parse_qsl, urlencode

    from cerebro.team import SECRET_PARAMETERS

    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable store URL>"
    if parts.password is not None:
        netloc = parts.netloc.rsplit("@", 1)
        userinfo = (parts.username or "") + ":***"
        parts = parts._replace(netloc=f"{userinfo}@{netloc[-1]}")
    query = parse_qsl(parts.query, keep_blank_values=True)
    if any(key.lower() in SECRET_PARAMETERS for key, _ in query):
        masked = [(key, "***" if key.lower() in SECRET_PARAMETERS else value) for key, value in query]
        parts = parts._replace(query=urlencode(masked, safe="*"))
    return urlunsplit(parts)


def scrubbed(text: str, url: str) -> str:
    """``text`` (a driver's message, which may echo the URL whole: libpq's "invalid URI") with every password ``url``
    holds masked — after the user name or as a parameter, as given and decoded — even when the URL does not parse."""
    from urllib.parse import unquote

    found = re.findall(r"://[^:/@?#]*:([^@/?#]*)@", url) + re.findall(r"(?i)[?&](?:ssl)?password=([^&#]*)", url)
    for secret in sorted({form for value in found if value for form in (value, unquote(value))}, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def _check(url: str) -> None:
    if not is_store_url(url):
        raise InvalidInput(f"not a PostgreSQL store URL: {redact(url)!r} (expected postgresql+psycopg://…)")


def _driver() -> Any:  # noqa: ANN401 - the psycopg module, typed only where it is installed
    try:
        import psycopg
    except ImportError:
        raise InvalidInput('a team brain on PostgreSQL needs psycopg: pip install "cerebro-memory[team]"') from None
    return psycopg


def DriverError() -> type[Exception]:  # noqa: N802 - names an exception class, as psycopg's own
    """psycopg's base error class (what a failed connection or statement raises)."""
    error: type[Exception] = _driver().Error
    return error


def _options() -> str:
    # plan_cache_mode: the server plans a foreign-key check once per connection and keeps that plan. Planned while
    # a project was small (a new team brain's first import, push or add_many: one transaction), it read the
    # project's memories through an index on (project, …) for every new vector and edge — writes slowing with the
    # brain's size (1,177 → 517 vectors/s over 6,000, on for ever in that connection). Planned with its values each
    # time, the check finds the memory by its key once the project has grown (~1,400/s, flat); a plan costs µs.
    return (
        f"-c statement_timeout={STATEMENT_TIMEOUT_MS} -c application_name=cerebro -c plan_cache_mode=force_custom_plan"
    )


# SQLite spellings the store's SQL uses, and PostgreSQL's. Quoted text and ``::`` casts are matched first so that
# nothing inside them is touched.
_TOKENS = re.compile(
    r"""'(?:[^']|'')*'|"(?:[^"]|"")*"|::"""  # quoted text and identifiers, casts: kept
    # a planner hint (+column): PostgreSQL plans for itself
    r"|(?P<hint>(?<=[\s(])\+(?=(?:status|relation|type|updated_at)\b))"
    r"|(?P<char>\bchar\()"  # SQLite's char(n) is PostgreSQL's chr(n)
    r"|(?P<instr>\binstr\()"  # instr(text, part) is strpos(text, part)
    # byte order: SQLite's BINARY is PostgreSQL's "C" (a database's own collation may be en_US, where ranges differ)
    r"|(?P<collate>\bCOLLATE\s+(?:BINARY\b|\"BINARY\"))"
    # SQLite's datetime(t) reads a time Go cerebro may have stored as RFC 3339 with an offset; a team brain holds
    # only what cerebro wrote, the storage layout, so there it is the text itself
    r"|(?P<datetime>\bdatetime\()"
    r"|(?P<is>\bIS\s+(?=[?:%]))"  # "x IS <parameter>" (equal, NULLs included) is IS NOT DISTINCT FROM
    r"|(?P<conflict>\bON\s+CONFLICT\s*\()"  # a conflict target: unique per project there
    r"|(?P<qmark>\?)|(?P<named>:[A-Za-z_][A-Za-z0-9_]*)|(?P<percent>%)",  # placeholders, and % itself
    re.IGNORECASE,
)


@functools.lru_cache(maxsize=1024)
def pg_sql(sql: str, *, placeholders: bool) -> str:
    """``sql`` as PostgreSQL reads it. ``placeholders``: also turn sqlite3's ``?`` and ``:name`` parameters into
    psycopg's (the raw connection's statements; SQLAlchemy's ``text()`` does its own)."""

    def replace(match: re.Match[str]) -> str:
        kind = match.lastgroup
        if kind == "hint":
            return ""
        if kind == "char":
            return "chr("
        if kind == "instr":
            return "strpos("
        if kind == "datetime":
            return "("
        if kind == "collate":
            return 'COLLATE "C"'
        if kind == "is":
            return "IS NOT DISTINCT FROM "
        if kind == "conflict":
            return "ON CONFLICT (project, "
        if placeholders and kind == "qmark":
            return "%s"
        if placeholders and kind == "named":
            return f"%({match.group()[1:]})s"
        if placeholders and (kind == "percent" or (kind is None and match.group()[0] in "'\"")):
            return match.group().replace("%", "%%")  # psycopg reads % everywhere, quoted text included
        return match.group()

    return _TOKENS.sub(replace, sql)


class RawConnection:
    """A psycopg connection behind the ``sqlite3`` API of the store's raw paths: ``?`` and ``:name`` parameters,
    ``execute``/``executemany`` on the connection, explicit ``BEGIN``/``COMMIT`` (autocommit between them, as
    sqlite3's ``isolation_level=None``), ``in_transaction``. Rows are tuples; ``json`` columns come back as the
    text stored, as SQLite gives them."""

    dialect = "postgresql"

    def __init__(self, conn: Any, project: str | None = None) -> None:  # noqa: ANN401 - a psycopg connection
        self._conn = conn
        self.project = project  # the project the connection is scoped to (None: unscoped)

    def execute(self, sql: str, params: Any = None) -> Any:  # noqa: ANN401 - DB-API parameters and cursor
        if not params:
            return self._conn.execute(pg_sql(sql, placeholders=False))
        return self._conn.execute(pg_sql(sql, placeholders=True), params)

    def execute_binary(self, sql: str, params: Any = None) -> Any:  # noqa: ANN401 - DB-API parameters and cursor
        """``execute``, with the results in PostgreSQL's binary form: a pgvector ``vector`` arrives as its bytes
        (read with ``struct`` in microseconds, where its text form took ~100 µs a vector to parse)."""
        return self._conn.execute(pg_sql(sql, placeholders=True), params or None, binary=True)

    def executemany(self, sql: str, seq: Any) -> Any:  # noqa: ANN401 - DB-API parameters and cursor
        cursor = self._conn.cursor()
        cursor.executemany(pg_sql(sql, placeholders=True), list(seq))
        return cursor

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return bool(self._conn.info.transaction_status != TransactionStatus.IDLE)

    def commit(self) -> None:
        if self.in_transaction:
            self._conn.execute("COMMIT")

    def rollback(self) -> None:
        if self.in_transaction:
            self._conn.execute("ROLLBACK")

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> RawConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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


def connect(url: str, project: str) -> RawConnection:
    """The raw connection, scoped to ``project`` (the hot paths': recall, prime, new memories)."""
    check_project_key(project)
    psycopg = _driver()
    from psycopg.types.string import TextLoader

    conn = psycopg.connect(libpq_url(url), options=_options())
    try:
        scope(conn, project)
        conn.autocommit = True
        # No server-side prepared statements: psycopg prepares a statement run five times, and the server may then
        # reuse one generic plan for every parameter value — with the project's scope a function call and a new
        # project's statistics not yet gathered, such a plan scanned where the keyword lane's own plan reads the
        # index (12.7 ms against 5.1 ms a search at 1k memories). Planning each statement costs far less.
        conn.prepare_threshold = None
        conn.adapters.register_loader("json", TextLoader)
    except BaseException:
        conn.close()
        raise
    return RawConnection(conn, project)


# One writer at a time per project, as SQLite's BEGIN IMMEDIATE gives a brain file: at READ COMMITTED, two
# read-modify-writes (a reinforcement's counter, an outcome, a supersession's "is it still active?") interleaved and
# one was lost, or both succeeded (a review). Taken first in every write transaction, released at its end; a wait for
# it honours lock_timeout and the statement timeout like any lock.
WRITER_LOCK = "SELECT pg_advisory_xact_lock(hashtext('cerebro writer ' || current_setting('cerebro.project')))"


def create_engine(url: str, project: str | None) -> Engine:
    """A SQLAlchemy engine whose every connection is scoped to ``project`` (None: unscoped, for migrations)."""
    import sqlalchemy as sa

    _driver()
    if project is not None:
        check_project_key(project)
    from cerebro import metadata

    engine = sa.create_engine(
        sqlalchemy_url(url),
        connect_args={"options": _options()},
        hide_parameters=True,  # as a brain file's engine: a memory's text never goes into an error message
        pool_pre_ping=True,
        pool_size=2,
        max_overflow=4,
        # As a brain file's engine reads it (and the raw reads): metadata that is not a JSON object is flagged raw
        # text, never a list or a number where a dict is promised.
        json_deserializer=metadata.load,
    )
    if project is not None:

        @sa.event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn: Any, _record: object) -> None:  # noqa: ANN401 - a psycopg connection
            scope(dbapi_conn, project)

        @sa.event.listens_for(engine, "begin")
        def _on_begin(conn: Any) -> None:  # noqa: ANN401 - a SQLAlchemy connection
            from cerebro.db.engine import WRITE_OPTION

            if conn.get_execution_options().get(WRITE_OPTION, False):
                conn.exec_driver_sql(WRITER_LOCK)

    @sa.event.listens_for(engine, "before_cursor_execute", retval=True)
    def _to_postgresql(_conn: object, _cursor: object, statement: str, parameters: Any, *_: object) -> Any:  # noqa: ANN401 - SQLAlchemy's hook
        return pg_sql(statement, placeholders=False), parameters

    return engine


def revision(conn: Connection | RawConnection) -> str | None:
    """The Alembic revision the team database is at; None for a database without cerebro's schema."""
    row = conn.execute("SELECT to_regclass('alembic_version') IS NOT NULL").fetchone()
    if not row or not row[0]:
        return None
    found = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    return None if found is None else str(found[0])


def upgrade(url: str) -> None:
    """Bring the team database's schema to head (``alembic upgrade head`` on it), in one transaction. Many
    machines may open a new team database at once: an advisory lock lets one upgrade while the others wait,
    then find nothing left to do."""
    from alembic import command
    from cerebro.db.migrate import alembic_config
    from cerebro.errors import MigrationFailed

    engine = create_engine(url, None)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql("SELECT pg_advisory_xact_lock(hashtext('cerebro schema upgrade'))")
            command.upgrade(alembic_config(conn), "head")
    except MigrationFailed:
        raise
    except Exception as exc:
        if getattr(getattr(exc, "orig", None), "sqlstate", None) == "42501":  # insufficient_privilege
            raise MigrationFailed(
                "this role may not create cerebro's tables in the team database: ask an administrator to grant it "
                "CREATE on the schema (GRANT CREATE ON SCHEMA public TO <role>), or to run the first init as the owner"
            ) from None
        raise
    finally:
        engine.dispose()
