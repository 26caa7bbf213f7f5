"""A PostgreSQL failure in the middle of a command, as its user is told it: one line and an exit code, never
"internal error: QueryCanceled … (Background on this error at: https://sqlalche.me/…)" (a review)."""

from __future__ import annotations

import psycopg
import pytest
import sqlalchemy.exc

from cerebro.errors import BrainBusy, BrainUnreadable, InvalidInput, from_team_database


@pytest.mark.parametrize(
    ("raised", "expected"),
    [
        (psycopg.errors.QueryCanceled("canceling statement due to statement timeout"), BrainBusy),
        (psycopg.errors.LockNotAvailable("could not obtain lock"), BrainBusy),
        (psycopg.errors.AdminShutdown("terminating connection due to administrator command"), BrainUnreadable),
        (psycopg.OperationalError("server closed the connection unexpectedly\nThis probably means…"), BrainUnreadable),
        (psycopg.errors.ProgramLimitExceeded("string is too long for tsvector (1427196 bytes)"), InvalidInput),
    ],
)
def test_the_servers_failures_become_a_busy_or_unreadable_brain(raised: Exception, expected: type) -> None:
    wrapped = sqlalchemy.exc.OperationalError("INSERT INTO nodes …", {"content": "a secret text"}, raised)
    for exc in (raised, wrapped):
        told = from_team_database(exc)
        assert isinstance(told, expected)
        assert "\n" not in str(told) and "a secret text" not in str(told) and "sqlalche.me" not in str(told)


def test_anything_else_is_left_as_it_is() -> None:
    assert from_team_database(ValueError("a bug")) is None
    assert from_team_database(sqlalchemy.exc.OperationalError("x", {}, ValueError("sqlite's"))) is None
