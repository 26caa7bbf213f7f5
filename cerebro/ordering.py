"""After fusion: each result's fused value times its code-anchor factor (ADR 0018) and the length prior (ADR 0035),
re-sorted — in one copy of each result when no anchor demotes, as ~110 results a recall made each step's copy count.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from cerebro import scoring
from cerebro.prior import factors, favour_informative
from cerebro.values import evolve

if TYPE_CHECKING:
    from collections.abc import Sequence

    from cerebro.anchors import Checker
    from cerebro.values import ScoredNode


_DEMOTING = {status for status in ("stale", "missing") if scoring.anchor_factor(status) != 1.0}


def ordered(valued: Sequence[tuple[ScoredNode, float]], checker: Checker | None, *, length: bool) -> list[ScoredNode]:
    """``valued`` (results with their fused values, in fused order) re-valued and re-sorted, stable: the same list as
    :func:`apply_anchors` and then :func:`cerebro.prior.favour_informative` give, one step after the other."""
    results = [s for s, _ in valued]
    nodes = [checker.annotate(s.node) for s in results] if checker is not None else [s.node for s in results]
    if any(node.anchor_status in _DEMOTING for node in nodes):  # rare: the steps one by one
        annotated = [(s if node is s.node else evolve(s, node=node)) for s, node in zip(results, nodes, strict=True)]
        # Annotated already: apply_anchors's checker returns each node as it is.
        steps = apply_anchors([s.revalued(value) for s, (_, value) in zip(annotated, valued, strict=True)], checker)  # type: ignore[arg-type]
        return favour_informative(steps) if length else steps
    multipliers = factors(nodes) if length else [1.0] * len(nodes)
    out = [
        (s if node is s.node else evolve(s, node=node)).revalued(value * multiplier)
        for (s, value), node, multiplier in zip(valued, nodes, multipliers, strict=True)
    ]
    out.sort(key=lambda s: -s.rank_value)  # stable: equals keep the fused order
    return out


def anchored(results: list[ScoredNode], checker: Checker | None) -> list[ScoredNode]:
    """:func:`apply_anchors` when there is a checker; ``results`` as they are without one."""
    return apply_anchors(results, checker) if checker is not None else results


def apply_anchors(results: list[ScoredNode], checker: Checker) -> list[ScoredNode]:
    """Fill each result's anchor status; multiply the score (and fused value) of a stale or missing one by
    its anchor factor, then re-sort (stable: equals keep their order). Only anchored memories pay."""
    out = []
    demoted = False
    for s in results:
        node = checker.annotate(s.node)
        factor = scoring.anchor_factor(node.anchor_status)
        if factor == 1.0:
            out.append(s if node is s.node else replace(s, node=node))
            continue
        demoted = True
        parts = replace(s.parts, anchor=factor, score=s.parts.score * factor) if s.parts is not None else None
        fused = s.fused * factor if s.fused is not None else None
        out.append(replace(s, node=node, score=s.score * factor, fused=fused, parts=parts))
    if demoted:
        out.sort(key=lambda s: -s.rank_value)
    return out
