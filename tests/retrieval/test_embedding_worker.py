"""Recall embeds the query on a worker thread while it reads the keyword lane — for a provider that waits on the
network; the local model embeds on the calling thread (ADR 0042). The workers live on from recall to recall (a
thread's start cost ~0.2 ms, 5 % of a recall at 10,000 memories): these tests hold the promises that come with
reuse — one worker for recalls one after another, more when recalls overlap, an embedder's failure still reaching
the caller, and a forked child that starts its own worker."""

from __future__ import annotations

import os
import signal
import threading
from typing import Any

import pytest

from cerebro import Brain
from tests.fakes import FakeEmbedder

pytestmark = pytest.mark.file_only  # the workers are the same whatever the engine


class _Recording(FakeEmbedder):
    """The fake embedder, noting the thread each call ran on (the Thread object itself: its id could be reused)."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: list[threading.Thread] = []

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.threads.append(threading.current_thread())
        return super().embed(texts)


def _recall_with_the_provider_down(brain: Brain) -> Any:
    FakeEmbedder.broken = True
    try:
        return brain.recall("walrus tusk")
    finally:
        FakeEmbedder.broken = False


def _with_embedder(brain: Brain, embedder: FakeEmbedder) -> None:
    brain.handle.embedding_settings()  # read now: a later read must not replace the embedder set here
    brain.handle._embedder = embedder


def test_recalls_one_after_another_embed_on_one_long_lived_worker(fake_brain: Brain) -> None:
    fake_brain.add("the walrus tusk is ivory")
    recording = _Recording()
    _with_embedder(fake_brain, recording)
    for _ in range(4):
        assert fake_brain.recall("walrus tusk").mode == "hybrid"
    assert len(recording.threads) == 4
    assert len(set(recording.threads)) == 1, "each recall started a thread of its own"
    assert recording.threads[0] is not threading.current_thread()
    assert recording.threads[0].daemon, "a worker must never hold up the process's exit"


def test_overlapping_recalls_each_get_a_worker(fake_brain: Brain) -> None:
    fake_brain.add("the walrus tusk is ivory")
    both_embedding = threading.Barrier(2, timeout=10)

    class _Meeting(FakeEmbedder):
        def embed(self, texts: list[str]) -> list[list[float]]:
            both_embedding.wait()  # two recalls served by one worker would never meet here: it times out
            return super().embed(texts)

    _with_embedder(fake_brain, _Meeting())
    modes: list[str] = []

    def recall() -> None:
        with Brain.open(fake_brain.path) as other:
            _with_embedder(other, fake_brain.handle._embedder)
            modes.append(other.recall("walrus tusk").mode)

    callers = [threading.Thread(target=recall) for _ in range(2)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join(timeout=30)
    assert sorted(modes) == ["hybrid", "hybrid"]  # a broken barrier would have made both keyword-only


def test_an_embedder_that_fails_on_the_worker_still_degrades_the_recall_and_leaves_the_worker_usable(
    fake_brain: Brain,
) -> None:
    fake_brain.add("the walrus tusk is ivory")
    recording = _Recording()
    _with_embedder(fake_brain, recording)
    failed = _recall_with_the_provider_down(fake_brain)
    assert failed.mode == "keyword-fallback"
    assert "fake provider is down" in failed.notices[0]
    assert fake_brain.recall("walrus tusk").mode == "hybrid"
    assert len(set(recording.threads)) == 1


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_a_forked_child_recalls_with_a_worker_of_its_own(fake_brain: Brain) -> None:
    fake_brain.add("the walrus tusk is ivory")
    assert fake_brain.recall("walrus tusk").mode == "hybrid"  # the parent now has an idle worker
    pid = os.fork()
    if pid == 0:  # the child: the parent's worker thread does not exist here
        code = 3
        try:
            signal.alarm(20)  # waiting on the parent's worker would hang: end the child instead
            with Brain.open(fake_brain.path) as child:
                code = 0 if child.recall("walrus tusk").mode == "hybrid" else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_many_concurrent_recalls_leave_each_idle_worker_listed_once(fake_brain: Brain) -> None:
    from cerebro.brain import query_embedding

    fake_brain.add("the walrus tusk is ivory")
    modes: list[str] = []

    def recalls() -> None:
        with Brain.open(fake_brain.path) as other:
            modes.extend(other.recall("walrus tusk").mode for _ in range(15))

    callers = [threading.Thread(target=recalls) for _ in range(6)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join(timeout=60)
    assert modes == ["hybrid"] * 90
    idle = query_embedding._IDLE_WORKERS
    assert len({id(inbox) for inbox in idle}) == len(idle)  # a worker listed twice would get two jobs at once


def test_a_burst_of_overlapping_recalls_leaves_few_idle_workers_behind(fake_brain: Brain) -> None:
    from cerebro.brain import query_embedding

    fake_brain.add("the walrus tusk is ivory")
    callers_count = query_embedding.MAX_IDLE_WORKERS + 4
    all_embedding = threading.Barrier(callers_count, timeout=20)

    class _Meeting(FakeEmbedder):
        def embed(self, texts: list[str]) -> list[list[float]]:
            all_embedding.wait()  # every recall holds a worker at once: the burst needs a worker each
            return super().embed(texts)

    modes: list[str] = []

    def recall() -> None:
        with Brain.open(fake_brain.path) as other:
            _with_embedder(other, _Meeting())
            modes.append(other.recall("walrus tusk").mode)

    callers = [threading.Thread(target=recall) for _ in range(callers_count)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join(timeout=60)
    assert modes == ["hybrid"] * callers_count
    assert len(query_embedding._IDLE_WORKERS) <= query_embedding.MAX_IDLE_WORKERS
    assert fake_brain.recall("walrus tusk").mode == "hybrid"  # an idle worker still serves


class _Local(_Recording):
    provider = "local"  # CPU work in this process: nothing to overlap with


def test_the_local_model_embeds_on_the_calling_thread_and_its_failure_still_degrades_the_recall(
    fake_brain: Brain,
) -> None:
    fake_brain.add("the walrus tusk is ivory")
    local = _Local()
    _with_embedder(fake_brain, local)
    assert fake_brain.recall("walrus tusk").mode == "hybrid"
    assert local.threads == [threading.current_thread()]  # no worker's wake-up and GIL trading to pay for
    failed = _recall_with_the_provider_down(fake_brain)
    assert failed.mode == "keyword-fallback"
    assert "fake provider is down" in failed.notices[0]


def test_the_local_model_embeds_on_a_worker_once_the_warm_index_is_big(fake_brain: Brain, monkeypatch) -> None:
    """On a big brain the keyword lane costs milliseconds (~1.5 ms at 100,000 memories): then overlapping it with the
    embedding is worth the hand-off's CPU."""
    from cerebro.brain import query_embedding
    from cerebro.store import warm

    monkeypatch.setattr(warm, "MIN_VECTORS", 1)
    for n in range(3):
        fake_brain.add(f"the walrus tusk is ivory {n}")
    monkeypatch.setattr(query_embedding, "LOCAL_OVERLAP_FROM", 3)
    local = _Local()
    _with_embedder(fake_brain, local)
    for _ in range(3):  # the second recall loads the warm index: the third overlaps
        assert fake_brain.recall("walrus tusk").mode == "hybrid"
    assert fake_brain.handle.warm_vectors() == 3
    assert local.threads[0] is threading.current_thread()
    assert local.threads[-1] is not threading.current_thread()


