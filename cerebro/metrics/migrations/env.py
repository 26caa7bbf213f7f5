"""Alembic environment for metrics databases (``<hash>.metrics.sqlite``), apart from the brain's chain:
``alembic -n metrics -x db=PATH upgrade head`` from a checkout (an upstream-written database is stamped at
``m0001`` first, a too-new one refused), or cerebro's own upgrade (``cerebro.metrics.schema``). The runner is
``cerebro.db.alembic_runner``.
"""

from __future__ import annotations

from alembic import context
from cerebro.db import alembic_runner
from cerebro.metrics import schema

alembic_runner.run(
    context,
    x_key="db",
    usage="alembic -n metrics -x db=/path/to/x.metrics.sqlite upgrade head",
    adopt=schema.adopt_for_alembic_cli,
    target_metadata=None,  # raw DDL, no ORM models: ingest runs at every session end
)
