"""Claude Code hook latency: what each hook command costs the client, wall and CPU, median of N warm runs.

    .venv/bin/python bench/hook_bench.py [--memories 1000] [--runs 10] [--load 0]

Runs the hook commands exactly as the settings entries do (the `cerebro` script, the payload on stdin) against
a throwaway brain of N memories (provider `none`: the hooks never embed). `session-end` is timed to the hook's
exit — what Claude Code waits for — and, separately, until its detached worker has done the session's gc +
ingest. `--load K` runs K CPU hogs meanwhile (the loaded-machine case). Prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CEREBRO = str(Path(sys.executable).with_name("cerebro"))


def _run(args: list[str], payload: dict, env: dict[str, str]) -> tuple[float, float]:
    """(wall ms, CPU ms of the process and its children that it waited for)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([CEREBRO, *args], input=json.dumps(payload), text=True, capture_output=True, env=env, check=True)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu


def _wait_idle(home: Path) -> float:
    start = time.perf_counter()
    pending = home / "aftercare" / "pending"
    while any(pending.glob("*.json")) if pending.exists() else False:
        time.sleep(0.005)
    return (time.perf_counter() - start) * 1000


@contextmanager
def _load(n: int) -> Iterator[None]:
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--load", type=int, default=0)
    opts = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        home, project = Path(scratch) / "home", Path(scratch) / "project"
        project.mkdir()
        env = {**os.environ, "CEREBRO_HOME": str(home), "CLAUDE_PROJECT_DIR": str(project)}
        env.pop("CLAUDE_SESSION_ID", None)
        from cerebro import Brain, paths

        os.environ["CEREBRO_HOME"] = str(home)
        Brain.init(paths.project_brain_path(project), embed_provider="none")
        with Brain.open(paths.project_brain_path(project)) as brain:
            brain.add_many(
                [{"content": f"memory {i} about module m{i % 97} and ticket HS-{i:04d}"} for i in range(opts.memories)]
            )
        p = ["-p", str(project)]
        cases = {
            "hook has-brain (every plugin hook's gate)": lambda i: (["hook", "has-brain", *p], {}),
            "hook prime --event sessionstart (primes)": lambda i: (
                ["hook", "prime", "--event", "sessionstart", *p],
                {"session_id": f"bench-start-{i}-{time.time_ns()}"},
            ),
            "hook prime --event userpromptsubmit (already primed)": lambda i: (
                ["hook", "prime", "--event", "userpromptsubmit", *p],
                {"session_id": "bench-primed"},
            ),
            "hook session-end (until the hook exits)": lambda i: (
                ["hook", "session-end", *p],
                {"session_id": f"bench-end-{i}-{time.time_ns()}"},
            ),
        }
        _run(["hook", "prime", "--event", "sessionstart", *p], {"session_id": "bench-primed"}, env)
        rows = []
        with _load(opts.load):
            for name, make in cases.items():
                walls, cpus, worker = [], [], []
                for i in range(opts.runs + 2):
                    args, payload = make(i)
                    wall, cpu = _run(args, payload, env)
                    if "session-end" in name:
                        worker.append(wall + _wait_idle(home))
                    if i >= 2:  # two warm-up runs
                        walls.append(wall)
                        cpus.append(cpu)
                rows.append((name, statistics.median(walls), max(walls), statistics.median(cpus)))
                if worker:
                    rows.append(
                        (
                            "… until its worker finished gc + ingest",
                            statistics.median(worker[2:]),
                            max(worker[2:]),
                            None,
                        )
                    )
    load = os.getloadavg()
    print(f"memories {opts.memories}, runs {opts.runs}, CPU hogs {opts.load}, load average {load[0]:.2f}")
    print("| hook command | wall p50 | wall max | CPU p50 (waited-for processes) |")
    print("|---|---|---|---|")
    for name, p50, worst, cpu in rows:
        print(f"| {name} | {p50:.0f} ms | {worst:.0f} ms | {'' if cpu is None else f'{cpu:.0f} ms'} |")


if __name__ == "__main__":
    main()
