"""MCP server benchmark: `cerebro mcp` side by side with peer memory servers, one client harness.

    make bench-peers    # once: the reference server (bench/peers/package-lock.json), mcp-memory-service-lite
                        # (bench/peers/requirements-lite.txt, a virtual environment of its own: bench/peers/lite) and
                        # basic-memory (bench/peers/requirements-basic-memory.txt; Python 3.12, its own: basic-memory)
    .venv/bin/python bench/mcp_peers_bench.py [--sizes 1000,10000] [--queries 100] [--timed-writes 1000]
                                              [--skip lite,basic-memory] [--basic-memory-max 10000]
                                              [--basic-memory-own-fts]

Every server runs over stdio under the official MCP Python client (``mcp.client.stdio`` + ``ClientSession``),
in the same event loop, each against its own throwaway data: cerebro a fresh ``CEREBRO_HOME`` and a project
made with ``cerebro init --skip-integration`` (the default ``local`` MiniLM provider), the reference server
(npm ``@modelcontextprotocol/server-memory``) a fresh ``MEMORY_FILE_PATH``, mcp-memory-service-lite a scratch
database and HOME (cerebro's own model file), basic-memory a scratch notes folder and configuration (one project,
keyword search: see ``BASIC_MEMORY``). All get the same items — ``bench/recall_bench.py``'s synthetic corpus —
and the same queries. A peer that is not installed is left out (logged).

For each size N:
- **Bulk load** of the first N - W items, not timed against each other: cerebro through ``Brain.add_many``
  in a child process into the brain ``cerebro init`` made (a copy is kept in --out and copied in on later
  runs: delete it after changing the corpus or the model), the reference server through its own batch path
  (``create_entities`` with 1,000 entities a call), mcp-memory-service-lite, which has no batch tool, through
  ``bench/lite_bulk_load.py`` (its own tool handler, model and storage, batched: the file ``memory_store`` one a
  call leaves, ~5× faster; also cached in --out) before its server starts, basic-memory through markdown files and
  its own ``reindex`` (its FTS5 table staged as a plain table meanwhile: see ``bulk_load_basic_memory``; cached in
  --out; ``--basic-memory-max`` bounds the sizes it runs at). At 1k with the default
  W there is nothing to bulk-load. Before anything is timed, the servers' own background work (indexing, warm-up)
  is waited out.
- **Timed writes**: the last W items one per call — cerebro ``remember`` {content, type, importance}, the
  reference ``create_entities`` with one entity {name, entityType: the type, observations: [content]}, lite
  ``memory_store``, basic-memory ``write_note`` — in blocks of 50 calls back to back, the servers taking turns
  block by block (the order reversed every other block).
  writes/s = W / the blocks' summed wall time; per-call p50/p95 as the client sees it.
- **Ping**: 50 ``ping`` round trips each, alternating: the transport's and SDK's floor, no tool run.
- **Search**: Q queries (recall_bench's: 3–4 content words) after two warm-up queries each, in rounds: round
  r sends query r to every server, the order reversed in odd rounds — cerebro ``recall`` {query, limit: 10},
  the reference ``search_nodes`` {query}, lite ``memory_search`` (hybrid, 10), basic-memory ``search_notes``
  (text, 10). p50/p95 per server, the median of the per-round ratios cerebro / peer, and how many queries
  return anything (the reference search is a case-insensitive substring match of the whole query). The same
  again for ticket ids (``HS-042``: an exact lookup; only some of the ids occur in the corpus — 9 of 30 at 1k, 27
  at 10k — and a semantic search answers the others too), and cerebro's queries once more back to back,
  with no peer's call between them.
- **MCP vs CLI**: the first C queries as a ``cerebro recall -l 10 "query"`` process each (after two warm-up
  runs), then the same C through the open MCP session, back to back; wall p50 of each. The CLI's recalls
  commit (access counts), so the server's first call after them reloads its caches: timed on its own.

Prints a JSON line per size and a markdown table; the load average, the machine and the CPU that other
processes used during each phase (``foreign_cpu_cores``: should be ~0 for numbers worth publishing) are logged.
On a shared machine, ``--quiet-retries K`` waits for it to be idle before each size and measures a size again
(up to K times) when other processes used more than 0.1 cores during one of its phases.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
# the shared synthetic corpus
from recall_bench import TYPES, percentile, query, sentence  # noqa: E402 - needs bench/ on sys.path (above)

if TYPE_CHECKING:
    from mcp import ClientSession

CEREBRO = str(Path(sys.executable).with_name("cerebro"))
REFERENCE_PACKAGE = BENCH / "peers" / "node_modules" / "@modelcontextprotocol" / "server-memory"
REFERENCE_ENTRY = REFERENCE_PACKAGE / "dist" / "index.js"
# mcp-memory-service-lite (PyPI), in a virtual environment of its own (make bench-peers): sqlite-vec + FTS5 and the
# same int8 MiniLM file as cerebro's local model, served from a scratch HOME where it looks for it (no download).
LITE = BENCH / "peers" / "lite" / "bin" / "memory"
LITE_MODEL_DIR = Path(".cache") / "mcp_memory" / "onnx_models" / "all-MiniLM-L6-v2" / "onnx"
# basic-memory (PyPI; Python >= 3.12, its own virtual environment): markdown notes indexed in SQLite, searched by
# keyword (FTS5) — make bench-peers installs it without sqlite-vec, so its vector lane (fastembed's bge-small, a
# download) is off on every machine, as it is anyway under a Python that cannot load SQLite extensions.
BASIC_MEMORY = BENCH / "peers" / "basic-memory" / "bin" / "basic-memory"
WRITE_BLOCK = 50
BULK_CHUNK = 1_000
RECALL_LIMIT = 10
FOREIGN_LIMIT = 0.1  # cores used by other processes during a phase, above which a size counts as disturbed


def items_for(size: int) -> list[dict[str, Any]]:
    """The corpus of ``recall_bench.build`` (same seed, same order): identical items for both servers."""
    rng = random.Random(size)
    return [
        {"content": sentence(rng), "type": rng.choice(TYPES), "importance": round(rng.uniform(0.1, 0.9), 2)}
        for _ in range(size)
    ]


def entity(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"name": f"m{index:06d}", "entityType": item["type"], "observations": [item["content"]]}


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')} load {load_average()}] {message}", file=sys.stderr, flush=True)


def machine() -> dict[str, Any]:
    def first(path: str, key: str) -> str:
        try:
            for line in Path(path).read_text().splitlines():
                if line.startswith(key):
                    return line.split(":", 1)[1].strip()
        except OSError:
            pass
        return "?"

    from importlib.metadata import version

    node = subprocess.run(["node", "--version"], check=False, capture_output=True, text=True).stdout.strip()
    reference = json.loads((REFERENCE_PACKAGE / "package.json").read_text())["version"]
    return {
        "cpu": first("/proc/cpuinfo", "model name"),
        "cpu_count": os.cpu_count(),
        "memory": first("/proc/meminfo", "MemTotal"),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "node": node,
        "mcp_python_sdk": version("mcp"),
        "cerebro": version("cerebro-memory"),
        "server_memory": reference,
        "mcp_memory_service_lite": peer_version(LITE, "mcp-memory-service-lite"),
        "basic_memory": peer_version(BASIC_MEMORY, "basic-memory"),
        "load_average_start": load_average(),
    }


def peer_version(entry: Path, distribution: str) -> str | None:
    if not entry.is_file():
        return None
    program = f"from importlib.metadata import version; print(version({distribution!r}))"
    done = subprocess.run([str(entry.with_name("python")), "-c", program], check=False, capture_output=True, text=True)
    return done.stdout.strip() or None


class ForeignCpu:
    """CPU that processes outside this benchmark's own tree (itself, the servers, the CLI runs) used meanwhile,
    in cores on average: /proc/stat's busy time less the tree's. Near 0 means the numbers are the servers'
    alone; other work on the machine shows up here."""

    def __init__(self) -> None:
        self.tick = os.sysconf("SC_CLK_TCK")
        self.start = self._sample()

    @staticmethod
    def _busy() -> int:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return sum(fields) - fields[3] - fields[4]  # less idle and iowait

    @staticmethod
    def _tree() -> int:
        """utime + stime (+ reaped children's) of this process and every live descendant."""
        parents: dict[int, int] = {}
        times: dict[int, int] = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
            times[int(entry.name)] = sum(int(x) for x in fields[11:15])
        mine, frontier = {os.getpid()}, [os.getpid()]
        while frontier:
            pid = frontier.pop()
            children = [child for child, parent in parents.items() if parent == pid and child not in mine]
            mine.update(children)
            frontier += children
        return sum(times.get(pid, 0) for pid in mine)

    def _sample(self) -> tuple[float, int, int]:
        return time.perf_counter(), self._busy(), self._tree()

    def cores(self) -> float:
        """Since the last call (or creation)."""
        now = self._sample()
        (t0, busy0, tree0), (t1, busy1, tree1) = self.start, now
        self.start = now
        return round(max(0, (busy1 - busy0) - (tree1 - tree0)) / self.tick / (t1 - t0), 2)


def wait_until_idle(limit_s: float, window_s: float = 10.0, windows: int = 3) -> bool:
    """Until the whole machine used < 0.1 cores for ``windows`` windows in a row (this process idles meanwhile);
    False after ``limit_s``."""
    deadline, quiet = time.monotonic() + limit_s, 0
    while time.monotonic() < deadline:
        before = ForeignCpu._busy()
        time.sleep(window_s)
        quiet = quiet + 1 if (ForeignCpu._busy() - before) / os.sysconf("SC_CLK_TCK") / window_s < 0.1 else 0
        if quiet >= windows:
            return True
    return False


async def settle(limit_s: float = 300, window_s: float = 0.5, quiet_windows: int = 3) -> float:
    """Until the servers (this process's descendants) have used < 0.05 cores for ``quiet_windows`` windows in a row
    (1.5 s: longer than basic-memory's 1 s wait before it indexes a changed file): work a server does on its own —
    indexing after start-up or after its writes have been answered, loading a model — is not timed against the
    others. Seconds waited (``limit_s`` when it never went quiet: logged)."""
    import anyio

    started = time.monotonic()
    quiet = 0
    while time.monotonic() - started < limit_s:
        before = ForeignCpu._tree()
        await anyio.sleep(window_s)
        used = ForeignCpu._tree() - before  # negative when a process of the tree ended meanwhile: not quiet
        quiet = quiet + 1 if 0 <= used / os.sysconf("SC_CLK_TCK") / window_s < 0.05 else 0
        if quiet >= quiet_windows:
            return time.monotonic() - started
    log(f"the servers were still busy after {limit_s:.0f} s: measuring anyway")
    return limit_s


def stats_ms(samples: list[float]) -> dict[str, float]:
    return {"p50": round(statistics.median(samples), 1), "p95": round(percentile(samples, 0.95), 1)}


# ------------------------------------------------------------------------------------------------- servers


class Server:
    """One MCP server over stdio, driven through the official client session."""

    def __init__(self, name: str, session: ClientSession) -> None:
        self.name = name
        self.session = session

    async def call(self, tool: str, arguments: dict[str, Any]) -> tuple[float, Any]:
        """(client-side wall ms, structured content) of one tool call."""
        started = time.perf_counter()
        result = await self.session.call_tool(tool, arguments, read_timeout_seconds=600)
        elapsed = (time.perf_counter() - started) * 1000
        if result.is_error:
            text = result.content[0].text if result.content else result
            raise RuntimeError(f"{self.name} {tool}: {text}")
        return elapsed, result.structured_content or {}


class Cerebro(Server):
    async def write(self, index: int, item: dict[str, Any]) -> float:
        return (await self.call("remember", item))[0]

    async def search(self, text: str) -> tuple[float, int]:
        elapsed, data = await self.call("recall", {"query": text, "limit": RECALL_LIMIT})
        return elapsed, len(data.get("results", []))


class Lite(Server):
    """mcp-memory-service-lite: ``memory_store`` (a conversation id, so its semantic de-duplication lets every
    item in, as cerebro's remember does) and ``memory_search`` in its hybrid mode (semantic + keyword)."""

    async def write(self, index: int, item: dict[str, Any]) -> float:
        arguments = {"content": item["content"], "metadata": {"type": item["type"]}, "conversation_id": "bench"}
        return (await self.call("memory_store", arguments))[0]

    async def search(self, text: str) -> tuple[float, int]:
        """It answers in text only: "Found N memories (mode: hybrid) …" (or "No memories found …")."""
        import re

        started = time.perf_counter()
        arguments = {"query": text, "mode": "hybrid", "limit": RECALL_LIMIT}
        result = await self.session.call_tool("memory_search", arguments, read_timeout_seconds=600)
        elapsed = (time.perf_counter() - started) * 1000
        answer = result.content[0].text if result.content else ""
        if result.is_error:
            raise RuntimeError(f"{self.name} memory_search: {answer}")
        found = re.match(r"Found (\d+) memor", answer)
        return elapsed, int(found.group(1)) if found else 0


def lite_env(scratch: Path) -> dict[str, str]:
    """A scratch HOME holding cerebro's own model file and tokenizer where the peer looks for its model."""
    import shutil

    from cerebro.embed import local

    home = scratch / "lite-home"
    model_dir = home / LITE_MODEL_DIR
    model_dir.mkdir(parents=True)
    shutil.copyfile(local.model_path(), model_dir / "model.onnx")
    shutil.copyfile(local.TOKENIZER_PATH, model_dir / "tokenizer.json")
    return {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", ""),
        "MCP_MEMORY_STORAGE_BACKEND": "sqlite_vec",
        "MCP_MEMORY_SQLITE_PATH": str(scratch / "lite.db"),
        "MCP_MEMORY_ONNX_ALLOW_DOWNLOAD": "0",
        "PYTHONPATH": str(BENCH / "peers" / "lite-site"),  # sqlean.py as its sqlite3 (see sitecustomize.py there)
    }


class BasicMemory(Server):
    """basic-memory: ``write_note`` (one markdown file a memory, the type as its note type) and ``search_notes`` by
    keyword (``search_type: text``), 10 a page, its JSON output."""

    async def write(self, index: int, item: dict[str, Any]) -> float:
        arguments = {
            "title": f"m{index:06d}",
            "content": item["content"],
            "directory": "bench",
            "note_type": item["type"],
        }
        return (await self.call("write_note", arguments))[0]

    async def search(self, text: str) -> tuple[float, int]:
        arguments = {"query": text, "page_size": RECALL_LIMIT, "search_type": "text", "output_format": "json"}
        elapsed, data = await self.call("search_notes", arguments)
        result = data.get("result")
        if not isinstance(result, dict):  # guidance or an error as text, where a page of results was asked for
            raise RuntimeError(f"{self.name} search_notes answered {str(result)[:200]!r}")
        return elapsed, len(result.get("results", []))


def basic_memory_env(scratch: Path) -> dict[str, str]:
    """Its notes, configuration and index in the scratch folder (one project, "main")."""
    return {
        "HOME": str(scratch / "basic-memory-home"),
        "PATH": os.environ.get("PATH", ""),
        "BASIC_MEMORY_HOME": str(scratch / "basic-memory-notes"),
        "BASIC_MEMORY_CONFIG_DIR": str(scratch / "basic-memory-config"),
        "BASIC_MEMORY_NO_PROMOS": "1",
        "BASIC_MEMORY_AUTO_UPDATE": "false",  # no update check at start-up (it cannot reach PyPI here anyway)
    }


class Reference(Server):
    async def write(self, index: int, item: dict[str, Any]) -> float:
        return (await self.call("create_entities", {"entities": [entity(index, item)]}))[0]

    async def search(self, text: str) -> tuple[float, int]:
        elapsed, data = await self.call("search_nodes", {"query": text})
        return elapsed, len(data.get("entities", []))


async def open_server(
    stack: AsyncExitStack,
    kind: type[Server],
    name: str,
    command: str,
    args: list[str],
    env: dict[str, str],
    err: TextIO,
) -> Server:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=command, args=args, env=env)
    read, write = await stack.enter_async_context(stdio_client(params, errlog=err))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return kind(name, session)


