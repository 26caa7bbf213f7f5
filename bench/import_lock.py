"""How long an import holds the brain's write lock (ADR 0066): a jsonl export of N memories imported into a new brain.

    .venv/bin/python bench/import_lock.py [--memories 6000] [--provider local]
    cd /tmp && PYTHONPATH=/tmp/before /work/main/.venv/bin/python /work/main/bench/import_lock.py  # another package

Builds a brain of N memories (``bench/recall_bench.py``'s corpus) in a scratch folder, exports it as jsonl, imports
that into a new brain, and prints the seconds of the import's write transaction (``Handle.write``: what other writers
wait for) beside the whole import's (the embedding happens before the write). Prints JSON with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(1, str(Path(__file__).parent))

import recall_bench  # the bench folder is not a package: found through sys.path above


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=6000)
    parser.add_argument("--provider", default="local")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="import-lock-"))
    os.environ["CEREBRO_HOME"] = str(folder / "home")
    import cerebro
    from cerebro import Brain
    from cerebro.brain import handle

    rng = random.Random(1)
    items = [{"content": recall_bench.sentence(rng)} for _ in range(args.memories)]
    source, target, export = folder / "source.sqlite", folder / "target.sqlite", folder / "export.jsonl"
    Brain.init(source, embed_provider=args.provider)
    with Brain.open(source) as brain:
        brain.add_many(items, batch_size=256)
        export.write_text("\n".join(brain.export("jsonl")) + "\n")
    Brain.init(target, embed_provider=args.provider)
    held: list[float] = []
    write = handle.Handle.write

    def timed(self, work):  # noqa: ANN001, ANN202 - Handle.write, timed
        started = time.perf_counter()
        try:
            return write(self, work)
        finally:
            held.append(time.perf_counter() - started)

    handle.Handle.write = timed  # type: ignore[method-assign]
    load = os.getloadavg()
    with Brain.open(target) as brain:
        started = time.perf_counter()
        report = brain.import_file(export)
        total = time.perf_counter() - started
    result = {
        "package": str(Path(cerebro.__file__).parent),
        "memories": report["nodes_imported"],
        "write_lock_s": round(max(held), 3),
        "import_s": round(total, 3),
        "load_average_before": load,
        "load_average_after": os.getloadavg(),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
