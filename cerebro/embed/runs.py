"""How the local model's windows are grouped into runs and shared out among caller threads (ADRs 0048, 0050).

A run is one call of the model on a padded matrix of windows. Its cost per window grows with the matrix: past ~128
padded tokens the activations leave the core's cache, and on this machine a window of a run of 16 bench sentences
(47 tokens) cost 5.2 ms of CPU where one of a run of two or three cost 4.1; sixteen 256-token windows together cost
58 ms each, alone 35 ms. So a run holds the windows that fit in RUN_TOKENS padded tokens (windows × the longest of
them), taken in length order so that they pad little; a longer window runs alone. A window's vector does not depend
on its run (bit for bit: each token's activations are quantised on their own, and padding is masked).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

RUN_TOKENS = 128  # padded tokens a run: 96–128 measured best for queries, sentences, LoCoMo turns and long notes
THREAD_NAME = "cerebro-embed-bulk"


def plan(lengths: Sequence[int], workers: int) -> list[list[int]]:
    """Runs of window indices (each window in exactly one), shortest windows first, each of at most RUN_TOKENS
    padded tokens unless it is one window. When that makes fewer runs than ``workers`` (a handful of short windows),
    the windows are split evenly among the threads instead: their parallel runs finish sooner than one."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    runs = _cut(order, lengths)
    if len(runs) < workers <= len(order):
        # Each thread's share, cut by the budget too: a share can end with a long window (eight short ones and a
        # 256-token one on four threads).
        shares = [order[len(order) * k // workers : len(order) * (k + 1) // workers] for k in range(workers)]
        runs = [run for share in shares for run in _cut(share, lengths)]
    return runs


def _cut(order: list[int], lengths: Sequence[int]) -> list[list[int]]:
    """``order`` (window indices, shortest first) in runs of at most RUN_TOKENS padded tokens, a longer window alone."""
    runs: list[list[int]] = []
    run: list[int] = []
    for index in order:
        if run and (len(run) + 1) * lengths[index] > RUN_TOKENS:  # the newcomer is the run's longest window
            runs.append(run)
            run = []
        run.append(index)
    if run:
        runs.append(run)
    return runs


def run_all(runs: list[list[int]], workers: int, run: Callable[[list[int]], None]) -> None:
    """``run(batch)`` for every run: on the calling thread for one worker, else on ``workers`` threads, run k on
    thread k mod workers (the runs are in length order: each thread gets its share of every length, and the threads'
    totals differ by at most about one run — a lone 256-token window costs ~35 ms, a run of short ones 5–12).
    A failure stops the other threads after their current run and is raised here; so is an interrupt of the caller,
    once every thread has stopped — left running, they would have ONNX Runtime torn down under them at exit."""
    if workers <= 1:
        for batch in runs:
            run(batch)
        return
    failures: list[BaseException] = []
    stop = threading.Event()

    def work(share: list[list[int]]) -> None:
        try:
            for batch in share:
                if stop.is_set():  # another thread failed, or the caller was interrupted
                    return
                run(batch)
        except BaseException as exc:  # noqa: BLE001 - raised again on the calling thread
            failures.append(exc)
            stop.set()

    threads = [
        threading.Thread(target=work, args=(runs[w::workers],), name=THREAD_NAME, daemon=True) for w in range(workers)
    ]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    except BaseException:
        stop.set()
        for thread in threads:
            while thread.is_alive():
                try:
                    thread.join()
                except BaseException:  # noqa: BLE001, S112 - a second interrupt: a run takes milliseconds, wait it out
                    continue
        raise
    if failures:
        raise failures[0]