# ------------------------------------------------------------------------------------------------- bulk load


def bulk_load_cerebro(items_path: Path, project: Path, cache: Path) -> None:
    """In a child process (``--bulk-load``): ``Brain.add_many`` of the items into the project's new brain, as
    recall_bench builds brains, then a copy of it kept in ``cache``; when ``cache`` exists, it is copied in
    instead (the same items: the corpus is deterministic)."""
    import shutil

    from cerebro import Brain, paths

    target = paths.project_brain_path(project)
    started = time.perf_counter()
    if cache.is_file():
        for extra in ("-wal", "-shm"):
            target.with_name(target.name + extra).unlink(missing_ok=True)
        shutil.copyfile(cache, target)
        print(json.dumps({"cached": True}))
        return
    items = [json.loads(line) for line in items_path.read_text().splitlines()]
    with Brain.open(target) as brain:
        brain.add_many(items, batch_size=256)
    seconds = time.perf_counter() - started
    if not any(target.with_name(target.name + extra).exists() for extra in ("-wal", "-shm")):
        shutil.copyfile(target, cache.with_suffix(".tmp"))
        cache.with_suffix(".tmp").chmod(0o600)  # a brain's copy: private, as the brain is
        cache.with_suffix(".tmp").replace(cache)
    print(json.dumps({"cached": False, "items": len(items), "seconds": round(seconds, 2)}))


