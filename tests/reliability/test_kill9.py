"""Fault injection: the real `cerebro` killed with SIGKILL at a random point of every step that writes — init, an
import of a batch, reembed, gc, consolidate, migrate, export to sqlite, backup — and the brain checked after each:
SQLite's integrity_check, FTS5's own integrity-check and its rows against the active memories, vectors against
memories, no half-written file where one is expected, and the next command working (issue 17).

The suite runs a bounded sample on every run (``TRIALS`` a step, fixed seeds); ``make soak`` runs
``CEREBRO_SOAK_TRIALS`` a step with fresh seeds. docs/reliability.md records the soak's trials and failures.
The random delay before the kill is the fault being injected, not a wait for a condition.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from cerebro import Brain, paths
from cerebro.db.engine import connect_raw

pytestmark = pytest.mark.slow  # many real processes (the CI's full run includes them)

CEREBRO = [sys.executable, "-m", "cerebro"]
TRIALS = int(os.environ.get("CEREBRO_SOAK_TRIALS", "2"))
SEED = int(os.environ.get("CEREBRO_SOAK_SEED", "17"))
MEMORIES = 60


def run(args: list[str], env: dict[str, str], **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CEREBRO, *args], capture_output=True, text=True, env=env, timeout=300, check=False, **kw)


def kill_after(args: list[str], env: dict[str, str], delay: float) -> int | None:
    """Start ``cerebro ARGS`` and SIGKILL it after ``delay`` seconds; its exit status if it finished first."""
    process = subprocess.Popen(
        [*CEREBRO, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL
    )
    try:
        return process.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGKILL)
        process.wait()
        return None


def check_brain(path: Path) -> dict[str, int]:
    """Everything a killed writer could have broken; returns the counts checked."""
    assert path.is_file() and path.stat().st_size > 0
    conn = connect_raw(path, wal=False)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        active = {r[0] for r in conn.execute("SELECT id FROM nodes WHERE status = 'active'")}
        nodes = {r[0] for r in conn.execute("SELECT id FROM nodes")}
        if "nodes_fts" in tables:
            conn.execute("INSERT INTO nodes_fts (nodes_fts) VALUES ('integrity-check')")
            indexed = [r[0] for r in conn.execute("SELECT node_id FROM nodes_fts")]
            assert sorted(indexed) == sorted(active)  # each active memory once, nothing else
        vectors = 0
        if "vec_nodes" in tables:
            with_vector = [r[0] for r in conn.execute("SELECT node_id FROM vec_nodes")]
            assert set(with_vector) <= nodes and len(with_vector) == len(set(with_vector))
            vectors = len(with_vector)
        edges = conn.execute("SELECT source_id, target_id FROM edges").fetchall()
        assert all(s in nodes and t in nodes for s, t in edges)
    finally:
        conn.close()
    return {"active": len(active), "vectors": vectors}


def no_partial_target(target: Path) -> None:
    """Where the user looks there is either nothing or a whole brain (a killed copy's temporary file is hidden)."""
    if target.exists():
        check_brain(target)


@pytest.fixture
def env(isolated_home: Path) -> dict[str, str]:
    return {**os.environ, "CEREBRO_HOME": str(isolated_home), "CEREBRO_EMBED_THREADS": "1"}


def _bundle(tmp_path: Path, n: int = MEMORIES) -> Path:
    records = [
        {
            "kind": "node",
            "id": hashlib.sha256(f"m{i}".encode()).hexdigest()[:8] + "-0000-4000-8000-000000000000",
            "type": "episode",
            "content": f"memory {i}: the deploy of service {i % 7} needs the VPN and a retry",
            "importance": 0.01 if i % 3 == 0 else 0.8,
            "created_at": "2025-01-01T00:00:00Z",
        }
        for i in range(n)
    ]
    path = tmp_path / "batch.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


def _project(tmp_path: Path, name: str = "project") -> Path:
    folder = tmp_path / name
    folder.mkdir(exist_ok=True)
    return folder


def _trials(step: str) -> list[float]:
    """The kill points of a step: fractions of its usual duration, from the step's own seeded generator."""
    rng = random.Random(f"{SEED}:{step}")
    return [rng.uniform(0.05, 1.2) for _ in range(TRIALS)]


def _timed(args: list[str], env: dict[str, str]) -> float:
    """How long the step takes here, whole (the kill points are spread over it)."""
    started = time.monotonic()
    done = run(args, env)
    assert done.returncode == 0, done.stderr
    return time.monotonic() - started


def _fresh_brain(project: Path, env: dict[str, str], provider: str, memories: Path | None) -> Path:
    brain = paths.project_brain_path(project)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{brain}{suffix}").unlink(missing_ok=True)
    assert run(["init", "--skip-integration", "--embed-provider", provider, "-p", str(project)], env).returncode == 0
    if memories is not None:
        assert run(["import", str(memories), "-p", str(project)], env).returncode == 0
    return brain


STEPS: dict[str, tuple[str, Callable[[Path, Path], list[str]], str]] = {
    # step: (provider, argv for the project and the batch file, what to prepare: "empty", "brain")
    "init": ("none", lambda p, b: ["init", "--skip-integration", "--embed-provider", "local", "-p", str(p)], "none"),
    "import": ("local", lambda p, b: ["import", str(b), "-p", str(p)], "empty"),
    "reembed": ("none", lambda p, b: ["reembed", "--provider", "local", "-p", str(p)], "brain"),
    "gc": ("none", lambda p, b: ["gc", "--threshold", "0.5", "-p", str(p)], "brain"),
    "export": (
        "none",
        lambda p, b: ["export", "--format", "sqlite", "-o", str(b.parent / "copy.sqlite"), "-p", str(p)],
        "brain",
    ),
    "backup": ("none", lambda p, b: ["backup", "-o", str(b.parent / "backup.sqlite"), "-p", str(p)], "brain"),
}


@pytest.mark.parametrize("step", sorted(STEPS))
def test_a_step_killed_at_any_point_leaves_a_sound_brain(step: str, env: dict[str, str], tmp_path: Path) -> None:
    provider, argv_for, prepare = STEPS[step]
    project = _project(tmp_path)
    batch = _bundle(tmp_path)
    brain = paths.project_brain_path(project)

    template = tmp_path / "template.sqlite"
    if prepare != "none":  # made once by the real commands, then copied for each trial (closed: no -wal)
        template.write_bytes(_fresh_brain(project, env, provider, batch if prepare == "brain" else None).read_bytes())

    def prepared() -> None:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{brain}{suffix}").unlink(missing_ok=True)
        if prepare != "none":
            brain.write_bytes(template.read_bytes())
            brain.chmod(0o600)
        for leftover in ("copy.sqlite", "backup.sqlite"):
            (tmp_path / leftover).unlink(missing_ok=True)

    prepared()
    duration = _timed(argv_for(project, batch), env)
    for fraction in _trials(step):
        prepared()
        kill_after(argv_for(project, batch), env, fraction * duration)
        if step == "init":
            # A killed init: a second init finishes the brain, with the provider asked.
            again = run(argv_for(project, batch), env)
            assert again.returncode == 0, again.stderr
        counts = check_brain(brain)
        if step in ("export", "backup"):
            no_partial_target(tmp_path / ("copy.sqlite" if step == "export" else "backup.sqlite"))
        if step == "reembed":
            # Not begun, half done or done: the same command again starts, resumes or confirms the switch.
            again = run(argv_for(project, batch), env)
            assert again.returncode == 0, again.stderr
            counts = check_brain(brain)
            assert counts["vectors"] == counts["active"]
        nxt = run(["add", "after the kill", "--format", "json", "-p", str(project)], env)
        assert nxt.returncode == 0, (step, fraction, nxt.stderr)
        listed = run(["list", "--limit", "1000", "--format", "json", "-p", str(project)], env)
        assert listed.returncode == 0 and len(json.loads(listed.stdout)["memories"]) == counts["active"] + 1


def test_consolidate_killed_is_all_or_nothing(env: dict[str, str], tmp_path: Path) -> None:
    project = _project(tmp_path)
    brain = paths.project_brain_path(project)
    for fraction in _trials("consolidate"):
        for suffix in ("", "-wal", "-shm"):
            Path(f"{brain}{suffix}").unlink(missing_ok=True)
        Brain.init(brain, embed_provider="none")
        with Brain.open(brain) as opened:
            concept = opened.add("deploys need the VPN", type="concept")
            episodes = [opened.add(f"episode {i} about the VPN") for i in range(60)]
        kill_after(["consolidate", *episodes, "--into", concept, "-p", str(project)], env, fraction * 1.0)
        check_brain(brain)
        with Brain.open(brain) as opened:
            statuses = {opened.get(e).node.status for e in episodes}
            edges = len(opened.get(concept).edges)
        assert (statuses, edges) in (({"active"}, 0), ({"consolidated"}, 60))  # all or nothing


def test_migrate_killed_loses_no_memory_and_a_rerun_finishes(env: dict[str, str], tmp_path: Path) -> None:
    real = _project(tmp_path, "real")
    link = tmp_path / "link"
    link.symlink_to(real)
    old = paths.projects_dir() / f"{hashlib.sha256(os.path.abspath(link).encode()).hexdigest()}.sqlite"
    new = paths.project_brain_path(real)
    for fraction in _trials("migrate"):
        for brain in (old, new):
            for suffix in ("", "-wal", "-shm"):
                Path(f"{brain}{suffix}").unlink(missing_ok=True)
        Brain.init(old, embed_provider="none")
        with Brain.open(old) as opened:
            opened.add_many([{"content": f"memory {i}"} for i in range(300)])
        kill_after(["migrate", "--realpath-hashes", "--scan-root", str(link)], env, fraction * 1.0)
        survivor = new if new.exists() else old
        assert check_brain(survivor)["active"] == 300
        assert not (old.exists() and new.exists())
        again = run(["migrate", "--realpath-hashes", "--scan-root", str(link)], env)
        assert again.returncode == 0, again.stderr
        assert check_brain(new)["active"] == 300 and not old.exists()
