"""Alembic environment for cerebro brains.

Two ways in:
- from cerebro (``cerebro.db.migrate``): the caller passes its own connection in
  ``config.attributes["connection"]`` — sqlite-vec is already loaded — and we leave logging alone;
- from a checkout: ``alembic -x brain=PATH upgrade head`` opens PATH with cerebro's engine.

Either way the revisions run with foreign keys off (a table rebuild must never cascade-delete edges), in
one ``BEGIN IMMEDIATE`` transaction, and finish with ``PRAGMA foreign_key_check``.
"""

from __future__ import annotations

from logging.config import fileConfig

from alembic import context
from cerebro.db import migrate as cerebro_migrate
from cerebro.models import SQLModel

config = context.config
embedded = config.attributes.get("connection") is not None

if not embedded and config.config_file_name is not None:
    fileConfig(config.config_file_name, disable_existing_loggers=False)

target_metadata = SQLModel.metadata


def include_object(obj, name, type_, reflected, compare_to):  # noqa: ANN001
    # The FTS5 and vec0 lanes are raw DDL (and SQLite makes shadow tables for them): not entities.
    if type_ == "table" and cerebro_migrate.is_virtual_lane_table(name):
        return False
    return True


def _run(connection) -> None:  # noqa: ANN001
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        include_object=include_object,
        compare_type=cerebro_migrate.compare_type,
        # SQLite DDL is transactional: run the whole chain in one transaction, so a failed upgrade
        # leaves the brain exactly as it was (Alembic assumes otherwise for SQLite by default).
        transactional_ddl=True,
        transaction_per_migration=False,
    )
    with cerebro_migrate.foreign_keys_off(connection):
        with context.begin_transaction():
            context.run_migrations()
            cerebro_migrate.check_foreign_keys(connection)


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    brain = context.get_x_argument(as_dictionary=True).get("brain")
    if not brain:
        raise SystemExit("usage: alembic -x brain=/path/to/brain.sqlite upgrade head")
    engine = cerebro_migrate.engine_for_alembic_cli(brain)
    try:
        with engine.connect() as conn:
            cerebro_migrate.adopt_for_alembic_cli(conn, brain)
            _run(conn.execution_options(**{cerebro_migrate.WRITE_OPTION: True}))
    finally:
        engine.dispose()


if context.is_offline_mode():
    raise SystemExit("cerebro migrations run online only: alembic -x brain=PATH upgrade head")
run_migrations_online()
