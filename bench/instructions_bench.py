"""CPU work counted in instructions (Valgrind's callgrind): this checkout against another, with no noise.

    git archive <commit> cerebro alembic alembic.ini | tar -x -C /tmp/before
    .venv/bin/python bench/instructions_bench.py recall --sizes 1000,10000 --before /tmp/before
    .venv/bin/python bench/instructions_bench.py commands --brain bench/out/brain-10000.sqlite --before /tmp/before

Timings on a shared 2-core machine move by ±30 % from one minute to the next (docs/benchmarks.md), so a change worth
5 % cannot be seen in them. The number of instructions a process executes can: with ``PYTHONHASHSEED=0`` it repeats
to within ~0.1 %. It is not time (a cache miss costs more than an add), so the tables of record stay CPU and wall
from ``recall_bench.py`` and ``startup_bench.py``; this is the instrument for deciding whether a change made the work
smaller. Needs ``valgrind`` (Debian's package); under it a process runs ~50× slower, and ONNX Runtime and NumPy take
their AVX2 paths (Valgrind 3.19 has no AVX-512), so the model's share differs from a native run.

- ``recall``: instructions of one in-process ``Brain.recall`` (query embedding excluded, as recall_bench measures
  it): after a round of 40 warm-ups, a round of 40 recalls run through ``itertools.starmap``, and callgrind counts
  inside ``starmap_next`` only (``--toggle-collect``): the recalls and nothing else (the difference of two processes,
  used before, moved with whatever the warm-ups did on another thread). Uses recall_bench's brains
  (``bench/out/brain-N.sqlite``); the query vectors are computed once and cached.
- ``commands``: instructions of each one-shot command of ``startup_bench.py`` (one warm-up run each, then one
  counted), on a copy of ``--brain``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PYTHON = sys.executable
CEREBRO = str(Path(sys.executable).with_name("cerebro"))
ROUND = 40

# One recall process: argv = code folder, brain, query-vector cache, rounds. The code folder goes first on sys.path,
# so "before" is the other checkout's package, not this one's (checked).
RECALLS = """
import collections, itertools, json, os, sys
code, brain, cache, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sys.path.insert(0, code)
import cerebro
from cerebro import Brain
assert cerebro.__file__.startswith(code), cerebro.__file__
b = Brain.open(brain)
vectors = json.load(open(cache))
b.handle.embed = lambda texts: [vectors[t] for t in texts]
for q in vectors:
    b.recall(q)
for _ in range(rounds):  # counted: callgrind collects inside starmap_next only
    collections.deque(itertools.starmap(b.recall, ((q,) for q in vectors)), maxlen=0)
