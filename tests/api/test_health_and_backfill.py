"""The brain's health counts (the dashboard's panel) and the backfill of a brain that never had a vector table."""

from __future__ import annotations

from datetime import timedelta

from cerebro import Brain, clock
from cerebro.db.engine import connect_raw


def test_health_counts_active_memories_by_type_their_edges_and_the_cold_ones(fake_brain: Brain, pinned_clock) -> None:
    concept = fake_brain.add("the deploy needs a region", type="concept")
    episode = fake_brain.add("deployed on Monday", type="episode")
    fake_brain.add("deployed on Tuesday", type="episode")
    old = fake_brain.add("run the migration by hand", type="procedure")
    new = fake_brain.supersede(old, "the migration runs on deploy")  # the old one stays, superseded: not active
    fake_brain.add_edge(episode, concept, "supports")
    fake_brain.touch_surfaced([concept, new])  # primed just now: warm; the episodes never were: cold

    health = fake_brain.health()
    assert (health.active_nodes, health.total_edges, health.cold_nodes) == (4, 2, 2)  # supersedes is an edge too
    assert health.nodes_by_type == {"concept": 1, "episode": 2, "procedure": 1}
    assert fake_brain.health(now=clock.now() + timedelta(days=8)).cold_nodes == 4  # a week on, all cold


def test_backfill_embeds_every_active_memory_of_a_brain_without_a_vector_table(fake_brain: Brain) -> None:
    """A brain whose vector table is gone (a Go brain made without one, a hand repair): embed --pending finds its
    active memories from the memories themselves and makes the table."""
    ids = [fake_brain.add(f"memory {i}") for i in range(3)]
    conn = connect_raw(fake_brain.path)
    try:
        conn.execute("DROP TABLE vec_nodes")
    finally:
        conn.close()
    report = fake_brain.embed_pending()
    assert (report.embedded, report.failed, report.remaining) == (3, 0, 0)
    conn = connect_raw(fake_brain.path)
    try:
        assert sorted(r[0] for r in conn.execute("SELECT node_id FROM vec_nodes")) == sorted(ids)
    finally:
        conn.close()
