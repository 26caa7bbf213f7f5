"""Waiting for another process's upgrade of a brain ends: a process stopped in the middle of one (Ctrl-Z on a
terminal's upgrade) held every hook and server that opened the brain after it for ever (a review)."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from cerebro.db import migrate
from cerebro.errors import BrainBusy


def test_a_held_upgrade_lock_is_waited_for_so_long_then_the_brain_is_busy(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    brain = tmp_path / "brain.sqlite"
    brain.write_bytes(b"")
    monkeypatch.setattr(migrate, "UPGRADE_WAIT_SECONDS", 0.3)
    with migrate.upgrade_lock(brain):  # the lock file made; held by this open file description
        pass
    (lock,) = (isolated_home / "locks").glob("*.lock")
    holder = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)  # the stopped process's upgrade
        with pytest.raises(BrainBusy, match=r"upgrading .* for 0 s"), migrate.upgrade_lock(brain):
            pass
        fcntl.flock(holder, fcntl.LOCK_UN)
        with migrate.upgrade_lock(brain):  # and taken once it is let go
            pass
    finally:
        os.close(holder)
