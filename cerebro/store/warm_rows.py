"""An in-memory copy of a brain's memory rows for long-lived processes: recall's row reads, from memory (ADR 0051).

Once the vectors (ADR 0009) and the keyword index (ADR 0044) are warm, a recall at 10,000 memories spends a quarter of
its time reading rows: ~110 memories' (the lanes' candidates, expansion's neighbours, the memories written beside the
best results), ~5 µs each, and the statements that find the neighbours in writing order. A process that keeps
recalling at one state of the brain reads them from this copy instead: every row of ``nodes`` as the
:class:`~cerebro.values.Node` :func:`~cerebro.store.reads.node_from_row` makes of it, the memories in writing order
(``created_at``, then ``rowid``, as SQL sorts them: the neighbours are places in that list) and the keyword index's
rowid → node id map. Its answers are the statements' answers (``tests/retrieval/test_warm_rows.py`` compares them).

It is current while nothing has changed since it was read: its stamp is (``PRAGMA data_version``: commits by any other
connection; the raw connection's ``total_changes``: rows this connection changed, whatever the path — a new memory, a
server's ORM on the raw connection, bookkeeping). Read inside the recall's snapshot, both describe what that snapshot
sees. A recall's own bookkeeping (access touches, surfacing stamps, counters) is mirrored in the copy
(:meth:`WarmRows.after_write`) rather than dropping it — an MCP server commits touches after every recall; any other
change drops it. A new copy is built once the statements' row reads at one state have cost a share of what a build
costs (ski rental, as the keyword copy's): a server whose brain is written between a few recalls never pays for copies
it would barely use. The build runs on a thread of its own (taking turns with this process's recalls:
:mod:`cerebro.store.rows_build`), on its own connection, from a snapshot that begins before
the recall that started it lets go of the raw connection; this process's writes meanwhile are logged, and the copy is
adopted only if every one of them could be mirrored into it and no other connection has committed since (the stamp,
again). Brains above :data:`MAX_ROWS` keep none (memory: ~0.9 KB a memory).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from cerebro.store import reads
from cerebro.store.rows_build import Build, in_turns
from cerebro.values import Node, evolve

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from cerebro.db.types import Connection
    from cerebro.store.interface import Store

# A copy costs ~0.9 KB of memory a memory of ~100 characters (its Node, whose fields share one key table; the text;
# the parsed times; the values many rows repeat kept once) and ~7–9 µs of CPU a row to read, on a thread of its own
# (the bench brains: 8 MB and 0.08 s at 10,000 memories, 87 MB and 0.9 s at 100,000). Above this many rows a copy
# would hold more than ~130 MB (beside the warm vector index's ~290 MB): none is kept. An edge costs ~370 bytes (its
# tuple, its two ids and relation as read, its places in both ends' lists): it counts as 0.4 of a row.
MAX_ROWS = 150_000
EDGE_ROWS = 0.4
# Ski rental (as the keyword copy's, ADR 0044): a copy is built once the recalls at one state have spent this share of
# what a build costs reading rows the statements' way (their CPU, measured: ~0.7 ms a recall at 10,000 memories).
BUILD_SHARE = 0.25
BUILD_SECONDS_FIXED = 0.002
BUILD_SECONDS_PER_ROW = 8e-6
BEGIN_SECONDS = 5.0  # how long a recall waits for a build's snapshot to begin (an open is ~1 ms; a busy disk, more)

Stamp = tuple[int, int]  # (PRAGMA data_version, the connection's total_changes)
Edge = tuple[str, str, str, float]  # (source, target, relation, weight)


def stamp_of(conn: Connection) -> Stamp:
    """What changes whenever ``conn`` sees any change: other connections' commits, and its own rows changed."""
    return conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes


