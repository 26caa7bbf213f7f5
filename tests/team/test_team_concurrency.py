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


def test_concurrent_writers_of_one_project_take_turns(team_url) -> None:
    """Write transactions at READ COMMITTED interleaved their reads and writes: three agents reinforcing one memory
    40 times each left 78 reinforcements, and two supersessions of one memory both succeeded (a review). Each write
    now takes the project's writer lock first, as BEGIN IMMEDIATE does on a brain file."""
    import threading

    from cerebro import Brain

    Brain.init(team_url, embed_provider="none", team_project="race")
    with Brain.open(team_url, team_project="race") as brain:
        target = brain.add("race target memory")
        olds = [brain.add(f"old fact {n}") for n in range(5)]

    def reinforce(errors: list[str]) -> None:
        with Brain.open(team_url, team_project="race") as mine:
            for _ in range(20):
                try:
                    mine.reinforce(target)
                    mine.record_outcome(target, success=True)
                except Exception as exc:  # noqa: BLE001 - counted, then asserted absent
                    errors.append(type(exc).__name__)

    errors: list[str] = []
    workers = [threading.Thread(target=reinforce, args=(errors,)) for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    with Brain.open(team_url, team_project="race") as brain:
        node = brain.get(target).node
    assert errors == []
    assert node.times_reinforced == 60 and node.metadata["outcomes"]["success"] == 60

    handles = [Brain.open(team_url, team_project="race") for _ in range(2)]
    try:
        for old in olds:
            barrier, results = threading.Barrier(2), []

            def supersede(
                handle: Brain, old: str = old, barrier: threading.Barrier = barrier, out: list = results
            ) -> None:
                barrier.wait()
                try:
                    out.append(handle.supersede(old, f"new fact for {old[:8]}"))
                except Exception as exc:  # noqa: BLE001 - the loser is told the memory is no longer active
                    out.append(exc)

            pair = [threading.Thread(target=supersede, args=(h,)) for h in handles]
            for thread in pair:
                thread.start()
            for thread in pair:
                thread.join(timeout=60)
            assert sum(isinstance(r, str) for r in results) == 1, results  # one replacement, never two
    finally:
        for handle in handles:
            handle.close()