"""


def counted(
    argv: list[str], env: dict[str, str], stdin: str | None = None, cwd: Path | None = None, only: str | None = None
) -> int:
    """Instructions the process executed (all its threads), under callgrind; ``only``: inside that function only."""
    within = ["--collect-atstart=no", f"--toggle-collect={only}"] if only else []
    ran = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *within, *argv],
        input=stdin,
        capture_output=True,
        text=True,
        env={**env, "PYTHONHASHSEED": "0"},
        cwd=cwd,
        check=False,
    )
    found = re.search(r"Collected : (\d+)", ran.stderr)
    if ran.returncode != 0 or found is None:
        sys.exit(f"failed: {' '.join(argv)}: {ran.stderr[-500:]}")
    return int(found.group(1))


def query_vectors(brain: Path, cache: Path) -> None:
    """recall_bench's 40 queries (seed 5) with their vectors, computed once with the brain's own model."""
    if cache.exists():
        return
    sys.path.insert(0, str(HERE))
    from recall_bench import query

    from cerebro import Brain

    rng = random.Random(5)
    queries = [query(rng) for _ in range(ROUND)]
    with Brain.open(brain) as opened:
        cache.write_text(json.dumps({q: opened.handle.embed([q])[0] for q in queries}))


def recall(args: argparse.Namespace) -> None:
    env = {**os.environ, "CEREBRO_HOME": str(ROOT / "bench" / "out" / "home"), "OPENBLAS_NUM_THREADS": "1"}
    env.pop("PYTHONPATH", None)
    variants = {"after": str(ROOT), **({"before": args.before} if args.before else {})}
    print("| memories | " + " | ".join(f"{v}: instructions a recall" for v in variants) + " |")
    print("|---|" + "---|" * len(variants))
    for size in (int(s) for s in args.sizes.split(",")):
        brain = ROOT / "bench" / "out" / f"brain-{size}.sqlite"
        cache = ROOT / "bench" / "out" / f"query-vectors-{size}.json"
        query_vectors(brain, cache)
        cells = []
        for code in variants.values():
            argv = [PYTHON, "-c", RECALLS, code, str(brain), str(cache), "1"]
            cells.append(f"{counted(argv, env, only='starmap_next') / ROUND / 1e6:.2f} M")
        print(f"| {size:,} | " + " | ".join(cells) + " |", flush=True)


def commands(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(HERE))
    from startup_bench import brain_file

    home = Path(tempfile.mkdtemp())
    project = home / "project"
    project.mkdir()
    base = {**os.environ, "CEREBRO_HOME": str(home / "after")}
    base.pop("PYTHONPATH", None)
    variants = {"after": base}
    if args.before:
        variants["before"] = {**base, "CEREBRO_HOME": str(home / "before"), "PYTHONPATH": args.before}
    init = [CEREBRO, "init", "--skip-integration", "-p", str(project)]
    for env in variants.values():  # each its own copy: one may upgrade it to a revision the other refuses
        subprocess.run(init, env=env, check=True, capture_output=True)
        shutil.copyfile(args.brain, brain_file(Path(env["CEREBRO_HOME"]), project))

    def event() -> str:  # a new session each run: the hook primes a session once
        return json.dumps({"session_id": str(uuid.uuid4()), "cwd": str(project), "hook_event_name": "SessionStart"})

    p = str(project)
    table = {
        "hook has-brain": ([CEREBRO, "hook", "has-brain"], event),
        "hook prime --event sessionstart": ([CEREBRO, "hook", "prime", "--event", "sessionstart"], event),
        "cerebro recall --prime": ([CEREBRO, "recall", "--prime", "-p", p], None),
        'cerebro add "…"': ([CEREBRO, "add", "-p", p, "a new memory about hooks"], None),
        'cerebro recall "query"': ([CEREBRO, "recall", "-p", p, "vector index migration"], None),
    }
    print("| command | " + " | ".join(f"{v}: instructions" for v in variants) + " |")
    print("|---|" + "---|" * len(variants))
    for name, (argv, stdin) in table.items():
        cells = []
        for variant in variants.values():
            env = {**variant, "CLAUDE_PROJECT_DIR": p}
            payload = stdin and stdin()
            subprocess.run(argv, input=payload, env=env, cwd=project, capture_output=True, text=True, check=False)
            cells.append(f"{counted(argv, env, stdin and stdin(), project) / 1e6:,.0f} M")
        print(f"| `{name}` | " + " | ".join(cells) + " |", flush=True)
    shutil.rmtree(home, ignore_errors=True)


def main() -> None:
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (Debian: apt-get install valgrind)")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    one = sub.add_parser("recall", help="instructions of one in-process recall, by brain size")
    one.add_argument("--sizes", default="1000,10000")
    one.add_argument("--before", help="another checkout's folder (holding cerebro/) to compare with")
    many = sub.add_parser("commands", help="instructions of each one-shot command")
    many.add_argument("--brain", required=True, help="a brain file to copy (e.g. bench/out/brain-10000.sqlite)")
    many.add_argument("--before", help="another checkout's folder (holding cerebro/) to compare with")
    args = parser.parse_args()
    recall(args) if args.what == "recall" else commands(args)


if __name__ == "__main__":
    main()
