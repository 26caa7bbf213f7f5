"""Brain file size per memory (issue 18: ≤ 1.3 KB a memory at 100k), with where the bytes go.

    .venv/bin/python bench/size_bench.py --sizes 1000,10000,100000 [--out bench/out]

Uses the synthetic brains of ``bench/recall_bench.py`` (built with the default local model when missing, cached
in --out) and SQLite's ``dbstat`` table: the file's bytes per memory, split into the vector lane (sqlite-vec's
tables), the keyword lane (FTS5's), the nodes table and every index. The file is checkpointed first (a WAL file
is not counted). Results are meant for docs/benchmarks.md, with the date and commit they ran on.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import recall_bench  # the bench folder is not a package: found through sys.path above


def breakdown(path: Path) -> dict[str, float]:
    from cerebro.db.engine import connect_raw

    conn = connect_raw(path, wal=False)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        memories = conn.execute("SELECT COUNT(*) FROM nodes").fetchone()[0]
        parts: dict[str, float] = {}
        for name, size in conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall():
            lane = (
                "vectors"
                if name.startswith("vec_nodes")
                else "keywords"
                if name.startswith("nodes_fts")
                else "nodes"
                if name == "nodes"
                else "indexes"
                if name.startswith(("idx_", "sqlite_autoindex_nodes"))
                else "other"
            )
            parts[lane] = parts.get(lane, 0.0) + size
        element = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'vec_nodes'").fetchone()[0]
    finally:
        conn.close()
    result = {lane: round(size / memories) for lane, size in sorted(parts.items())}
    result["file"] = round(path.stat().st_size / memories)
    result["memories"] = memories
    result["vector_column"] = element.split("embedding ")[1].split(" ")[0]  # type: ignore[assignment]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--out", default="bench/out")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    home = out / "home"
    for size in (int(s) for s in args.sizes.split(",")):
        path = out / f"brain-{size}.sqlite"
        if not path.exists():
            recall_bench.build(path, size, home)
        print(json.dumps({"size": size, "bytes_per_memory": breakdown(path)}))


if __name__ == "__main__":
    main()
