"""Alembic environment for metrics databases (``<hash>.metrics.sqlite``), apart from the brain's chain.

Two ways in, as for brains:
- from cerebro (``cerebro.metrics.schema``): the caller passes its connection, already inside its
  ``BEGIN IMMEDIATE`` transaction, in ``config.attributes["connection"]``;
- from a checkout: ``alembic -n metrics -x db=PATH upgrade head`` opens PATH with cerebro's engine
  (an upstream-written database is stamped at ``m0001`` first, a too-new one refused).

The whole chain runs in one transaction, so a failed upgrade leaves the database as it was.
"""

from __future__ import annotations

from logging.config import fileConfig

from alembic import context

config = context.config
embedded = config.attributes.get("connection") is not None

if not embedded and config.config_file_name is not None:
    fileConfig(config.config_file_name, disable_existing_loggers=False)


def _run(connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=None,  # raw DDL, no ORM models: ingest runs at every session end
        transactional_ddl=True,
        transaction_per_migration=False,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    from cerebro.db.migrate import engine_for_alembic_cli
    from cerebro.metrics import schema

    db = context.get_x_argument(as_dictionary=True).get("db")
    if not db:
        raise SystemExit("usage: alembic -n metrics -x db=/path/to/x.metrics.sqlite upgrade head")
    engine = engine_for_alembic_cli(db)  # the brain's own: the same for both databases
    try:
        with engine.connect() as conn:
            schema.adopt_for_alembic_cli(conn, db)
            _run(conn.execution_options(**{schema.WRITE_OPTION: True}))
    finally:
        engine.dispose()


if context.is_offline_mode():
    raise SystemExit("metrics migrations run online only: alembic -n metrics -x db=PATH upgrade head")
run_migrations_online()
