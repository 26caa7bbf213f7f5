"""cerebro-py 0005: a brain may hold vectors of the local provider's integer model

No table or index changes. ADR 0041 gave new brains a second local model, ``all-MiniLM-L6-v2-onnx-int8-dq7`` (the
same file's weights on integer kernels). A cerebro from before knows one local model and would embed a brain of the
new one in float32, adding vectors of another model among its own — the one mistake ADR 0011 rules out. This
revision is the mark such a cerebro already reads: a brain at a revision it does not know is refused as "written by
a newer cerebro" (``cerebro.db.migrate``), before anything is embedded. Brains on the float32 model are marked too
(every upgrade moves a brain to the head revision, as py0001–py0004 did); going back is ``alembic downgrade py0004``
on a brain that holds no integer-model vectors.

Revision ID: py0005
Revises: py0004
"""

revision = "py0005"
down_revision = "py0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass  # the revision itself is the change: see the docstring


def downgrade() -> None:
    pass