@pytest.mark.parametrize(
    ("component", "accepted"),
    [(float("nan"), False), (float("inf"), False), (float("-inf"), False), (1e30, False), (1e18, True)],
    ids=["nan", "inf", "minus-inf", "too-long-for-float32", "long-but-fine"],
)
def test_a_vector_non_finite_or_too_long_for_float32_is_refused_and_the_recall_degrades(
    fake_brain: Brain, component: float, accepted: bool
) -> None:
    """sqlite-vec compares in float32: a query vector whose squared length overflows there gave NULL distances and a
    crash (1e30 is finite in Python); one that fits is searched as usual."""
    fake_brain.add("the walrus tusk is ivory")

    class _Odd(FakeEmbedder):
        def embed(self, texts: list[str]) -> list[list[float]]:
            return [[component, component, *vector[2:]] for vector in super().embed(texts)]

    _with_embedder(fake_brain, _Odd())
    result = fake_brain.recall("walrus tusk")
    if accepted:
        assert result.mode == "hybrid"
    else:
        assert result.mode == "keyword-fallback"
        assert "non-finite vector (or one too long for float32)" in result.notices[0]


def test_a_brain_whose_embedder_cannot_be_built_recalls_by_keyword_with_a_notice(fake_brain: Brain, fake_brain_path):
    """A brain made by a newer cerebro may name a provider this build lacks: building its embedder fails, and recall
    degrades to the keyword lane with a notice, as when the embedder fails on its call — it does not raise."""
    import sqlean.dbapi2 as sqlean

    fake_brain.add("the walrus tusk is ivory")
    fake_brain.close()
    conn = sqlean.connect(str(fake_brain_path))
    try:
        conn.execute("UPDATE schema_meta SET value = 'from-the-future' WHERE key = 'embedding_provider'")
        conn.commit()
    finally:
        conn.close()
    with Brain.open(fake_brain_path) as brain:
        result = brain.recall("walrus tusk")
    assert result.mode == "keyword-fallback"
    assert "from-the-future" in result.notices[0]
    assert [r.node.content for r in result.results] == ["the walrus tusk is ivory"]


def test_a_worker_never_reads_the_brain_while_the_recall_waits_for_it(fake_brain: Brain, monkeypatch) -> None:
    """The recall waits for the worker inside its read snapshot, holding the connection's lock (ADR 0043). Were the
    worker to read the embedding settings itself — forgotten meanwhile by a re-embed on another thread — it would wait
    for that lock forever. Its settings and embedder are read before it starts."""
    from cerebro.brain import query_embedding

    fake_brain.add("the walrus tusk is ivory")
    started, go = threading.Event(), threading.Event()
    waiting = threading.Event()
    real_init, real_result = query_embedding._Background.__init__, query_embedding._Background.result

    def late_start(self, work, *args):  # the worker is scheduled late: after the settings were forgotten
        def when_told(*a):
            started.set()
            go.wait()
            return work(*a)

        real_init(self, when_told, *args)

    def result(self):
        waiting.set()  # the recall now waits inside its snapshot
        return real_result(self)

    monkeypatch.setattr(query_embedding._Background, "__init__", late_start)
    monkeypatch.setattr(query_embedding._Background, "result", result)
    found: list[Any] = []
    recall = threading.Thread(target=lambda: found.append(fake_brain.recall("walrus tusk")), daemon=True)
    recall.start()
    assert started.wait(30) and waiting.wait(30)
    fake_brain.handle.forget_model()  # as a re-embed that just finished on another thread does
    go.set()
    recall.join(30)  # a deadline only to turn a hang into a failure
    assert not recall.is_alive(), "the worker waited for the lock the recall holds"
    assert found[0].mode == "hybrid" and found[0].results
