"""Alembic environment for cerebro brains: ``alembic -x brain=PATH upgrade head`` from a checkout, or
cerebro's own upgrade on open (``cerebro.db.migrate``). The runner is ``cerebro.db.alembic_runner``.

The revisions run with foreign keys off (a table rebuild must never cascade-delete edges), in one
``BEGIN IMMEDIATE`` transaction, and finish with ``PRAGMA foreign_key_check``.
"""

from __future__ import annotations

from typing import Any

from alembic import context
from cerebro.db import alembic_runner
from cerebro.db import migrate as cerebro_migrate
from cerebro.db import revisions as cerebro_revisions
from cerebro.models import SQLModel


def include_object(obj: Any, name: str, type_: str, reflected: bool, compare_to: Any) -> bool:  # noqa: ANN401 - Alembic's hook signature
    # The FTS5 and vec0 lanes are raw DDL (and SQLite makes shadow tables for them): not entities.
    return not (type_ == "table" and cerebro_revisions.is_virtual_lane_table(name))


alembic_runner.run(
    context,
    x_key="brain",
    usage="alembic -x brain=/path/to/brain.sqlite upgrade head",
    adopt=cerebro_migrate.adopt_for_alembic_cli,
    around=cerebro_migrate.foreign_keys_off,
    after=cerebro_migrate.check_foreign_keys,
    target_metadata=SQLModel.metadata,
    include_object=include_object,
    compare_type=cerebro_migrate.compare_type,
)
