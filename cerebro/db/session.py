"""The one transaction seam: ``unit_of_work``.

Callers that compose several operations pass their session in and the work runs in a SAVEPOINT;
otherwise a new session opens one transaction (``BEGIN IMMEDIATE`` for writers) and commits at the end.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from cerebro.db.engine import WRITE_OPTION


@contextmanager
def unit_of_work(engine: Any, *, write: bool, session: Any = None) -> Iterator[Any]:
    from sqlmodel import Session

    if session is not None:
        with session.begin_nested():
            yield session
        return
    bind = engine.execution_options(**{WRITE_OPTION: write})
    with Session(bind, expire_on_commit=False, autoflush=True) as new_session:
        with new_session.begin():
            yield new_session
