"""The idempotent steps revisions are built from: a half-migrated brain heals instead of failing."""

from __future__ import annotations

from pathlib import Path

from cerebro.db.engine import create_engine
from cerebro.db.revisions import add_column_if_absent, column_exists, drop_column_if_present


def test_columns_are_added_and_dropped_once_whatever_the_brain_already_has(tmp_path: Path) -> None:
    engine = create_engine(tmp_path / "half.sqlite")
    try:
        with engine.begin() as bind:
            bind.exec_driver_sql("CREATE TABLE nodes (id TEXT PRIMARY KEY)")
            add_column_if_absent(bind, "nodes", "updated_at", "DATETIME")
            add_column_if_absent(bind, "nodes", "updated_at", "DATETIME")  # already there: nothing to do
            assert column_exists(bind, "nodes", "updated_at")
            assert [r[1] for r in bind.exec_driver_sql("PRAGMA table_info(nodes)")] == ["id", "updated_at"]
            drop_column_if_present(bind, "nodes", "updated_at")
            drop_column_if_present(bind, "nodes", "updated_at")  # gone already: nothing to do
            assert not column_exists(bind, "nodes", "updated_at")
    finally:
        engine.dispose()
