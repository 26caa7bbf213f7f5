"""SQLite's refusals of a brain file (a full disk, a read-only file), as its user is told them: one line naming what
to do, not "internal error: OperationalError … (Background on this error at: https://sqlalche.me/…)" (a review)."""

from __future__ import annotations

import sqlalchemy.exc
import sqlean.dbapi2 as sqlean

from cerebro.errors import BrainUnreadable, from_sqlite


def test_a_full_disk_or_a_read_only_file_is_a_one_line_error() -> None:
    for raised, hint in (
        (sqlean.OperationalError("database or disk is full"), "free some space"),
        (sqlean.OperationalError("attempt to write a readonly database"), "permissions"),
    ):
        wrapped = sqlalchemy.exc.OperationalError("UPDATE nodes SET content=?", ("a secret text",), raised)
        for exc in (raised, wrapped):
            told = from_sqlite(exc)
            assert isinstance(told, BrainUnreadable) and hint in str(told)
            assert "a secret text" not in str(told) and "UPDATE" not in str(told) and "\n" not in str(told)


def test_other_failures_are_left_as_they_are() -> None:
    assert from_sqlite(sqlean.OperationalError("no such column: x")) is None
    assert from_sqlite(ValueError("database or disk is full")) is None


def test_the_mcp_server_tells_a_full_disk_as_the_cli_does() -> None:
    """The MCP server asked only the team database's mapping: a full disk came back "the brain could not be read
    (database or disk is full)" rather than what to do."""
    from cerebro.mcp.server import failure_message

    message, _ = failure_message(sqlean.OperationalError("database or disk is full"))
    assert message == str(from_sqlite(sqlean.OperationalError("database or disk is full")))
    assert "free some space" in message
