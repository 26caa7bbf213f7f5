"""Interleaved start-up timings of CLI and hook commands: this checkout against another commit.

    git worktree add /tmp/wt-before <commit>
    .venv/bin/python bench/startup_bench.py [--before /tmp/wt-before] [--runs 7]

Builds a throwaway 1,000-memory brain (local model), then runs each command RUNS times after two warm-ups,
alternating "before" (the worktree on PYTHONPATH) and "after" (this checkout), so both see the same load; prints
a markdown table of wall p50 / max. Results go in docs/benchmarks.md with the load they ran under.
"""

from __future__ import annotations

import argparse
import json
import os
import random
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", default="/tmp/wt-before")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp())
    project = home / "project"
    project.mkdir()
    base = {**os.environ, "CEREBRO_HOME": str(home / "home"), "CEREBRO_EMBED_THREADS": "1"}
    base.pop("PYTHONPATH", None)
    build(project, base)
    variants = {"before": {**base, "PYTHONPATH": args.before}, "after": base}

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
    results: dict[tuple[str, str], list[float]] = {(c, v): [] for c in commands for v in variants}
    for name, (argv, payload) in commands.items():
        for i in range(args.runs + 2):
            order = list(variants.items())
            for variant, env in order if i % 2 == 0 else order[::-1]:
                start = time.perf_counter()
                done = subprocess.run(
                    argv,
                    input=payload() if payload else None,
                    text=True,
                    capture_output=True,
                    env={**env, "CLAUDE_PROJECT_DIR": p},
                    cwd=project,
                    check=False,
                )
                elapsed = (time.perf_counter() - start) * 1000
                if done.returncode != 0:
                    print(f"failed: {variant} {name}: {done.stderr[-300:]}", file=sys.stderr)
                if i >= 2:  # two warm-ups
                    results[(name, variant)].append(elapsed)
    print("| command | after (p50 / max) | before (p50 / max) |\n|---|---|---|")
    for name in commands:
        after, before = results[(name, "after")], results[(name, "before")]
        print(
            f"| `{name}` | {statistics.median(after):,.0f} / {max(after):,.0f} ms "
            f"| {statistics.median(before):,.0f} / {max(before):,.0f} ms |"
        )


if __name__ == "__main__":
    main()
