"""Many agents share one brain: concurrent writers from separate processes all land, none errors — on a brain file
and on a team brain in PostgreSQL (the ``engine`` parameter, tests/conftest.py)."""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from pathlib import Path

import pytest

from cerebro import Brain
from tests.postgres import TeamBrainRef

PROCESSES = 8
ADDS_EACH = 200


def _writer(path: str, project: str | None, home: str, barrier, results, index: int) -> None:
    os.environ["CEREBRO_HOME"] = home
    errors: list[str] = []
    with Brain.open(path, team_project=project) as brain:
        barrier.wait()
        started = time.monotonic()
        for n in range(ADDS_EACH):
            try:
                brain.add(f"writer {index} memory {n}", importance=0.5)
            except Exception as exc:  # noqa: BLE001 - the test reports every failure
                errors.append(repr(exc))
        finished = time.monotonic()
    results.put((index, started, finished, errors))


@pytest.fixture
def none_brain_path(project: Path, engine: str, request: pytest.FixtureRequest) -> Path | TeamBrainRef:
    """A brain without an embedding provider: the point is the locking, not the model (eight processes loading ONNX
    took minutes on a loaded 2-core machine); without embeddings each write is short, so the writers contend harder."""
    from cerebro import paths
    from tests.conftest import team_brain

    if engine == "postgresql":
        return team_brain(request, "none")
    path = paths.project_brain_path(project)
    Brain.init(path, embed_provider="none")
    return path


@pytest.mark.slow
def test_eight_processes_add_200_each_without_error(none_brain_path, isolated_home: Path) -> None:
    project = getattr(none_brain_path, "project", None)
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(PROCESSES)
    results = ctx.Queue()
    workers = [
        ctx.Process(target=_writer, args=(str(none_brain_path), project, str(isolated_home), barrier, results, i))
        for i in range(PROCESSES)
    ]
    try:
        for worker in workers:
            worker.start()
        reports = [results.get(timeout=120) for _ in workers]
        for worker in workers:
            worker.join(timeout=60)
            assert worker.exitcode == 0
    finally:
        for worker in workers:  # a failed run leaves no writer behind
            if worker.is_alive():
                worker.kill()
                worker.join(timeout=10)

    errors = [e for report in reports for e in report[3]]
    assert errors == []
    # The writes overlapped in time: every writer started before the first one finished.
    latest_start = max(r[1] for r in reports)
    earliest_finish = min(r[2] for r in reports)
    assert latest_start < earliest_finish

    with Brain.open(str(none_brain_path), team_project=project) as brain:
        stats = brain.stats()
        contents = [n.content for n in brain.list(limit=10_000)]
    assert stats.total_nodes == PROCESSES * ADDS_EACH
    assert stats.active_nodes == PROCESSES * ADDS_EACH
    assert sorted(contents) == sorted(f"writer {i} memory {n}" for i in range(PROCESSES) for n in range(ADDS_EACH))
