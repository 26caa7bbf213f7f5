"""Many agents on many machines share one team brain (issue 20): concurrent pushers, in separate processes against
a real PostgreSQL, land every memory exactly once and none errors. (Concurrent writers to one brain, file or team:
tests/api/test_concurrency.py, on both engines.)"""

from __future__ import annotations

import multiprocessing as mp
import os
from pathlib import Path

import pytest

from cerebro import Brain

PROCESSES = 8
ADDS_EACH = 200
PUSH_EVERY = 50


def _run(workers: list, results, count: int) -> list:
    try:
        for worker in workers:
            worker.start()
        reports = [results.get(timeout=240) for _ in range(count)]
        for worker in workers:
            worker.join(timeout=60)
            assert worker.exitcode == 0
        return reports
    finally:
        for worker in workers:  # a failed run leaves no writer behind
            if worker.is_alive():
                worker.kill()
                worker.join(timeout=10)


def _machine_agent(local: str, url: str, home: str, barrier, results, index: int) -> None:
    """An agent on one machine: adds shared memories to the machine's brain file, pushing to the team as it goes."""
    os.environ["CEREBRO_HOME"] = home
    errors: list[str] = []
    ids: list[str] = []
    with Brain.open(local) as brain, Brain.open(url, team_project="acme") as team:
        barrier.wait()
        for n in range(ADDS_EACH):
            try:
                ids.append(brain.add(f"agent {index} finding {n}", metadata={"shared": True}))
                if (n + 1) % PUSH_EVERY == 0:
                    brain.team_push(team)
            except Exception as exc:  # noqa: BLE001 - the test reports every failure
                errors.append(repr(exc))
    results.put((index, ids, errors))


@pytest.mark.slow
def test_two_machines_of_four_agents_pushing_while_they_add_land_every_memory_once(
    team_url: str, isolated_home: Path, tmp_path: Path
) -> None:
    Brain.init(team_url, embed_provider="none", team_project="acme")
    machines = [tmp_path / "machine-a.sqlite", tmp_path / "machine-b.sqlite"]
    for machine in machines:
        Brain.init(machine, embed_provider="none")
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(PROCESSES), ctx.Queue()
    workers = [
        ctx.Process(
            target=_machine_agent,
            args=(str(machines[i % 2]), team_url, str(isolated_home), barrier, results, i),
        )
        for i in range(PROCESSES)
    ]
    reports = _run(workers, results, PROCESSES)
    assert [e for report in reports for e in report[2]] == []
    for machine in machines:  # what the last pushes of the other agents on the machine had not sent yet
        with Brain.open(machine) as brain, Brain.open(team_url, team_project="acme") as team:
            brain.team_push(team)
    with Brain.open(team_url, team_project="acme") as team:
        listed = [n.id for n in team.list(limit=10_000)]
    added = [node_id for report in reports for node_id in report[1]]
    assert len(added) == PROCESSES * ADDS_EACH
    assert sorted(listed) == sorted(added)  # every memory, exactly once
