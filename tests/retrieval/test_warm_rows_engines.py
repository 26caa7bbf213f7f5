"""Which brains keep a rows copy (ADR 0051): a brain file does; a team brain has no cheap counter of other sessions'
commits, so it keeps none and every recall reads its rows from PostgreSQL."""

from __future__ import annotations

import pytest

from cerebro.store import warm_rows
from tests.retrieval.test_warm_rows import corpus, wait_for_builds


def test_a_brain_file_keeps_a_rows_copy_and_a_team_brain_none(
    fake_brain, engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(warm_rows, "BUILD_SHARE", 0.0)
    fake_brain.add_many(corpus(14, 30))
    first = [r.node.id for r in fake_brain.recall("deploy database").results]
    wait_for_builds()
    assert [r.node.id for r in fake_brain.recall("deploy database").results] == first
    rows = fake_brain.handle._rows
    if engine == "postgresql":
        assert rows is False
    else:
        assert rows._copy is not None and rows.builds == 1