class RowsCopy:
    """The rows of ``nodes`` at one state (``stamp``), answering as the statements of :mod:`cerebro.store.reads` and
    :mod:`cerebro.store.fts` would in a snapshot of that state."""

    def __init__(
        self,
        stamp: Stamp,
        nodes: dict[str, Node],
        order: list[str],
        fts: dict[int, str] | None,
        edges: list[Edge],
        blank: set[str],
    ) -> None:
        self.stamp = stamp
        self.nodes = nodes  # node id → Node, every status
        # Memories stored with a NULL or '' status: a Node reads them as active, the statements' status = 'active' not.
        self.blank = blank
        self.order = order  # ids of the memories with a created_at, in writing order
        self.position = {node_id: place for place, node_id in enumerate(order)}
        self.fts = fts  # the keyword index's rowid → node id (None: an index without a content table of its own)
        self.edges: dict[str, list[Edge]] = {}  # node id → the edges from or to it
        for edge in edges:
            self.edges.setdefault(edge[0], []).append(edge)
            if edge[1] != edge[0]:
                self.edges.setdefault(edge[1], []).append(edge)

    def nodes_by_id(self, ids: Sequence[str], active_only: bool) -> dict[str, Node]:
        """As :func:`cerebro.store.reads.nodes_by_id`, in the same order: SQLite walks each statement's ``IN`` list
        sorted, a statement per :data:`~cerebro.store.reads.CHUNK` distinct ids."""
        nodes, blank = self.nodes, self.blank
        distinct = list(dict.fromkeys(ids))
        found = {}
        for start in range(0, len(distinct), reads.CHUNK):
            for node_id in sorted(distinct[start : start + reads.CHUNK]):
                node = nodes.get(node_id)
                if node is not None and (not active_only or (node.status == "active" and node_id not in blank)):
                    found[node_id] = node
        return found

    def written_beside(self, ids: Sequence[str]) -> dict[str, tuple[Node | None, Node | None]]:
        """As :func:`cerebro.store.reads.written_beside`: the places just before and after, whatever their status."""
        nodes, order, position = self.nodes, self.order, self.position
        last = len(order) - 1
        found: dict[str, tuple[Node | None, Node | None]] = {}
        for node_id in ids:
            if node_id not in nodes:
                continue
            place = position.get(node_id)
            if place is None:  # no created_at: no neighbours
                found[node_id] = (None, None)
                continue
            before = nodes[order[place - 1]] if place > 0 else None
            found[node_id] = (before, nodes[order[place + 1]] if place < last else None)
        return found

    def written_near(self, ids: Sequence[str], reach: int) -> dict[str, set[str]]:
        """As :func:`cerebro.store.reads.written_near`: the ids within ``reach`` places on either side."""
        if not ids or reach <= 0:
            return {}
        order, position = self.order, self.position
        found: dict[str, set[str]] = {}
        for node_id in ids:
            if node_id not in self.nodes:
                continue
            place = position.get(node_id)
            if place is None:
                found[node_id] = set()
                continue
            near = order[max(0, place - reach) : place + reach + 1]
            found[node_id] = {other for other in near if other != node_id}
        return found

    def active_hits(self, rowids: Sequence[int], subtype: Any, rows: dict[str, Any] | None) -> dict[int, str] | None:  # noqa: ANN401
        """As :func:`cerebro.store.fts._active_node_ids` (``rows`` gets the hits' Nodes, not their rows); None without
        the keyword index's map (the statement answers)."""
        if self.fts is None:
            return None
        nodes, fts = self.nodes, self.fts
        found: dict[int, str] = {}
        for rowid in rowids:
            node = nodes.get(fts.get(rowid, ""))
            if node is None or node.status != "active" or node.id in self.blank:
                continue
            if subtype is not ... and (node.subtype != subtype if subtype else node.subtype not in (None, "")):
                continue
            found[rowid] = node.id
            if rows is not None:
                rows[node.id] = node
        return found

    def edges_touching(self, ids: Sequence[str]) -> list[tuple[str, str, str, float]]:
        """As :func:`cerebro.store.graph.edges_touching` without ``as_of``: the edges from or to any of ``ids``."""
        found: dict[tuple[str, str, str], float] = {}
        for node_id in ids:
            for source, target, relation, weight in self.edges.get(node_id, ()):
                found[(source, target, relation)] = weight
        return [(s, t, r, w) for (s, t, r), w in found.items()]

    def citation_indegree(self, ids: Sequence[str], relations: Sequence[str]) -> dict[str, int]:
        """As :func:`cerebro.store.graph.citation_indegree`: the ``relations`` edges into each of ``ids`` (if any)."""
        counts = {}
        for node_id in set(ids):
            count = sum(1 for edge in self.edges.get(node_id, ()) if edge[1] == node_id and edge[2] in relations)
            if count:
                counts[node_id] = count
        return counts

    def sources_with(self, ids: Sequence[str], relation: str) -> set[str]:
        """As :func:`cerebro.store.graph.sources_with`: those of ``ids`` with an outgoing ``relation`` edge."""
        edges = self.edges
        return {i for i in ids if any(e[0] == i and e[2] == relation for e in edges.get(i, ()))}

    def touched(self, ids: Sequence[str], *, accessed: str | None = None, surfaced: str | None = None) -> None:
        """Mirror :mod:`cerebro.store.bookkeeping`'s touches: ``accessed`` (access_count + 1, last_accessed) and
        ``surfaced`` (last_surfaced), each a stored stamp. New Node values: callers may hold the old ones."""
        nodes = self.nodes
        for node_id in ids:
            node = nodes.get(node_id)
            if node is None:
                continue
            if accessed is not None:
                node = evolve(node, access_count=node.access_count + 1, last_accessed=reads.stored_time(accessed))
            if surfaced is not None:
                node = evolve(node, last_surfaced=reads.stored_time(surfaced))
            nodes[node_id] = node

    def store(self, base: Store) -> Store:
        """``base`` with its row reads answered from this copy."""
        from cerebro.store.rows_views import CopiedStore

        return cast("Store", CopiedStore(base, self))


