from __future__ import annotations

import types

import pytest

from cerebro.db import engine
from cerebro.errors import DriverUnavailable


class _NoExtensions:
    """A DB-API module whose connections cannot load extensions (like pyenv's stdlib sqlite3 here)."""

    def connect(self, *_args, **_kwargs):  # noqa: ANN002, ANN003, ANN201
        import sqlite3

        class Conn:
            def __init__(self) -> None:
                self._c = sqlite3.connect(":memory:")

            def execute(self, *a):  # noqa: ANN002, ANN201
                return self._c.execute(*a)

            def close(self) -> None:
                self._c.close()

        return Conn()


def test_no_usable_driver_names_the_fix() -> None:
    fake = types.SimpleNamespace(connect=_NoExtensions().connect)
    with pytest.raises(DriverUnavailable, match="pip install sqlean.py"):
        engine.pick_driver([fake])  # type: ignore[list-item]


def test_the_chosen_driver_loads_vec_and_has_fts5() -> None:
    module = engine.driver()
    conn = module.connect(":memory:")
    engine.setup_connection(conn)
    assert conn.execute("SELECT vec_version()").fetchone()[0].startswith("v")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
    conn.close()
