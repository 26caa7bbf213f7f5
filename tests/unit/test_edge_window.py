"""``--as-of`` on a window Go cerebro wrote as RFC 3339 with an offset: compared as the instant it names, not as
text (a ``T`` sorts after the storage layout's space, and ``+02:00`` is two hours before its UTC instant)."""

from __future__ import annotations

from datetime import UTC, datetime

from cerebro import Brain
from cerebro.db.engine import connect_raw


def test_a_window_written_with_an_offset_holds_at_the_instants_it_names(fake_brain: Brain) -> None:
    hub, a, b = (fake_brain.add(f"memory {name}") for name in "hab")
    fake_brain.add_edge(hub, a, "supports")
    fake_brain.add_edge(b, hub, "supports")
    fake_brain.close()
    raw = connect_raw(fake_brain.path)
    try:  # as Go cerebro's legacy paths left them: [2026-01-01 00:00 UTC, 2026-02-01 00:00 UTC) and from 2026-02-01
        with raw:
            raw.execute(
                "UPDATE edges SET valid_at = '2026-01-01T02:00:00+02:00', invalid_at = '2026-01-31T23:00:00-01:00' "
                "WHERE source_id = ?",
                (hub,),
            )
            raw.execute("UPDATE edges SET valid_at = '2026-02-01T00:00:00Z' WHERE source_id = ?", (b,))
    finally:
        raw.close()

    with Brain.open(fake_brain.path) as brain:

        def around(at: str) -> list[tuple[str, str]]:
            instant = datetime.fromisoformat(at).replace(tzinfo=UTC)
            with brain.handle.snapshot() as conn:
                found = brain.handle.store.reads.edges_of(conn, hub, instant)
                cited = brain.handle.store.graph.citation_indegree(conn, [hub, a], ["supports"], instant)
            assert cited == {e.target_id: 1 for e in found}
            return [(e.source_id, e.target_id) for e in found]

        assert around("2025-12-31T23:59:59") == []
        assert around("2026-01-01T00:00:00") == [(hub, a)]  # 02:00 at +02:00 is midnight UTC: valid from then
        assert around("2026-01-31T23:59:59") == [(hub, a)]
        assert around("2026-02-01T00:00:00") == [(b, hub)]  # 23:00 at -01:00 is the next midnight: invalid from then
