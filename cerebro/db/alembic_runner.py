"""The one Alembic ``env.py`` runner, shared by the brain's chain (``alembic/env.py``) and the metrics
database's (``cerebro/metrics/migrations/env.py``).

Two ways in:
- from cerebro (``cerebro.db.migrate``, ``cerebro.metrics.schema``): the caller passes its own connection in
  ``config.attributes["connection"]`` — already set up (sqlite-vec loaded) — and logging is left alone;
- from a checkout: ``alembic [-n metrics] -x <key>=PATH upgrade head`` opens PATH with cerebro's engine (created
  private when missing), adopts a database an upstream version wrote, and configures logging from the ini file.

A team database on PostgreSQL comes in either way too (``-x brain=postgresql+psycopg://…``, ADR 0030): nothing to
adopt, and the SQLite steps around the transaction (``around``, ``after``) are skipped.

Either way the whole chain runs in one transaction (SQLite DDL is transactional; Alembic assumes otherwise for
SQLite by default), so a failed upgrade leaves the file exactly as it was. Offline (``--sql``) mode is refused:
the revisions inspect the database they upgrade.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import ModuleType

    from alembic.runtime.environment import EnvironmentContext
    from sqlalchemy.engine import Connection as SAConnection

    # What env.py passes: ``alembic.context``, a module that proxies the running EnvironmentContext.
    AlembicContext = EnvironmentContext | ModuleType


def run(
    context: AlembicContext,
    *,
    x_key: str,
    usage: str,
    adopt: Callable[[SAConnection, str], None],
    around: Callable[[SAConnection], AbstractContextManager[None]] | None = None,
    after: Callable[[SAConnection], None] | None = None,
    **configure: object,
) -> None:
    """Run the chain's revisions online. ``adopt(connection, path)`` prepares a file opened from the command
    line; ``around(connection)`` wraps the transaction (the brain's turns foreign keys off); ``after(connection)``
    runs last inside it (the brain's foreign-key check); ``configure`` goes to ``context.configure``."""
    from logging.config import fileConfig

    config = context.config
    if context.is_offline_mode():
        raise SystemExit(f"these migrations run online only: {usage}")
    connection = config.attributes.get("connection")
    if connection is not None:
        if connection.dialect.name != "sqlite":
            around = after = None
        _run(context, connection, around, after, configure)
        return
    if config.config_file_name is not None:
        fileConfig(config.config_file_name, disable_existing_loggers=False)
    path = context.get_x_argument(as_dictionary=True).get(x_key)
    if not path:
        raise SystemExit(f"usage: {usage}")
    from cerebro.db import postgres

    if postgres.is_store_url(path):
        engine = postgres.create_engine(path, None)
        try:
            with engine.connect() as conn:
                _run(context, conn, None, None, configure)
        finally:
            engine.dispose()
        return
    from cerebro.db.engine import WRITE_OPTION
    from cerebro.db.migrate import engine_for_alembic_cli

    engine = engine_for_alembic_cli(path)
    try:
        with engine.connect() as conn:
            adopt(conn, path)
            _run(context, conn.execution_options(**{WRITE_OPTION: True}), around, after, configure)
    finally:
        engine.dispose()


def _run(
    context: AlembicContext,
    connection: SAConnection,
    around: Callable[[SAConnection], AbstractContextManager[None]] | None,
    after: Callable[[SAConnection], None] | None,
    configure: dict[str, object],
) -> None:
    context.configure(
        connection=connection,
        transactional_ddl=True,
        transaction_per_migration=False,
        **configure,  # type: ignore[arg-type]
    )
    with around(connection) if around is not None else contextlib.nullcontext(), context.begin_transaction():
        context.run_migrations()
        if after is not None:
            after(connection)
