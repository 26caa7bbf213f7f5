"""The statuses every read fills in (provenance, origin, code anchors: computed at read time, never stored),
and the brain's counts.

Functions over a :class:`~cerebro.brain.handle.Handle`; :class:`cerebro.Brain` is their public face.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import cerebro  # cerebro.reports loads on first use: hooks never define the reports (ADR 0036)
from cerebro import clock, values
from cerebro.brain.handle import Handle
from cerebro.values import NODE_TYPES

if TYPE_CHECKING:
    import cerebro.reports
    from cerebro.anchors import Checker
    from cerebro.store.interface import Store


def stats(h: Handle) -> cerebro.reports.Stats:
    """The brain's counts and settings, read on the raw connection (no ORM import: ~0.35 s of a `cerebro stats`)."""
    provider, model, dims = h.read_embedding_settings()  # as stored now, not as this handle first read them
    with h.snapshot() as conn:
        schema_version = h.store.reads.meta(conn, "schema_version", "0")
        counts = h.store.reads.census(conn, model, vectors=dims > 0)
    return cerebro.reports.Stats(
        total_nodes=sum(counts.by_status.values()),
        active_nodes=counts.by_status.get("active", 0),
        consolidated_nodes=counts.by_status.get("consolidated", 0),
        superseded_nodes=counts.by_status.get("superseded", 0),
        archived_nodes=counts.by_status.get("archived", 0),
        nodes_by_type={t: counts.by_type.get(t, 0) for t in NODE_TYPES},
        total_edges=counts.edges,
        pending_embeddings=counts.pending,
        embedded_nodes=counts.embedded,
        embedding_provider=provider,
        embedding_model=model,
        embedding_dimensions=dims,
        schema_version=int(schema_version or 0),
        revision=counts.revision,
    )


COLD_AFTER = timedelta(days=7)  # an active memory prime has not surfaced for this long is "cold"


def health(h: Handle, now: datetime | None) -> cerebro.reports.Health:
    """Active memories by type, edges, and cold memories (never surfaced by prime, or not for a week), read on the
    raw connection."""
    now = now or clock.now()
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)  # the brain's timestamps are UTC
    cutoff = now - COLD_AFTER
    by_type: dict[str, int] = {}
    cold = 0
    with h.snapshot() as conn:
        # Parsed in Python rather than compared as strings in SQL: legacy rows hold RFC 3339 ('T'), ours a
        # space, and the two do not sort together within a day.
        for node_type, last_surfaced in h.store.reads.active_surfacing(conn):
            by_type[node_type] = by_type.get(node_type, 0) + 1
            surfaced = clock.parse_optional(last_surfaced)
            if surfaced is None or surfaced < cutoff:
                cold += 1
        edges = h.store.reads.edge_count(conn)
    return cerebro.reports.Health(sum(by_type.values()), edges, cold, dict(sorted(by_type.items())))


def active_count(h: Handle) -> int:
    """How many memories are active, read on the raw connection (no ORM import: the hooks ask)."""

    with h.snapshot() as conn:
        return h.store.reads.count_active(conn)


def annotate(
    h: Handle, found: list[values.Node], checker: Checker | None = None, store: Store | None = None
) -> list[values.Node]:
    """Fill the read-time statuses (provenance_status, origin_status, anchor_status) in one batch. ``store``: the one
    the caller read ``found`` through, in the snapshot it has open (a recall's, with its rows copy: ADR 0051)."""
    from cerebro import provenance

    if not found:
        return found
    store = store or h.store
    with h.snapshot() as conn:
        prov = provenance.provenance_statuses(store, conn, found)
        orig = provenance.origin_statuses(store, conn, found)
    checker = checker or h.anchor_checker()
    evolve = values.evolve  # dataclasses.replace, without its per-field work: this runs for every result
    return [checker.annotate(evolve(n, provenance_status=prov[n.id], origin_status=orig[n.id])) for n in found]


def annotate_scored(h: Handle, result: values.RecallResult, store: Store | None = None) -> values.RecallResult:
    annotated = annotate(h, [r.node for r in result.results], store=store)
    evolve = values.evolve
    return evolve(result, results=[evolve(r, node=n) for r, n in zip(result.results, annotated, strict=True)])
