"""A recall's query embedding, under way while the recall reads the brain: on a long-lived worker thread for a
provider that waits on the network (or the local model on a big brain), else inline (ADR 0042)."""

from __future__ import annotations

import os
from functools import partial
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable
    from queue import SimpleQueue

    from cerebro.brain.handle import Handle

LOCAL_OVERLAP_FROM = 50_000  # warm vectors from which the local model's embedding overlaps the keyword lane too
# How long a recall waits for its query's vector before it goes on with the keyword lane alone (ADR 0062): an agent
# waits on it, and a provider that has not answered in this time is stalled or down (a provider's own call gives up
# after 30 s, retries included; the worker finishes it on its own and is then idle again).
QUERY_WAIT_SECONDS = 10.0


def under_way(h: Handle, query: str) -> _Background | _Inline:
    """The query's embedding, under way. A provider that waits on the network embeds on another thread while this
    one reads the settings and runs the keyword lane, which needs no vector (HTTP and SQLite release the GIL). The
    local model's work is CPU either way: handing it to a thread cost ~0.13 ms of CPU a recall (waking the worker,
    the threads trading the GIL at each SQLite call) to save the keyword lane's time from the wall — ~0.3 ms at 10,000
    memories, ~2 ms at 100,000 — so it embeds here, first, until a long-lived process's brain is big (ADR 0042)."""
    try:
        # Read here: the worker must not read the brain, as this thread waits for it holding the connection's lock.
        settings, embedder = h.embedding_settings(), h.embedder
    except Exception:  # noqa: BLE001 - no embedder to build (a provider or model this build lacks): result() says so
        return _Inline(h.embed, [query])
    embed = partial(h.embed, settings=settings, embedder=embedder)
    return (
        _Background(embed, [query])
        if embedder.provider != "local" or h.warm_vectors() >= LOCAL_OVERLAP_FROM
        else _Inline(embed, [query])
    )


class _Inline:
    """``work(*args)`` run now; :meth:`result` returns or raises as it did (the interface of :class:`_Background`)."""

    def __init__(self, work: Callable[..., Any], *args: Any) -> None:  # noqa: ANN401 - the embedder's call and its arguments
        self._run(work, args)

    def _run(self, work: Callable[..., Any], args: tuple[Any, ...]) -> None:
        try:
            self._outcome: tuple[bool, Any] = (True, work(*args))
        except BaseException as exc:  # noqa: BLE001 - handed to result(), where a failed embedding degrades the recall
            self._outcome = (False, exc)

    def result(self) -> Any:  # noqa: ANN401 - what that call returned
        ok, value = self._outcome
        if not ok:
            raise value
        return value


class _Background(_Inline):
    """``work(*args)`` on another thread; :meth:`result` waits for it and returns or raises as it did.

    The thread is one of a few long-lived daemon workers, reused from recall to recall: starting a thread cost
    ~0.2 ms of CPU, 5 % of a recall at 10,000 memories in a long-lived process (issue 18). A worker is added only
    when every one is busy (concurrent recalls), and daemon workers never hold up the process's exit."""

    def __init__(self, work: Callable[..., Any], *args: Any) -> None:  # noqa: ANN401 - the embedder's call and its arguments, run on a thread
        import threading
        from queue import SimpleQueue

        self._done = threading.Event()
        self._outcome = (False, None)
        try:
            inbox = _IDLE_WORKERS.pop()  # the one idle last: list.pop and append are atomic
        except IndexError:
            inbox = SimpleQueue()
            try:
                threading.Thread(target=_serve, args=(inbox,), name="cerebro-embed", daemon=True).start()
            except RuntimeError:  # a process at its limit of threads: the query is embedded here instead
                self._run(work, args)
                self._done.set()
                return
        inbox.put((self, work, args))

    def result(self) -> Any:  # noqa: ANN401 - what that call returned
        if not self._done.wait(QUERY_WAIT_SECONDS):
            from cerebro.embed.base import EmbeddingError

            raise EmbeddingError(f"the embedding provider did not answer within {QUERY_WAIT_SECONDS:g} s")
        return super().result()


_IDLE_WORKERS: list[Any] = []  # idle workers' inboxes (each a queue.SimpleQueue), the one idle last at the end
# A forked child has none of its parent's threads: it starts its own workers rather than wait on the parent's.
os.register_at_fork(after_in_child=_IDLE_WORKERS.clear)


MAX_IDLE_WORKERS = 4  # a burst of overlapping recalls leaves no more idle threads than this behind it


def _serve(inbox: SimpleQueue[Any]) -> None:
    """A worker's life: run what arrives in its inbox, offer the inbox back as idle, then say the job is done —
    in that order, so that the caller's next recall finds this worker idle rather than starting another. A worker
    that finds enough others idle ends instead."""
    while True:
        job, work, args = inbox.get()
        job._run(work, args)
        retiring = len(_IDLE_WORKERS) >= MAX_IDLE_WORKERS
        if not retiring:
            _IDLE_WORKERS.append(inbox)
        job._done.set()
        del job, work, args  # drop the last call's references (its result lives on in the caller's job)
        if retiring:
            return
