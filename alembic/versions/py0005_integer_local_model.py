"""cerebro-py 0005: a brain may hold vectors of the local provider's integer model

No table or index changes. ADR 0041 gave new brains a second local model, ``all-MiniLM-L6-v2-onnx-int8-dq7`` (the
same file's weights on integer kernels). A cerebro from before knows one local model and would embed a brain of the
new one in float32, adding vectors of another model among its own — the one mistake ADR 0011 rules out. This
revision is the mark such a cerebro already reads: a brain at a revision it does not know is refused as "written by
a newer cerebro" (``cerebro.db.migrate``), before anything is embedded. Brains on the float32 model are marked too
(every upgrade moves a brain to the head revision, as py0001–py0004 did) — without the backup a changing revision
takes (``MARKER``: one transaction that writes the revision alone). Going back (``alembic -c alembic.ini -x
brain=PATH downgrade py0004``, from a checkout) is refused while the brain holds the integer model's vectors: move
it to the float32 model first (``cerebro reembed --model all-MiniLM-L6-v2-onnx-int8``). On a team database the check
sees only the project the connection is scoped to (row-level security); an unscoped administrator's downgrade is
let through.

Revision ID: py0005
Revises: py0004
"""

import sqlalchemy as sa

from alembic import op
from cerebro.db.revisions import on_postgresql

revision = "py0005"
down_revision = "py0004"
branch_labels = None
depends_on = None

MARKER = True  # no table or row changes: cerebro.db.migrate takes no backup for it
INTEGER_MODEL = "all-MiniLM-L6-v2-onnx-int8-dq7"


def upgrade() -> None:
    pass  # the revision itself is the change: see the docstring


def downgrade() -> None:
    # Below py0005 a cerebro would embed this brain in float32 and file the vectors under the integer model's name.
    bind = op.get_bind()
    if on_postgresql(bind) and bind.execute(sa.text("SELECT current_setting('cerebro.project', true)")).scalar() in (
        None,
        "",
    ):
        # A team database's rows are visible only to a project-scoped connection (row-level security): an
        # administrator's unscoped downgrade cannot look, and is let through (ADR 0041 says so).
        return
    found = bind.execute(
        sa.text(
            "SELECT 1 FROM schema_meta WHERE key = 'embedding_model' AND value = :model "
            "UNION ALL SELECT 1 FROM nodes WHERE embedding_model = :model LIMIT 1"
        ),
        {"model": INTEGER_MODEL},
    ).first()
    if found is not None:
        raise RuntimeError(
            f"this brain holds vectors of {INTEGER_MODEL}, which a cerebro before py0005 would mix with float32 "
            "ones: run `cerebro reembed --model all-MiniLM-L6-v2-onnx-int8` first"
        )
