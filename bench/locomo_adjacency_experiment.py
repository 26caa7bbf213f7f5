"""Issue 19 exploration, development conversations only: bring each top hit's neighbours in writing order along.

    CEREBRO_HOME=/tmp/exp-home .venv/bin/python bench/locomo_adjacency_experiment.py ALPHA TOP SPAN MODE
    e.g. ... 0.3 5 1 max

Not product code: it wraps ``cerebro.recall.recall`` for the length of the run. Each of the TOP best results brings
the memories written just before and after it (rowid ± 1..SPAN, active) with the parent's fused value ×
ALPHA^distance; a neighbour already in the list keeps the larger value (MODE ``max``) or gains half of it (``add``).
Prints the pipeline's R@10, R@20 and MRR per category against ``docs/evals/locomo-dev.json``. The held-out
conversations are never run here (issue 19's rules). Session 15's results are in its closing note.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import cerebro.recall as pipeline
from cerebro.evals import locomo
from cerebro.store import reads
from cerebro.values import ScoredNode

DEVELOPMENT = (26, 30, 41, 42, 43)
ROOT = Path(__file__).resolve().parent.parent


def with_neighbours(alpha: float, top: int, span: int, mode: str) -> Any:  # noqa: ANN401 - the wrapped pipeline
    original = pipeline.recall

    def recall(store: Any, conn: Any, query: str, query_vector: Any, options: Any, **kw: Any) -> Any:  # noqa: ANN401
        wide = dataclasses.replace(options, limit=max(options.limit, 20) * 2)
        result = original(store, conn, query, query_vector, wide, **kw)
        items = list(result.results)
        if not items:
            return result
        ids = [s.node.id for s in items[:top]]
        marks = ",".join("?" * len(ids))
        rowid_of = dict(conn.execute(f"SELECT id, rowid FROM nodes WHERE id IN ({marks})", ids).fetchall())
        wanted: dict[int, tuple[ScoredNode, int]] = {}
        for s in items[:top]:
            rowid = rowid_of.get(s.node.id)
            for distance in range(1, span + 1) if rowid is not None else ():
                for neighbour in (rowid - distance, rowid + distance):
                    wanted.setdefault(neighbour, (s, distance))
        rows = []
        if wanted:
            marks = ",".join("?" * len(wanted))
            sql = f"SELECT rowid, id FROM nodes WHERE rowid IN ({marks}) AND status = 'active'"
            rows = conn.execute(sql, list(wanted)).fetchall()
        have = {s.node.id: s for s in items}
        value = {s.node.id: s.rank_value for s in items}
        new_nodes = reads.nodes_by_id(conn, [i for _, i in rows if i not in have])
        for rowid, node_id in rows:
            parent, distance = wanted[rowid]
            carried = parent.rank_value * alpha**distance
            if node_id in have:
                value[node_id] = max(value[node_id], carried) if mode == "max" else value[node_id] + carried / 2
            elif node_id in new_nodes:
                have[node_id] = ScoredNode(new_nodes[node_id], 0.0, 0.0, None, {"adjacent": 1}, carried)
                value[node_id] = carried
        ordered = sorted(have.values(), key=lambda s: -value[s.node.id])
        return dataclasses.replace(result, results=ordered[: options.limit])

    return recall


def main() -> None:
    alpha, top, span, mode = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    pipeline.recall = with_neighbours(alpha, top, span, mode)  # retrieval.recall imports it at each call
    data = locomo.load(ROOT.parent / "shared/data/locomo/locomo10.zip", DEVELOPMENT)
    report = locomo.run(data, limit=20).to_dict()
    base = json.loads((ROOT / "docs/evals/locomo-dev.json").read_text())["runs"]["pipeline"]
    for name, got in report["runs"]["pipeline"].items():
        was = base[name]
        print(
            f"{name:28s}"
            + "  ".join(f"{k} {got[k]:.4f} ({got[k] - was[k]:+.4f})" for k in ("recall@10", "recall@20", "MRR"))
        )


if __name__ == "__main__":
    main()