def bulk_load_lite(scratch: Path, env: dict[str, str], items: list[dict[str, Any]], cache: Path) -> float | None:
    """The lite service's database as ``memory_store`` one a call would leave it (``bench/lite_bulk_load.py``: its
    own handler, model and storage, batched), before its server starts; a copy is kept in ``cache`` and copied in on
    later runs (the corpus is deterministic). Memories/s of the load, None when copied."""
    import shutil

    target = Path(env["MCP_MEMORY_SQLITE_PATH"])
    if cache.is_file():
        log(f"lite bulk load of {len(items)} items: copied from {cache}")
        shutil.copyfile(cache, target)
        return None
    log(f"lite bulk load of {len(items)} items (bench/lite_bulk_load.py: its own handler and storage, batched)")
    items_path = scratch / "lite-bulk.jsonl"
    items_path.write_text("".join(json.dumps(item) + "\n" for item in items))
    started = time.perf_counter()
    done = subprocess.run(
        [str(LITE.with_name("python")), str(BENCH / "lite_bulk_load.py"), str(items_path)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    report = json.loads(done.stdout.strip().splitlines()[-1])
    if report["stored"] != len(items):
        raise RuntimeError(f"lite bulk load stored {report['stored']} of {len(items)} items")
    for extra in ("-wal", "-shm"):
        if target.with_name(target.name + extra).exists():
            return len(items) / seconds  # not checkpointed: not a file to cache
    shutil.copyfile(target, cache.with_suffix(".tmp"))
    cache.with_suffix(".tmp").chmod(0o600)  # a brain's copy: private, as the brain is
    cache.with_suffix(".tmp").replace(cache)
    return len(items) / seconds


def bulk_load_basic_memory(
    env: dict[str, str], items: list[dict[str, Any]], cache: Path, *, stage_fts: bool = True
) -> float | None:
    """basic-memory's batch path: the notes written as the markdown files ``write_note`` leaves, then its own
    ``reindex --search`` (files are its source of truth). The load is built in a folder beside ``cache`` that
    survives an interrupted run — the next run writes the notes still missing and indexes only what is not indexed
    yet, wherever --out has moved the folder to — and becomes ``cache`` when complete; ``cache`` is copied in, the
    project's path rewritten where basic-memory records it (config.json, the project table). Like the other caches it
    is named by the size alone: delete it after changing the corpus.

    ``stage_fts``: its reindex runs with its FTS5 table staged as a plain table (:func:`stage_search_index`): each
    note's index update first deletes the note's old rows ``WHERE entity_id = …`` and ``WHERE permalink = … AND type
    = …``, columns FTS5 cannot look up — a scan of the whole index per note, so its own reindex of N notes is
    quadratic (~5 notes/s at 15,000 notes here, slowing: more than ten hours at 100k). The staged table has indexes on
    those columns; the rows it ends with are copied into its FTS5 table, made with its own statement. The rows are
    the ones its own reindex leaves (checked at 2,000 notes: the same rows, the same search answers; benchmarks.md).
    Memories/s of the load when it ran in one go on its own FTS5 table, else None."""
    import shutil

    build = cache.with_name(cache.name + ".build")
    if not cache.is_dir():
        resumed = build.is_dir()
        log(f"basic-memory bulk load of {len(items)} items (markdown files, then its reindex; {build})")
        staged = basic_memory_env(build)
        config = Path(staged["BASIC_MEMORY_CONFIG_DIR"])
        notes = Path(staged["BASIC_MEMORY_HOME"]) / "bench"
        aside = build / "notes-aside"  # notes an interrupted run wrote, out of its folder while its database is made
        if aside.is_dir():
            notes.parent.mkdir(parents=True, exist_ok=True)
            aside.replace(notes)
        notes.mkdir(parents=True, exist_ok=True)
        reindex = [str(BASIC_MEMORY), "reindex", "--search"]
        if stage_fts and not (config / "memory.db").exists():  # its database, made by its migrations, before notes
            notes.replace(aside)
            subprocess.run(reindex, env=staged, check=True, capture_output=True)
            aside.replace(notes)
        for index, item in enumerate(items):
            name = f"m{index:06d}"
            if not (notes / f"{name}.md").exists():  # written whole or not at all: an interrupt leaves no half note
                front = f"---\ntitle: {name}\ntype: {item['type']}\npermalink: main/bench/{name}\n---\n\n"
                (build / "note.tmp").write_text(front + item["content"])
                os.replace(build / "note.tmp", notes / f"{name}.md")
        if (config / "memory.db").exists():  # a build resumed, maybe in another folder than it began in
            _point_project(config, Path(staged["BASIC_MEMORY_HOME"]))
        if stage_fts:
            stage_search_index(config / "memory.db")
        started = time.perf_counter()
        subprocess.run(reindex, env=staged, check=True, capture_output=True)
        seconds = time.perf_counter() - started
        restore_search_index(config / "memory.db")  # also after a staged run that was interrupted
        indexed = _basic_memory_notes(config)
        if indexed != (len(items), len(items)):
            raise RuntimeError(
                f"basic-memory reindex indexed {indexed} (entities, note contents) of {len(items)} notes"
            )
        build.replace(cache)
        rate = None if resumed or stage_fts else len(items) / seconds
    else:
        log(f"basic-memory bulk load of {len(items)} items: copied from {cache}")
        rate = None
    notes, config = Path(env["BASIC_MEMORY_HOME"]), Path(env["BASIC_MEMORY_CONFIG_DIR"])
    shutil.copytree(cache / "basic-memory-notes", notes)  # copy2: modification times kept, so nothing looks changed
    shutil.copytree(cache / "basic-memory-config", config)
    _point_project(config, notes)
    return rate


def _point_project(config: Path, notes: Path) -> None:
    """basic-memory's project "main" at ``notes``, where it records its path (config.json, the project table): a copy
    of a cache, or a build folder moved elsewhere (--out on another disk) and resumed there."""
    import sqlite3
    from contextlib import closing

    settings = json.loads((config / "config.json").read_text())
    settings["projects"]["main"]["path"] = str(notes)
    (config / "config.json").write_text(json.dumps(settings, indent=2))
    with closing(sqlite3.connect(config / "memory.db")) as db, db:
        db.execute("UPDATE project SET path = ? WHERE name = 'main'", (str(notes),))


_STAGED = "bench_staged_search_index"  # the FTS5 table's own statement, kept in its database while it is staged


def stage_search_index(database: Path) -> None:
    """basic-memory's FTS5 ``search_index`` as a plain table with the same columns, rows and rowids, and indexes on
    the columns its index updates delete by (entity_id; permalink, type). Its statements run on either. Nothing
    happens when it is staged already; a restore that was interrupted is finished first."""
    import sqlite3
    from contextlib import closing

    with closing(sqlite3.connect(database, isolation_level=None)) as db:
        restoring = _table(db, "search_index_plain")
    if restoring:
        restore_search_index(database)
    with closing(sqlite3.connect(database, isolation_level=None)) as db:
        if _table(db, _STAGED):
            return
        found = db.execute("SELECT sql FROM sqlite_master WHERE name = 'search_index'").fetchone()
        if found is None:
            raise RuntimeError(f"{database} has no search_index table: delete the build folder and run again")
        (statement,) = found
        columns = ", ".join(row[1] for row in db.execute("PRAGMA table_info(search_index)"))
        db.execute("BEGIN IMMEDIATE")
        db.execute(f"CREATE TABLE {_STAGED} (sql TEXT)")
        db.execute(f"INSERT INTO {_STAGED} VALUES (?)", (statement,))
        db.execute(f"CREATE TABLE search_index_plain ({columns})")
        db.execute(f"INSERT INTO search_index_plain (rowid, {columns}) SELECT rowid, {columns} FROM search_index")
        db.execute("DROP TABLE search_index")
        db.execute("ALTER TABLE search_index_plain RENAME TO search_index")
        db.execute("CREATE INDEX bench_search_index_entity ON search_index (entity_id)")
        db.execute("CREATE INDEX bench_search_index_key ON search_index (permalink, type)")
        db.execute("COMMIT")


def restore_search_index(database: Path, batch: int = 32) -> None:
    """The staged rows back in an FTS5 table made by basic-memory's own statement, same rowids, in order, ``batch``
    rows a transaction (its indexing batches' size, so the index's segments build up as its own updates build them).
    An interrupted restore goes on from the rows it copied (``search_index_plain`` still there)."""
    import sqlite3
    from contextlib import closing

    with closing(sqlite3.connect(database, isolation_level=None)) as db:
        row = db.execute(f"SELECT sql FROM {_STAGED}").fetchone() if _table(db, _STAGED) else None
        if row is None:
            return
        if not _table(db, "search_index_plain"):
            db.execute("BEGIN IMMEDIATE")
            db.execute("DROP INDEX bench_search_index_entity")
            db.execute("DROP INDEX bench_search_index_key")
            db.execute("ALTER TABLE search_index RENAME TO search_index_plain")
            db.execute(row[0])
            db.execute("COMMIT")
        columns = ", ".join(column[1] for column in db.execute("PRAGMA table_info(search_index_plain)"))
        (copied,) = db.execute("SELECT COALESCE(max(rowid), -1) FROM search_index").fetchone()
        rowids = [
            r[0] for r in db.execute("SELECT rowid FROM search_index_plain WHERE rowid > ? ORDER BY rowid", (copied,))
        ]
        for start in range(0, len(rowids), batch):
            db.execute("BEGIN IMMEDIATE")
            db.execute(
                f"INSERT INTO search_index (rowid, {columns}) SELECT rowid, {columns} FROM search_index_plain"
                " WHERE rowid BETWEEN ? AND ? ORDER BY rowid",
                (rowids[start], rowids[min(start + batch, len(rowids)) - 1]),
            )
            db.execute("COMMIT")
        db.execute("BEGIN IMMEDIATE")
        db.execute("DROP TABLE search_index_plain")
        db.execute(f"DROP TABLE {_STAGED}")
        db.execute("COMMIT")


def _table(db: Any, name: str) -> bool:  # noqa: ANN401 - a sqlite3 connection
    return db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None


def _basic_memory_notes(config: Path) -> tuple[int, int]:
    """(entities, note contents) in basic-memory's index."""
    import sqlite3
    from contextlib import closing

    with closing(sqlite3.connect(config / "memory.db")) as db:
        counts = [db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in ("entity", "note_content")]
        return int(counts[0]), int(counts[1])


def prepare_cerebro(
    scratch: Path, items: list[dict[str, Any]], cache: Path
) -> tuple[dict[str, str], Path, float | None]:
    home, project = scratch / "cerebro-home", scratch / "project"
    project.mkdir()
    env = {**os.environ, "CEREBRO_HOME": str(home)}
    env.pop("CLAUDE_PROJECT_DIR", None)
    subprocess.run(
        [CEREBRO, "init", "--skip-integration", "-p", str(project)], env=env, check=True, capture_output=True
    )
    rate = None
    if items:
        items_path = scratch / "bulk.jsonl"
        items_path.write_text("".join(json.dumps(item) + "\n" for item in items))
        done = subprocess.run(
            [
                sys.executable,
                __file__,
                "--bulk-load",
                str(items_path),
                "--project",
                str(project),
                "--cache",
                str(cache),
            ],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        report = json.loads(done.stdout.strip().splitlines()[-1])
        rate = None if report["cached"] else report["items"] / report["seconds"]
    return {"CEREBRO_HOME": str(home)}, project, rate


# ------------------------------------------------------------------------------------------------- phases


async def timed_writes(servers: list[Server], first: int, items: list[dict[str, Any]]) -> dict[str, Any]:
    """Blocks of WRITE_BLOCK calls, the servers taking turns; after each block the servers settle, so that what one
    does after its answers (basic-memory indexes the files it wrote) does not land in the next server's block."""
    latencies: dict[str, list[float]] = {s.name: [] for s in servers}
    walls = dict.fromkeys(latencies, 0.0)
    settled = 0.0
    for block, start in enumerate(range(0, len(items), WRITE_BLOCK)):
        chunk = items[start : start + WRITE_BLOCK]
        for server in servers if block % 2 == 0 else servers[::-1]:
            started = time.perf_counter()
            for offset, item in enumerate(chunk):
                latencies[server.name].append(await server.write(first + start + offset, item))
            walls[server.name] += time.perf_counter() - started
            settled += await settle()
    return {
        **{
            name: {
                "writes": len(items),
                "writes_per_s": round(len(items) / walls[name], 1),
                **stats_ms(latencies[name]),
            }
            for name in latencies
        },
        "settle_s": round(settled, 1),
    }


async def rounds(servers: list[Server], queries: list[str]) -> dict[str, Any]:
    """Query r to every server, the order alternating by round; per-server p50/p95, hits, the ratio."""
    samples: dict[str, list[float]] = {s.name: [] for s in servers}
    answered = dict.fromkeys(samples, 0)
    for r, text in enumerate(queries):
        for server in servers if r % 2 == 0 else servers[::-1]:
            elapsed, hits = await server.search(text)
            samples[server.name].append(elapsed)
            answered[server.name] += hits > 0
    out: dict[str, Any] = {
        name: {**stats_ms(samples[name]), "answered": f"{answered[name]}/{len(queries)}"} for name in samples
    }
    a = servers[0].name
    for other in servers[1:]:
        ratios = [x / y for x, y in zip(samples[a], samples[other.name], strict=True)]
        out[f"ratio_{a}_over_{other.name}_p50"] = round(statistics.median(ratios), 2)
    out["raw_ms"] = {name: [round(x, 2) for x in values] for name, values in samples.items()}
    return out


async def pings(servers: list[Server], count: int) -> dict[str, Any]:
    """The protocol's floor: ``ping`` round trips (no tool runs), alternating servers."""
    samples: dict[str, list[float]] = {s.name: [] for s in servers}
    for r in range(count):
        for server in servers if r % 2 == 0 else servers[::-1]:
            started = time.perf_counter()
            await server.session.send_ping()
            samples[server.name].append((time.perf_counter() - started) * 1000)
    return {name: stats_ms(values) for name, values in samples.items()}


def cli_recall(env: dict[str, str], project: Path, text: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [CEREBRO, "recall", "-p", str(project), "-l", str(RECALL_LIMIT), text], env=env, check=True, capture_output=True
    )
    return (time.perf_counter() - started) * 1000


async def mcp_vs_cli(cerebro: Cerebro, env: dict[str, str], project: Path, queries: list[str]) -> dict[str, Any]:
    """The same queries as ``cerebro recall`` processes, then through the open MCP session. In blocks, not
    alternating: each CLI recall commits (access counts), so the server's next call reopens what it had
    cached; that first call after the CLI block is reported on its own."""
    full_env = {**os.environ, **env}
    full_env.pop("CLAUDE_PROJECT_DIR", None)
    for text in queries[:2]:  # warm-up runs (page cache, the optimised model graph)
        cli_recall(full_env, project, text)
    cli = [cli_recall(full_env, project, text) for text in queries]
    first = (await cerebro.search("warm up after the CLI"))[0]
    mcp = [(await cerebro.search(text))[0] for text in queries]
    return {
        "queries": len(queries),
        "mcp_p50": round(statistics.median(mcp), 1),
        "cli_p50": round(statistics.median(cli), 1),
        "mcp_first_after_cli": round(first, 1),
        "raw_ms": {"mcp": [round(x, 2) for x in mcp], "cli": [round(x, 1) for x in cli]},
    }


def bench_size(size: int, opts: argparse.Namespace, queries: list[str], tickets: list[str]) -> dict[str, Any]:
    items = items_for(size)
    timed = min(size, opts.timed_writes)
    bulk, tail = items[: size - timed], items[size - timed :]
    row: dict[str, Any] = {"memories": size, "bulk_loaded": len(bulk), "timed_writes": timed}
    with tempfile.TemporaryDirectory(prefix="cerebro-mcp-bench-") as tmp:
        scratch = Path(tmp)
        cache = Path(opts.out).resolve() / f"mcp-peers-brain-{size}-bulk{len(bulk)}.sqlite"
        how = "copied from " + str(cache) if cache.is_file() else "Brain.add_many in a child process, then cached"
        log(f"{size}: cerebro init + bulk load of {len(bulk)} items ({how})")
        cerebro_env, project, cerebro_bulk_rate = prepare_cerebro(scratch, bulk, cache)
        if cerebro_bulk_rate is not None:
            row["cerebro_bulk_add_many_per_s"] = round(cerebro_bulk_rate, 1)
        with (
            open(scratch / "cerebro-mcp.log", "w") as cerebro_log,
            open(scratch / "reference-mcp.log", "w") as ref_log,
            open(scratch / "lite-mcp.log", "w") as lite_log,
            open(scratch / "basic-memory-mcp.log", "w") as basic_memory_log,
        ):
            import anyio

            logs = (cerebro_log, ref_log, lite_log, basic_memory_log)
            anyio.run(measure, row, opts, scratch, cerebro_env, project, bulk, tail, queries, tickets, logs)
    return row


async def measure(
    row: dict[str, Any],
    opts: argparse.Namespace,
    scratch: Path,
    cerebro_env: dict[str, str],
    project: Path,
    bulk: list[dict[str, Any]],
    tail: list[dict[str, Any]],
    queries: list[str],
    tickets: list[str],
    logs: tuple[TextIO, TextIO, TextIO, TextIO],
) -> None:
    size = row["memories"]
    async with AsyncExitStack() as stack:
        cerebro = await open_server(
            stack, Cerebro, "cerebro", CEREBRO, ["mcp", "--project", str(project)], cerebro_env, logs[0]
        )
        reference = await open_server(
            stack,
            Reference,
            "reference",
            "node",
            [str(REFERENCE_ENTRY)],
            {"MEMORY_FILE_PATH": str(scratch / "memory.jsonl")},
            logs[1],
        )
        servers: list[Server] = [cerebro, reference]
        lite = None
        if LITE.is_file() and "lite" not in opts.skip:
            env = lite_env(scratch)
            if bulk:
                rate = bulk_load_lite(scratch, env, bulk, Path(opts.out).resolve() / f"mcp-peers-lite-{size}.db")
                if rate is not None:
                    row["lite_bulk_load_per_s"] = round(rate, 1)
            lite = await open_server(stack, Lite, "lite", str(LITE), ["server"], env, logs[2])
            servers.append(lite)
        elif "lite" in opts.skip:
            log("mcp-memory-service-lite left out (--skip)")
        else:
            log("mcp-memory-service-lite is not installed (make bench-peers): measured without it")
        if "basic-memory" in opts.skip:
            log("basic-memory left out (--skip)")
        elif BASIC_MEMORY.is_file() and size <= opts.basic_memory_max:
            env = basic_memory_env(scratch)
            if bulk:
                cache = Path(opts.out).resolve() / f"mcp-peers-basic-memory-{size}"
                rate = bulk_load_basic_memory(env, bulk, cache, stage_fts=not opts.basic_memory_own_fts)
                if rate is not None:
                    row["basic_memory_bulk_reindex_per_s"] = round(rate, 1)
            args = ["mcp", "--project", "main"]
            servers.append(await open_server(stack, BasicMemory, "basic_memory", str(BASIC_MEMORY), args, env, logs[3]))
        elif BASIC_MEMORY.is_file():
            log(f"{size}: basic-memory left out above --basic-memory-max {opts.basic_memory_max}")
        else:
            log("basic-memory is not installed (make bench-peers): measured without it")
        if bulk:
            log(f"{size}: reference bulk load of {len(bulk)} items (create_entities, {BULK_CHUNK} a call)")
            started = time.perf_counter()
            for start in range(0, len(bulk), BULK_CHUNK):
                chunk = [entity(start + i, item) for i, item in enumerate(bulk[start : start + BULK_CHUNK])]
                await reference.call("create_entities", {"entities": chunk})
            row["reference_bulk_create_entities_per_s"] = round(len(bulk) / (time.perf_counter() - started), 1)
        for server in servers:  # the first call waits for cerebro's warm-up (model, index); not timed
            await server.search("warm up")
        row["settle_s"] = {"start": round(await settle(), 1)}
        row["ping"] = await pings(servers, 50)
        log(f"{size}: {len(tail)} timed writes, one per call, blocks of {WRITE_BLOCK} alternating")
        foreign = ForeignCpu()
        row["writes"] = await timed_writes(servers, len(bulk), tail)
        row["foreign_cpu_cores"] = {"writes": foreign.cores()}
        row["settle_s"]["after_writes"] = round(await settle(), 1)  # what a server does after its answers is not timed
        for server in servers:
            await server.search("warm up")
            await server.search("warm up again")
        log(f"{size}: {len(queries)} query rounds")
        row["load_average"] = load_average()
        foreign.cores()
        row["search"] = await rounds(servers, queries)
        log(f"{size}: {len(tickets)} ticket-id rounds")
        row["ticket_search"] = await rounds(servers, tickets)
        log(f"{size}: cerebro recall back to back")
        back = [(await cerebro.search(text))[0] for text in queries]
        row["cerebro_recall_back_to_back"] = {**stats_ms(back), "raw_ms": [round(x, 2) for x in back]}
        row["foreign_cpu_cores"]["searches"] = foreign.cores()
        log(f"{size}: cerebro MCP vs CLI, {opts.cli_queries} queries")
        row["mcp_vs_cli"] = await mcp_vs_cli(cerebro, cerebro_env, project, queries[: opts.cli_queries])
        row["foreign_cpu_cores"]["mcp_vs_cli"] = foreign.cores()
        row["load_average_end"] = load_average()
        if max(row["foreign_cpu_cores"].values()) > FOREIGN_LIMIT:
            log(
                f"{size}: WARNING: other processes used CPU meanwhile ({row['foreign_cpu_cores']} cores): "
                "these numbers are not the servers' alone"
            )


def without_raw(value: object) -> object:
    """The row without its per-call samples (kept in mcp_peers.json)."""
    if isinstance(value, dict):
        return {k: without_raw(v) for k, v in value.items() if k != "raw_ms"}
    return value


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        (
            "| memories | server | search p50 / p95 | queries answered | ticket-id search p50 / p95 (answered) | "
            "writes/s (one per call) | write p50 / p95 |"
        ),
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        for name, label in (
            ("cerebro", "cerebro `recall` / `remember`"),
            ("reference", "reference `search_nodes` / `create_entities`"),
            ("lite", "mcp-memory-service-lite `memory_search` (hybrid) / `memory_store`"),
            ("basic_memory", "basic-memory `search_notes` (text) / `write_note`"),
        ):
            if name not in row["search"]:
                continue
            s, t, w = row["search"][name], row["ticket_search"][name], row["writes"][name]
            lines.append(
                f"| {row['memories']:,} | {label} | {s['p50']} / {s['p95']} ms | {s['answered']} | "
                f"{t['p50']} / {t['p95']} ms ({t['answered']}) | {w['writes_per_s']} | {w['p50']} / {w['p95']} ms |"
            )
    header = (
        "| memories | per-round ratio cerebro / peer, p50 (queries; ticket ids) | cerebro recall back to back "
        "p50 / p95 | cerebro MCP recall p50 (the CLI's queries) | `cerebro recall` CLI process p50 | first MCP "
        "recall after the CLI's | ping p50, cerebro / each peer |"
    )
    lines += ["", header, "|---|---|---|---|---|---|---|"]
    for row in rows:
        b, c = row["cerebro_recall_back_to_back"], row["mcp_vs_cli"]
        peers = [name for name in ("reference", "lite", "basic_memory") if name in row["search"]]
        ratios = ", ".join(
            f"{name} {row['search'][f'ratio_cerebro_over_{name}_p50']}; "
            f"{row['ticket_search'][f'ratio_cerebro_over_{name}_p50']}"
            for name in peers
        )
        ping = " / ".join(str(row["ping"][name]["p50"]) for name in ["cerebro", *peers])
        lines.append(
            f"| {row['memories']:,} | {ratios} | {b['p50']} / {b['p95']} ms | "
            f"{c['mcp_p50']} ms | {c['cli_p50']} ms | {c['mcp_first_after_cli']} ms | {ping} ms |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--ticket-queries", type=int, default=30)
    parser.add_argument(
        "--timed-writes", type=int, default=1000, help="items written one per call (the rest bulk-loaded)"
    )
    parser.add_argument("--cli-queries", type=int, default=20)
    parser.add_argument(
        "--basic-memory-max",
        type=int,
        default=10_000,
        help="largest size basic-memory is measured at (its bulk load runs ~10 notes/s here, staged: ~3 h at 100k)",
    )
    parser.add_argument(
        "--basic-memory-own-fts",
        action="store_true",
        help="bulk-load basic-memory with its FTS5 table as it is, not staged (quadratic: hours past 20,000 notes)",
    )
    parser.add_argument(
        "--quiet-retries",
        type=int,
        default=0,
        help="wait for an idle machine before each size, and measure a size again (up to this many "
        "times) when other processes used CPU meanwhile",
    )
    parser.add_argument("--quiet-wait", type=float, default=900, help="longest wait for an idle machine, seconds")
    parser.add_argument(
        "--skip",
        type=lambda text: {name.strip() for name in text.split(",") if name.strip()},
        default=set(),
        help="peers to leave out of this run, comma-separated: lite, basic-memory (e.g. one peer at 100k)",
    )
    parser.add_argument("--out", default="bench/out", help="where mcp_peers.json and the bulk-loaded brains go")
    parser.add_argument("--bulk-load", help=argparse.SUPPRESS)
    parser.add_argument("--project", help=argparse.SUPPRESS)
    parser.add_argument("--cache", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if unknown := opts.skip - {"lite", "basic-memory"}:
        parser.error(f"--skip takes lite and basic-memory, not {', '.join(sorted(unknown))}")
    if opts.bulk_load:
        bulk_load_cerebro(Path(opts.bulk_load), Path(opts.project), Path(opts.cache))
        return
    if not REFERENCE_ENTRY.is_file():
        sys.exit("bench/mcp_peers_bench.py: the reference server is not installed: run `make bench-peers` first")

    rng = random.Random(7)  # recall_bench's queries
    queries = [query(rng) for _ in range(opts.queries)]
    tickets = [f"HS-{rng.randint(1, 999):03d}" for _ in range(opts.ticket_queries)]
    Path(opts.out).mkdir(parents=True, exist_ok=True)
    info = machine()
    log(f"machine: {json.dumps(info)}")
    started = time.perf_counter()
    rows = []
    for size in (int(s) for s in opts.sizes.split(",")):
        for attempt in range(opts.quiet_retries + 1):
            if opts.quiet_retries and not wait_until_idle(opts.quiet_wait):
                log(f"{size}: the machine never went idle for {opts.quiet_wait:.0f} s; measuring anyway")
            row = bench_size(size, opts, queries, tickets)
            row["attempt"] = attempt + 1
            if max(row["foreign_cpu_cores"].values()) <= FOREIGN_LIMIT:
                break
        rows.append(row)
        print(json.dumps(without_raw(row)), flush=True)
    info["load_average_end"] = load_average()
    info["total_seconds"] = round(time.perf_counter() - started)
    out = Path(opts.out)
    (out / "mcp_peers.json").write_text(json.dumps({"machine": info, "sizes": rows}, indent=2) + "\n")
    print(json.dumps({"machine": info}))
    print(table(rows))


if __name__ == "__main__":
    main()
