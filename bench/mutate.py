"""Mutation testing by group: each group of modules against the tests that are about it (docs/testing.md).

    .venv/bin/python bench/mutate.py [GROUP ...] [--children N]     # make mutate GROUPS="db store"

mutmut runs a mutant against every selected test that covers the mutated function. With the whole suite
selected, a function every test passes through (opening a brain, migrating it, reading a node) has hundreds of
covering tests, each making a fresh brain: a surviving mutant then costs minutes, and mutmut's time limit, which
leaves fixtures out of its estimate, cut many off as "timeouts" — counted as killed. So each group gets its own
tests, and only those can kill its mutants (a mutant that only an unrelated test would notice counts against).

For each group: a copy of the tracked files in ``bench/out/mutate-<group>`` with ``[tool.mutmut]``'s modules and
test selection replaced, a first ``mutmut run`` that generates the mutants and measures the tests, then a run of
only the mutants worth running (not letter case inside SQL, not listed as equivalent: ``mutation_report.py``),
and the report. A group's folder is kept: run it again with ``--resume`` to finish what was not run.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "bench" / "out"

GROUPS: dict[str, tuple[list[str], list[str]]] = {
    "db": (
        ["cerebro/db/*.py", "cerebro/retry.py"],
        [
            "tests/migrations",
            "tests/unit/test_driver.py",
            "tests/unit/test_logs.py",
            "tests/api/test_transactions.py",
            "tests/api/test_retry_waits.py",
            "tests/portability/test_backup_files.py",
            "tests/unit/test_store.py",
        ],
    ),
    "store": (
        [
            "cerebro/store/reads.py",
            "cerebro/store/nodes.py",
            "cerebro/store/inserts.py",
            "cerebro/store/sql.py",
            "cerebro/store/edges.py",
            "cerebro/store/fts.py",
            "cerebro/store/vec.py",
            "cerebro/store/warm.py",
            "cerebro/recall.py",
        ],
        [
            "tests/unit/test_store.py",
            "tests/retrieval",
            "tests/embed/test_vector_storage.py",
            "tests/embed/test_write_path.py",  # init's provider switch: the vector table's count and drop
            "tests/portability/test_reembed.py",  # the side table and the switch
            "tests/api",
            "tests/lifecycle",
        ],
    ),
    "lifecycle": (
        [
            "cerebro/lifecycle.py",
            "cerebro/brain/lifecycle.py",
            "cerebro/provenance.py",
            "cerebro/scoring.py",
            "cerebro/store/archive.py",
            "cerebro/store/graph.py",
            "cerebro/store/bookkeeping.py",
            "cerebro/store/inbox.py",
            "cerebro/store/relations.py",
            "cerebro/store/meta.py",
        ],
        ["tests/lifecycle", "tests/api", "tests/unit/test_store.py", "tests/retrieval"],
    ),
    "portability": (
        [
            "cerebro/importing.py",
            "cerebro/portability.py",
            "cerebro/brain/exports.py",
            "cerebro/store/bulk.py",
            "cerebro/store/dump.py",
            "cerebro/store/checks.py",
        ],
        ["tests/portability", "tests/api/test_public_api.py", "tests/api/test_secrets.py", "tests/cli/test_doctor.py"],
    ),
    "hooks": (
        [
            "cerebro/integration/claude_code/hooks.py",
            "cerebro/integration/claude_code/aftercare.py",
            "cerebro/integration/claude_code/stop_guard.py",
            "cerebro/mcp/framing.py",
        ],
        [
            "tests/integration/test_hooks.py",
            "tests/integration/test_stop_guard.py",
            "tests/integration/test_aftercare.py",
            "tests/mcp/test_framing.py",
            "tests/mcp/test_host.py",
        ],
    ),
}


def _toml_list(items: list[str]) -> str:
    return "[" + ", ".join(f'"{item}"' for item in items) + "]"


def prepare(group: str) -> Path:
    modules, tests = GROUPS[group]
    folder = OUT / f"mutate-{group}"
    shutil.rmtree(folder, ignore_errors=True)
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, check=True, capture_output=True).stdout
    for name in filter(None, tracked.decode().split("\0")):
        source = REPO / name
        if source.is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, folder / name)
    config = folder / "pyproject.toml"
    text = config.read_text()
    text = re.sub(r"only_mutate = \[.*?\]\n", f"only_mutate = {_toml_list(modules)}\n", text, flags=re.S)
    text = re.sub(
        r"pytest_add_cli_args_test_selection = \[.*?\]\n",
        f"pytest_add_cli_args_test_selection = {_toml_list(tests)}\n",
        text,
        flags=re.S,
    )
    config.write_text(text)
    return folder


def run(group: str, children: int, *, resume: bool) -> str:
    folder = OUT / f"mutate-{group}"
    if not resume or not (folder / "mutants").is_dir():
        folder = prepare(group)
        # Generates the mutants and measures the tests; the name matches no mutant, so nothing else runs.
        _mutmut(folder, children, ["cerebro.no_such_module.*"], check=False)
    report = [sys.executable, str(REPO / "bench" / "mutation_report.py"), str(folder / "mutants")]
    worth = subprocess.run([*report, "--worth-running"], check=True, capture_output=True, text=True).stdout.split()
    if worth:
        _mutmut(folder, children, worth, check=False)
    return subprocess.run(report, check=True, capture_output=True, text=True).stdout


def _mutmut(folder: Path, children: int, names: list[str], *, check: bool) -> None:
    env = {**os.environ, "CEREBRO_EMBED_THREADS": "1", "CEREBRO_MUTATION_ORDER": "1", "CEREBRO_TEST_ENGINES": "sqlite"}
    mutmut = str(Path(sys.executable).with_name("mutmut"))
    with (folder / "mutmut.log").open("a") as log:
        subprocess.run(
            [mutmut, "run", "--max-children", str(children), *names],
            cwd=folder,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            check=check,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("groups", nargs="*", help=f"some of: {', '.join(GROUPS)} (default: all)")
    parser.add_argument("--children", type=int, default=2)
    parser.add_argument("--resume", action="store_true", help="finish a group's earlier run instead of a new one")
    args = parser.parse_args()
    unknown = [g for g in args.groups if g not in GROUPS]
    if unknown:
        parser.error(f"unknown group {unknown[0]!r}: choose from {', '.join(GROUPS)}")
    for group in args.groups or list(GROUPS):
        print(f"## {group}\n\n{run(group, args.children, resume=args.resume)}", flush=True)


if __name__ == "__main__":
    main()