def read_copy(conn: Connection, stamp: Stamp, turn: Callable[[], None] = lambda: None) -> RowsCopy:
    """Every row of ``nodes`` and the keyword index's map, in ``conn``'s snapshot (which ``stamp`` describes);
    ``turn()`` every few rows (a build's wait for its turn: :mod:`cerebro.store.rows_build`)."""
    nodes: dict[str, Node] = {}
    order: list[str] = []
    fts: dict[int, str] | None
    node_from_row = reads.node_from_row
    # Writing order as SQL sorts it (the neighbour statements compare created_at the same way); rows without a
    # created_at (NULLs sort first) are nobody's neighbours.
    same: dict[Any, Any] = {}  # one object for each value many rows repeat: ~200 bytes a memory less
    blank = set()
    for row in in_turns(conn.execute(f"SELECT {reads.NODE_COLUMNS} FROM nodes ORDER BY created_at, rowid"), turn):
        node = nodes[row[0]] = node_from_row(row)
        if not row[9]:
            blank.add(node.id)
        attrs = node.__dict__  # a Node just made, not yet anyone's: set as node_from_row sets it (one key table)
        for name in ("type", "subtype", "status", "embedding_model"):
            attrs[name] = same.setdefault(attrs[name], attrs[name])
        if row[11] is not None:
            order.append(node.id)
    try:
        mapped = list(in_turns(conn.execute("SELECT id, c0 FROM nodes_fts_content"), turn))
    except InterruptedError:
        raise  # a stopped build ends here too
    except Exception:  # noqa: BLE001 - no keyword index, or one that keeps its text elsewhere: the statement answers
        fts = None
    else:  # the nodes' own id objects, not a second copy of each
        fts = {rowid: nodes[node_id].id if node_id in nodes else node_id for rowid, node_id in mapped}
    edges = [
        (source, target, relation, float(weight) if weight is not None else 1.0)  # as graph.edges_touching reads it
        for source, target, relation, weight in in_turns(
            conn.execute("SELECT source_id, target_id, relation, weight FROM edges"), turn
        )
    ]
    return RowsCopy(stamp, nodes, order, fts, edges, blank)


