"""``cerebro.values.evolve``: a frozen value's copy with some fields changed, as ``dataclasses.replace`` makes one."""

from __future__ import annotations

import dataclasses

import pytest

from cerebro.values import Origin, ScoredNode, evolve
from tests.helpers import memory


def test_a_copy_with_the_changes_and_every_other_field_as_it_was() -> None:
    node = memory(importance=0.7, origin=Origin(actor="me"))
    changed = evolve(node, content="y", provenance_status="complete")
    assert changed == dataclasses.replace(node, content="y", provenance_status="complete")
    assert changed is not node and node.content == "x"  # the original unchanged
    scored = ScoredNode(node, 0.5, 0.4)
    assert evolve(scored, fused=0.9) == dataclasses.replace(scored, fused=0.9)


def test_an_unknown_field_is_refused_by_name() -> None:
    node = memory()
    with pytest.raises(TypeError, match="Node has no field 'colour'"):
        evolve(node, content="y", colour="red")
    with pytest.raises(TypeError, match="ScoredNode has no field 'rank'"):
        evolve(ScoredNode(node, 0.5, 0.4), rank=1)
