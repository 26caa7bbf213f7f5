"""``cerebro mcp`` latency as an MCP client sees it: recall and remember round trips over stdio.

    .venv/bin/python bench/mcp_bench.py [--sizes 1000,10000] [--queries 100] [--writes 100] [--out bench/out]

For each size, a brain of that many memories on the default ``local`` model (recall_bench's synthetic corpus,
cached in --out as ``brain-N.sqlite`` and shared with recall_bench.py) is copied into a throwaway
``CEREBRO_HOME``; ``cerebro mcp --project`` runs over stdio under the official Python client
(``mcp.client.stdio`` + ``ClientSession``), and every time is the client's wall clock around ``call_tool``,
query embedding included:

- **recall**: Q distinct queries (3–4 content words), ``limit`` 10, after two warm-up calls;
- **remember**: W new memories, one a call (each also searches for near duplicates);
- **recall right after a remember**: the two back to back, the recall timed — it finds the warm vector index
  being rebuilt after the write;
- **recall 0.3 s after a remember**: as an agent would, thinking between calls — the rebuild is done;
- for reference, in this process on a copy of the same brain: the query embedding alone and ``Brain.recall``
  (warm, embedding included), interleaved with the MCP calls so that both see the same machine load.

Prints one JSON line per size, then a markdown table. The numbers depend on the machine and its load.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the cerebro CLI sets it for the server (cli/app.py)

import argparse
import json
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from recall_bench import build, percentile, query, sentence  # noqa: E402 - needs bench/ on sys.path (above)

if TYPE_CHECKING:
    from mcp import ClientSession


def stats(samples: list[float]) -> dict[str, float]:
    return {"p50": round(statistics.median(samples), 1), "p95": round(percentile(samples, 0.95), 1)}


async def measure(home: Path, project: Path, queries: list[str], writes: int, copy: Path) -> dict[str, Any]:
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    from cerebro import Brain

    reference = Brain.open(copy)
    reference.recall("warm up the model")
    reference.recall("warm up the index")

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "cerebro", "mcp", "--project", str(project)],
        env={"CEREBRO_HOME": str(home)},
    )
    rng = random.Random(3)

    async def timed(session: ClientSession, name: str, arguments: dict[str, Any]) -> float:
        started = time.perf_counter()
        result = await session.call_tool(name, arguments)
        elapsed = (time.perf_counter() - started) * 1000
        if result.is_error:
            raise RuntimeError(f"{name} failed: {result.content[0].text}")
        return elapsed

    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            for warm in ("warm up the model", "warm up the index"):
                await timed(session, "recall", {"query": warm, "limit": 10})
            recall, embed, library = [], [], []
            for q in queries:
                recall.append(await timed(session, "recall", {"query": q, "limit": 10}))
                started = time.perf_counter()
                reference._embed([q])
                embed.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                reference.recall(q, limit=10)
                library.append((time.perf_counter() - started) * 1000)
            remember, after, settled = [], [], []
            for i in range(writes):
                remember.append(await timed(session, "remember", {"content": sentence(rng), "importance": 0.5}))
                if i % 2 == 0:
                    after.append(await timed(session, "recall", {"query": queries[i % len(queries)], "limit": 10}))
                else:
                    await anyio.sleep(0.3)
                    settled.append(await timed(session, "recall", {"query": queries[i % len(queries)], "limit": 10}))
    reference.close()
    return {
        "recall_ms": stats(recall),
        "remember_ms": stats(remember),
        "recall_right_after_remember_ms": stats(after),
        "recall_0.3s_after_remember_ms": stats(settled),
        "in_process_embedding_ms": stats(embed),
        "in_process_brain_recall_ms": stats(library),
    }


def main() -> None:
    import anyio

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--writes", type=int, default=100)
    parser.add_argument("--out", default="bench/out")
    args = parser.parse_args()
    out = Path(args.out).resolve()
    (out / "home").mkdir(parents=True, exist_ok=True)
    rng = random.Random(7)
    queries = [query(rng) for _ in range(args.queries)]
    results: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "load_average": [round(x, 2) for x in os.getloadavg()],
        },
    }
    for size in (int(s) for s in args.sizes.split(",")):
        cached = out / f"brain-{size}.sqlite"
        if not cached.exists():
            os.environ["CEREBRO_HOME"] = str(out / "home")
            build(cached, size, out / "home")
        with tempfile.TemporaryDirectory() as scratch:
            home, project = Path(scratch) / "home", Path(scratch) / "project"
            project.mkdir()
            os.environ["CEREBRO_HOME"] = str(home)
            from cerebro import paths

            target = paths.project_brain_path(project)
            paths.ensure_private_dir(target.parent)
            shutil.copyfile(cached, target)
            copy = Path(scratch) / "reference.sqlite"
            shutil.copyfile(cached, copy)
            row = anyio.run(measure, home, project, queries, args.writes, copy)
        results[str(size)] = row
        print(json.dumps({size: row}), flush=True)
    print(
        "\n| memories | recall p50 / p95 | remember p50 / p95 | recall right after a write | recall 0.3 s after "
        "| in-process: embedding | in-process: Brain.recall |"
    )
    print("|---|---|---|---|---|---|---|")
    for size, row in results.items():
        if size == "machine":
            continue
        cells = [
            f"{row[k]['p50']} / {row[k]['p95']} ms"
            for k in (
                "recall_ms",
                "remember_ms",
                "recall_right_after_remember_ms",
                "recall_0.3s_after_remember_ms",
                "in_process_embedding_ms",
                "in_process_brain_recall_ms",
            )
        ]
        print(f"| {int(size):,} | " + " | ".join(cells) + " |")
    print(json.dumps(results["machine"]))


if __name__ == "__main__":
    main()
