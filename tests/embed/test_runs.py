"""How the local model's windows are grouped into runs (cerebro/embed/runs.py, ADR 0050): pure planning, no model."""

from __future__ import annotations

import itertools
import random

import pytest

from cerebro.embed import runs


def _padded(run: list[int], lengths: list[int]) -> int:
    return len(run) * max(lengths[i] for i in run)


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("workers", [1, 2, 4])
def test_every_window_is_in_one_run_in_length_order_and_no_run_outgrows_the_budget(seed, workers):
    rng = random.Random(seed)
    lengths = [rng.choice([rng.randint(2, 40), rng.randint(40, 256)]) for _ in range(rng.randint(8, 300))]
    planned = runs.plan(lengths, workers)
    flat = [i for run in planned for i in run]
    assert sorted(flat) == list(range(len(lengths)))  # each window exactly once
    assert [lengths[i] for i in flat] == sorted(lengths)  # shortest first: neighbours pad little
    assert all(_padded(run, lengths) <= runs.RUN_TOKENS or len(run) == 1 for run in planned)
    # Not needlessly small: a run and the next window would outgrow the budget together.
    assert all((len(run) + 1) * lengths[nxt[0]] > runs.RUN_TOKENS for run, nxt in itertools.pairwise(planned))


@pytest.mark.parametrize(
    ("lengths", "sizes"),
    [
        ([47] * 6, [2, 2, 2]),  # bench sentences: two a run (3 × 47 = 141 padded tokens is past 128)
        ([14] * 20, [9, 9, 2]),  # queries of four words: nine a run (126 padded tokens; ten would be 140)
        ([256, 200, 129, 128], [1, 1, 1, 1]),  # long windows alone
        ([10, 120], [1, 1]),  # a short one does not pad to the long one's length
    ],
)
def test_runs_hold_what_fits_in_the_budget(lengths, sizes):
    assert [len(run) for run in runs.plan(lengths, 1)] == sizes


@pytest.mark.parametrize(
    ("count", "workers", "sizes"),
    [(8, 2, [4, 4]), (9, 4, [2, 2, 2, 3]), (7, 3, [2, 2, 3])],
)
def test_a_few_short_windows_are_split_evenly_among_the_threads(count, workers, sizes):
    """Eight queries fit one run; on two threads, two runs of four finish sooner than one of eight."""
    assert [len(run) for run in runs.plan([12] * count, workers)] == sizes


@pytest.mark.parametrize(
    ("lengths", "workers"),
    [([10] * 8 + [256], 4), ([3] * 42 + [256], 4), ([10] * 9 + [256], 3), ([5, 9, 200, 7, 120, 6, 8, 60], 4)],
)
def test_the_even_split_keeps_the_budget_too(lengths, workers):
    """A handful of short windows and a long one on four threads: the long one still runs alone."""
    planned = runs.plan(lengths, workers)
    assert len(planned) >= workers
    assert sorted(i for run in planned for i in run) == list(range(len(lengths)))
    assert all(_padded(run, lengths) <= runs.RUN_TOKENS or len(run) == 1 for run in planned)


def test_no_windows_no_runs():
    assert runs.plan([], 2) == []


def test_runs_are_dealt_to_the_threads_in_turn_and_a_failure_is_raised_on_the_caller():
    import threading

    seen: dict[threading.Thread, list[int]] = {}  # by thread, not ident: a finished thread's ident is reused
    lock = threading.Lock()

    def record(batch: list[int]) -> None:
        with lock:
            seen.setdefault(threading.current_thread(), []).append(batch[0])

    runs.run_all([[k] for k in range(7)], 2, record)
    assert sorted(sorted(v) for v in seen.values()) == [[0, 2, 4, 6], [1, 3, 5]]
    assert threading.current_thread() not in seen

    def fail(batch: list[int]) -> None:
        raise RuntimeError(f"run {batch[0]} failed")

    with pytest.raises(RuntimeError, match="failed"):
        runs.run_all([[0], [1]], 2, fail)
    on_caller: list[int] = []
    runs.run_all([[0], [1], [2]], 1, lambda batch: on_caller.append(threading.get_ident()))
    assert on_caller == [threading.get_ident()] * 3
