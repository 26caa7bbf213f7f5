"""A NUL or a line break in a subtype filter or an origin field: a one-line InvalidInput on either engine. A brain
file stored or searched it, and a team brain failed with "PostgreSQL text fields cannot contain NUL" (a review)."""

from __future__ import annotations

import pytest

from cerebro.errors import InvalidInput
from cerebro.values import Origin


@pytest.mark.parametrize("call", ["list", "recall", "forget"])
def test_a_subtype_filter_with_a_nul_is_refused(fake_brain, call: str) -> None:
    fake_brain.add("a memory", subtype="x")
    with pytest.raises(InvalidInput, match="subtype holds a control character"):
        if call == "list":
            fake_brain.list(subtype="x\x00")
        elif call == "recall":
            fake_brain.recall("a memory", subtype="x\x00")
        else:
            fake_brain.forget("memory", subtype="x\x00")


@pytest.mark.parametrize("write", ["add", "add_many", "inbox_add"])
def test_an_origin_with_a_nul_is_refused_and_nothing_is_written(fake_brain, write: str) -> None:
    origin = Origin(actor="a\x00b", channel="api")
    with pytest.raises(InvalidInput, match="origin actor holds a control character"):
        if write == "add":
            fake_brain.add("a memory", origin=origin)
        elif write == "add_many":
            fake_brain.add_many([{"content": "a memory", "origin": origin}])
        else:
            fake_brain.inbox_add("a memory", origin=origin)
    assert fake_brain.list(status=None) == [] and fake_brain.inbox_list() == []
