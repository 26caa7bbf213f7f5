"""Interleaved start-up costs of CLI and hook commands: this checkout against another commit, CPU and wall.

    git worktree add /tmp/wt-before <commit>
    .venv/bin/python bench/startup_bench.py [--before /tmp/wt-before] [--runs 7] [--brain PATH] [--embed-threads N]

Builds a throwaway 1,000-memory brain (local model) — or uses a copy of ``--brain`` (e.g. recall_bench's 10k
brain) — then runs each command RUNS times after two warm-ups, alternating "before" (the worktree on
PYTHONPATH) and "after" (this checkout), so both see the same load; prints a markdown table of CPU (user +
system of the process, from its rusage) and wall, p50 / max. Each variant has its own CEREBRO_HOME (their model
caches differ) and its own copy of the same brain (one may upgrade it to a revision the other refuses). The load
average is printed before and after. Results go in docs/benchmarks.md with the load they ran under.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

CEREBRO = str(Path(sys.executable).with_name("cerebro"))
WORDS = [
    "auth",
    "token",
    "refresh",
    "session",
    "cache",
    "index",
    "query",
    "vector",
    "migration",
    "schema",
    "backup",
    "hook",
    "prime",
    "recall",
]


def build(project: Path, env: dict[str, str]) -> None:
    init = [CEREBRO, "init", "--skip-integration", "-p", str(project)]
    subprocess.run(init, env=env, check=True, capture_output=True)
    rng = random.Random(7)
    items = [{"content": " ".join(rng.choice(WORDS) for _ in range(12))} for _ in range(1000)]
    program = (
        "import json, sys\nfrom cerebro import Brain\n"
        f"with Brain.for_project({str(project)!r}) as brain:\n    brain.add_many(json.load(sys.stdin))\n"
    )
    subprocess.run([sys.executable, "-c", program], input=json.dumps(items), text=True, env=env, check=True)


def brain_file(home: Path, project: Path) -> Path:
    program = "import sys\nfrom cerebro import paths\nprint(paths.project_brain_path(sys.argv[1]))"
    env = {**os.environ, "CEREBRO_HOME": str(home)}
    out = subprocess.run(
        [sys.executable, "-c", program, str(project)], env=env, capture_output=True, text=True, check=True
    )
    return Path(out.stdout.strip())


def run_measured(argv: list[str], payload: str | None, env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(CPU ms, wall ms) of one process: its own rusage, whatever else the machine runs."""
    start = time.perf_counter()
    process = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd
    )
    assert process.stdin is not None and process.stderr is not None
    process.stdin.write(payload or "")
    process.stdin.close()
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)  # reaped here, so that its own rusage can be read
    wall = (time.perf_counter() - start) * 1000
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        print(f"failed: {' '.join(argv)}: {err[-300:]}", file=sys.stderr)
    return (usage.ru_utime + usage.ru_stime) * 1000, wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", default="/tmp/wt-before")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--brain", help="measure on a copy of this brain instead of a fresh 1,000-memory one")
    parser.add_argument("--embed-threads", help="CEREBRO_EMBED_THREADS for the commands (default: unset)")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp())
    project = home / "project"
    project.mkdir()
    base = {**os.environ, "CEREBRO_HOME": str(home / "after")}
    if args.embed_threads:
        base["CEREBRO_EMBED_THREADS"] = args.embed_threads
    base.pop("PYTHONPATH", None)
    variants = {"before": {**base, "CEREBRO_HOME": str(home / "before"), "PYTHONPATH": args.before}, "after": base}
    # Each variant its own copy of the brain: one of them may upgrade it to a revision the other refuses to open.
    for env in variants.values():
        if args.brain:
            subprocess.run([CEREBRO, "init", "--skip-integration", "-p", str(project)], env=env, check=True)
            shutil.copyfile(args.brain, brain_file(Path(env["CEREBRO_HOME"]), project))
        else:
            build(project, env)
    print(f"load average before: {os.getloadavg()}", file=sys.stderr)

    def session_start() -> str:
        event = {"session_id": str(uuid.uuid4()), "cwd": str(project), "hook_event_name": "SessionStart"}
        return json.dumps({**event, "source": "startup"})

    p = str(project)
    commands: dict[str, tuple[list[str], Callable[[], str] | None]] = {
        "cerebro --help": ([CEREBRO, "--help"], None),
        "cerebro stats": ([CEREBRO, "stats", "-p", p], None),
        "cerebro recall --prime": ([CEREBRO, "recall", "--prime", "-p", p], None),
        'cerebro recall "query"': ([CEREBRO, "recall", "-p", p, "vector index migration"], None),
        'cerebro add "…"': ([CEREBRO, "add", "-p", p, "a new memory about hooks"], None),
        "hook has-brain": ([CEREBRO, "hook", "has-brain"], session_start),
        "hook prime --event sessionstart": ([CEREBRO, "hook", "prime", "--event", "sessionstart"], session_start),
    }
    results: dict[tuple[str, str], list[tuple[float, float]]] = {(c, v): [] for c in commands for v in variants}
    for name, (argv, payload) in commands.items():
        for i in range(args.runs + 2):
            order = list(variants.items())
            for variant, env in order if i % 2 == 0 else order[::-1]:
                cpu, wall = run_measured(
                    argv, payload() if payload else None, {**env, "CLAUDE_PROJECT_DIR": p}, project
                )
                if i >= 2:  # two warm-ups
                    results[(name, variant)].append((cpu, wall))
    print(f"load average after: {os.getloadavg()}", file=sys.stderr)

    def cell(samples: list[tuple[float, float]], at: int) -> str:
        values = [s[at] for s in samples]
        return f"{statistics.median(values):,.0f} / {max(values):,.0f} ms"

    print("| command | after: CPU | after: wall | before: CPU | before: wall |\n|---|---|---|---|---|")
    for name in commands:
        after, before = results[(name, "after")], results[(name, "before")]
        print(f"| `{name}` | {cell(after, 0)} | {cell(after, 1)} | {cell(before, 0)} | {cell(before, 1)} |")


if __name__ == "__main__":
    main()