class WarmRows:
    """A brain's rows copy in one process (a handle keeps one), with the rule that builds and drops it. Asked under the
    handle's raw-connection lock (one recall or write at a time); a build runs on a thread of its own."""

    def __init__(self, path: Path, turns: Any = None) -> None:  # noqa: ANN401 - a lock
        self._path = path
        self._turns = turns  # the lock this process's recalls and writes hold the brain's connection by (a build waits)
        self._copy: RowsCopy | None = None
        self._build: Build | None = None  # under way, or done and not yet adopted
        self._threads: list[Build] = []  # every build started and not seen done (close() stops them)
        # The state recalls are counted at, the seconds its statements spent reading rows, and the rows a build reads.
        self._asked: tuple[Stamp | None, float, int] = (None, 0.0, 0)
        self._tried: Stamp | None = None  # the state the last build started at: a failed one is not retried there
        self.builds = 0  # builds started

    def current(self, conn: Connection) -> RowsCopy | None:
        """The copy for the state ``conn``'s snapshot sees (a build's, adopted when it is current), or None. Called once
        a recall, inside its snapshot."""
        stamp = stamp_of(conn)
        copy = self._copy
        if copy is not None and copy.stamp == stamp:
            return copy
        self._copy = None
        build = self._build
        if build is not None and build.done.is_set():
            self._build = None
            self._copy = copy = build.adopt(stamp)
            self._threads = [b for b in self._threads if not b.done.is_set()]  # its copy lives on here or nowhere
            if copy is not None:
                return copy
        if self._asked[0] != stamp:
            # max(rowid): a seek, where COUNT(*) walks an index — an estimate from above (rows removed leave gaps).
            nodes, edges = conn.execute(
                "SELECT (SELECT COALESCE(max(rowid), 0) FROM nodes), (SELECT COALESCE(max(rowid), 0) FROM edges)"
            ).fetchone()
            self._asked = (stamp, 0.0, nodes + round(EDGE_ROWS * edges))
        return None

    def store(self, base: Store, conn: Connection) -> Store:
        """The store a recall in ``conn``'s snapshot reads through: ``base`` with the copy's answers when it is current,
        else ``base`` with its row reads timed for the ski rental."""
        copy = self.current(conn)
        if copy is not None:
            return copy.store(base)
        from cerebro.store.rows_views import TimedStore

        return cast("Store", TimedStore(base, lambda seconds: self.spent(conn, seconds)))

    def spent(self, conn: Connection, seconds: float) -> None:
        """The statements spent ``seconds`` reading rows for a recall at the state last asked about; once that state
        has cost a share of a build, a build starts (from ``conn``'s snapshot, the recall's)."""
        stamp, total, rows = self._asked
        total += seconds
        self._asked = (stamp, total, rows)
        if stamp is None or stamp == self._tried or self._build is not None or rows > MAX_ROWS:
            return
        if total < BUILD_SHARE * (BUILD_SECONDS_FIXED + BUILD_SECONDS_PER_ROW * rows):
            return
        # Tried once a state (which the touches mirrored since carry along): a build that fails is not retried at every
        # recall of a server that touches after each.
        self._tried = stamp
        # WAL only: in a rollback journal a writer waiting for this recall's read lock would stop the build's snapshot
        # from beginning, and this recall would wait for it. The file the raw connection has open, by its full name.
        if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            return
        path = next((row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"), "") or self._path
        build = Build(stamp, self._turns)
        self.builds += 1
        import threading

        try:
            threading.Thread(target=build.run, args=(path,), name="cerebro-rows", daemon=True).start()
        except Exception:  # noqa: BLE001 - no thread (a process at its limit): the statements go on answering
            return
        self._threads = [*(b for b in self._threads if not b.done.is_set()), build]
        # The build's snapshot begins before this recall lets go of the raw connection: every write this process makes
        # after it is one after_write sees (and logs for the build). A commit by another connection in between makes
        # the copy one this stamp does not describe: data_version tells at adoption, and it is not used.
        if build.begun.wait(BEGIN_SECONDS):
            self._build = build
        else:  # begun too late for the writes since to be known: never adopted, so it ends at its first turn
            build.stopped = True

    def close(self) -> None:
        """Drop the copy and stop the builds under way (one whose snapshot began too late to be adopted included): a
        closed handle leaves no thread reading its brain file."""
        threads, self._threads, self._build, self._copy = self._threads, [], None, None
        for build in threads:  # all told first: their waits for a turn and their interrupts overlap
            build.stopped = True
        for build in threads:
            build.stop()

    def after_write(self, before: int, after: int, mirror: Callable[[RowsCopy], None] | None) -> None:
        """A write on the raw connection took its ``total_changes`` from ``before`` to ``after``: ``mirror`` (when the
        write committed and its effect is known) makes the same change to the copy, which stays current; a change it
        cannot mirror leaves the copy to be dropped by the next :meth:`current`."""
        if before == after:
            return
        if self._build is not None:
            self._build.log.append((before, after, mirror))
        if mirror is None:
            return
        copy = self._copy
        if copy is not None and copy.stamp[1] == before:
            mirror(copy)
            copy.stamp = (copy.stamp[0], after)
        stamp, total, rows = self._asked
        if stamp is not None and stamp[1] == before:
            self._asked = ((stamp[0], after), total, rows)
        if self._tried is not None and self._tried[1] == before:
            self._tried = (self._tried[0], after)
