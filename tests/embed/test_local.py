"""Provider ``local``: the real all-MiniLM-L6-v2 int8 model (installed with cerebro). Few and fast."""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import shutil
from pathlib import Path

import numpy as np
import pytest

from cerebro.embed import local
from cerebro.embed.local import MAX_TOKENS, MODEL_SHA256, TOKENIZER_PATH, LocalEmbedder, ModelUnavailable


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    return LocalEmbedder()


def cosine(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_dimensions_unit_norm_and_deterministic(embedder):
    texts = ["How does authentication work?", "JWT auth with refresh tokens", "My cat likes tuna"]
    first = embedder.embed(texts)
    second = embedder.embed(texts)
    assert embedder.dimensions == 384 and embedder.provider == "local"
    assert [len(v) for v in first] == [384, 384, 384]
    for vector in first:
        assert math.isclose(float(np.linalg.norm(vector)), 1.0, abs_tol=1e-5)
        assert all(math.isfinite(x) for x in vector)
    assert first == second
    # one at a time gives the same vectors as the batch (padding and length-sorting do not leak)
    assert np.allclose(embedder.embed([texts[2]])[0], first[2], atol=1e-5)


def test_semantically_sensible(embedder):
    query, related, unrelated = embedder.embed(
        ["How does authentication work?", "JWT auth with refresh tokens", "My cat likes tuna"]
    )
    assert cosine(query, related) > cosine(query, unrelated) + 0.1


def test_empty_and_blank_text(embedder):
    for vector in embedder.embed(["", "   ", "\n"]):
        assert len(vector) == 384
        assert math.isclose(float(np.linalg.norm(vector)), 1.0, abs_tol=1e-5)


def test_no_texts_gives_no_vectors(embedder):
    """Like the network providers (``embed_chunked``), an empty batch is an empty answer, not a crash."""
    assert embedder.embed([]) == []


def test_long_text_is_the_normalised_mean_of_its_windows(embedder):
    rng = random.Random(7)
    vocabulary = [
        "the",
        "service",
        "retries",
        "failed",
        "webhooks",
        "with",
        "exponential",
        "backoff",
        "while",
        "the",
        "database",
        "migration",
        "adds",
        "an",
        "index",
        "on",
        "the",
        "sessions",
        "table",
        "so",
        "that",
        "refresh",
        "tokens",
        "expire",
        "quickly",
        "and",
        "authentication",
        "stays",
        "fast",
        "under",
        "load",
    ]
    text = " ".join(rng.choice(vocabulary) for _ in range(2000))
    short = "a short note about caching"

    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    ids = tokenizer.encode(text, add_special_tokens=False).ids
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    body = MAX_TOKENS - 2
    assert body == 254
    windows = [[cls, *ids[i : i + body], sep] for i in range(0, len(ids), body)]
    assert len(windows) >= 5
    assert max(len(w) for w in windows) == MAX_TOKENS

    # Two threads asked for: the windows (mixed lengths, padded in their runs) are shared out, on any machine.
    vectors = LocalEmbedder(threads=2).embed([short, text, short])
    # Each window alone through the model's own session, no padding, mean-pooled over its tokens.
    # The session this embedder runs (not the process-wide registry: a test that forgets the loaded model swaps
    # that registry, and this module-scoped embedder keeps the session it loaded). Loaded here if this test is the
    # module's first to use it (the embedder loads on first embed): it ran alone, or first on its xdist worker.
    embedder.embed([short])
    session = embedder._session
    pooled = []
    for window in windows:
        input_ids = np.asarray([window], dtype=np.int64)
        (hidden,) = session.run(
            None,
            {
                "input_ids": input_ids,
                "attention_mask": np.ones_like(input_ids),
                "token_type_ids": np.zeros_like(input_ids),
            },
        )
        mean = hidden[0].mean(axis=0)
        pooled.append(mean / np.linalg.norm(mean))
    expected = np.sum(pooled, axis=0)
    expected /= np.linalg.norm(expected)

    assert len(vectors[1]) == 384
    assert math.isclose(float(np.linalg.norm(vectors[1])), 1.0, abs_tol=1e-5)
    assert np.abs(np.asarray(vectors[1]) - expected).max() < 1e-5
    # the short texts around it keep their own vectors
    alone = embedder.embed([short])[0]
    assert np.abs(np.asarray(vectors[0]) - alone).max() < 1e-5
    assert vectors[0] == vectors[2]


# ----------------------------------------------------------------------------- the model's digest


@pytest.fixture
def fresh_load(monkeypatch):
    """Forget the process-wide model so the next embed loads (and verifies) again; restored after."""
    monkeypatch.setattr(local, "_LOADED", {})


@pytest.fixture
def model_copy(tmp_path: Path) -> Path:
    target = tmp_path / "model-copy" / "model.onnx"
    target.parent.mkdir()
    shutil.copyfile(local.model_path(), target)
    return target


@pytest.fixture
def sha_calls(monkeypatch) -> list[Path]:
    calls: list[Path] = []
    real = local._sha256

    def counting(path: Path) -> str:
        calls.append(Path(path))
        return real(path)

    monkeypatch.setattr(local, "_sha256", counting)
    return calls


def test_tampered_model_is_refused(monkeypatch, fresh_load, model_copy, isolated_home):
    data = bytearray(model_copy.read_bytes())
    data[len(data) // 2] ^= 0xFF
    model_copy.write_bytes(bytes(data))
    actual = hashlib.sha256(bytes(data)).hexdigest()
    monkeypatch.setenv("CEREBRO_LOCAL_MODEL_PATH", str(model_copy))

    with pytest.raises(ModelUnavailable) as caught:
        LocalEmbedder().embed(["anything"])
    message = str(caught.value)
    assert "sha256" in message
    assert actual in message and MODEL_SHA256 in message
    assert str(model_copy) in message
    assert caught.value.exit_code == 13
    assert local._LOADED == {}  # nothing half-loaded
    cache = isolated_home / "cache" / "model-digests.json"
    assert not cache.exists() or actual not in cache.read_text()  # a bad digest is never cached


def test_missing_model_path(monkeypatch, fresh_load, tmp_path):
    monkeypatch.setenv("CEREBRO_LOCAL_MODEL_PATH", str(tmp_path / "nope.onnx"))
    with pytest.raises(ModelUnavailable, match="not found"):
        LocalEmbedder().embed(["x"])


def test_override_path_with_a_good_copy_embeds(monkeypatch, fresh_load, model_copy, embedder):
    monkeypatch.setenv("CEREBRO_LOCAL_MODEL_PATH", str(model_copy))
    fresh = LocalEmbedder()
    assert np.allclose(fresh.embed(["hello"])[0], embedder.embed(["hello"])[0], atol=1e-6)


def test_tampered_model_on_a_brain_keeps_the_memory(monkeypatch, fresh_load, model_copy, tmp_path):
    from cerebro import Brain

    data = bytearray(model_copy.read_bytes())
    data[-100] ^= 0x01
    model_copy.write_bytes(bytes(data))
    monkeypatch.setenv("CEREBRO_LOCAL_MODEL_PATH", str(model_copy))
    path = tmp_path / "local.sqlite"
    Brain.init(path)  # local is the default
    with Brain.open(path) as brain:
        warnings: list[str] = []
        brain.on_warning = warnings.append
        node_id = brain.add("kept although the model is corrupt")
        assert brain.stats().pending_embeddings == 1
    assert len(warnings) == 1 and "sha256" in warnings[0] and node_id[:8] in warnings[0]


def test_digest_is_cached_by_path_size_mtime(model_copy, sha_calls, isolated_home):
    cache = isolated_home / "cache" / "model-digests.json"
    assert not cache.exists()

    local.verify_model(model_copy)
    assert sha_calls == [model_copy]
    written = cache.read_text()
    written_at = cache.stat().st_mtime_ns
    [entry] = json.loads(written)
    assert entry["sha256"] == MODEL_SHA256
    assert entry["key"]["path"] == str(model_copy.resolve())
    assert entry["key"]["size"] == model_copy.stat().st_size

    local.verify_model(model_copy)
    local.verify_model(model_copy)
    assert sha_calls == [model_copy]  # no re-hash
    assert cache.read_text() == written and cache.stat().st_mtime_ns == written_at  # written once

    stat = model_copy.stat()
    os.utime(model_copy, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    local.verify_model(model_copy)  # a touched file is hashed again
    assert len(sha_calls) == 2
    assert len(json.loads(cache.read_text())) == 1  # the stale entry for this path is replaced


def test_unreadable_digest_cache_means_hash_again(model_copy, sha_calls, isolated_home):
    cache = isolated_home / "cache" / "model-digests.json"
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text("{not json")
    local.verify_model(model_copy)
    assert len(sha_calls) == 1
    assert json.loads(cache.read_text())[0]["sha256"] == MODEL_SHA256


@pytest.mark.parametrize("content", ['{"key": "value"}', "[null]"])
def test_digest_cache_of_the_wrong_shape_means_hash_again(model_copy, sha_calls, isolated_home, content):
    """Valid JSON that is not a list of entries is as unusable as invalid JSON: re-hash, do not crash."""
    cache = isolated_home / "cache" / "model-digests.json"
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(content)
    local.verify_model(model_copy)
    assert len(sha_calls) == 1


@pytest.mark.parametrize("model", local.MODEL_IDS)
def test_vectors_match_the_recorded_reference(model):
    """The whole pipeline (tokens, [CLS]/[SEP], padding in a batch, masked mean pooling, normalisation) gives
    the vectors recorded in fixtures/embeddings, for each of the local models: a regression there changes recall for
    every brain on it."""
    reference = _reference(model)
    assert (reference["model"], reference["model_sha256"]) == (model, MODEL_SHA256)
    for got, expected in zip(LocalEmbedder(model).embed(reference["texts"]), reference["vectors"], strict=True):
        assert cosine(got, expected) >= 0.9999


def test_the_integer_model_is_the_default_and_close_to_the_float_one_but_not_it():
    """New brains get the integer products (ADR 0041); the float32 graph stays for brains made on it. Their vectors
    agree to the quantisation's precision (a broken rewrite scatters them) and are two models' (ADR 0011)."""
    texts = _reference(local.MODEL_ID)["texts"] + ["a", "The build broke after the Node upgrade; pinning npm fixed it."]
    integer, floats = LocalEmbedder(), LocalEmbedder(local.FLOAT_MODEL_ID)
    assert (integer.model_id, floats.model_id) == (local.MODEL_ID, "all-MiniLM-L6-v2-onnx-int8")
    for a, b in zip(integer.embed(texts), floats.embed(texts), strict=True):
        assert 0.99 <= cosine(a, b) < 0.99999
    with pytest.raises(ModelUnavailable, match="runs all-MiniLM-L6-v2-onnx-int8-dq7 or"):
        LocalEmbedder("all-MiniLM-L6-v2")


@pytest.mark.parametrize(
    ("value", "expected"), [("1", 1), ("3", 3), ("0", None), ("-2", None), ("many", None), ("", None)]
)
def test_the_thread_cap_comes_from_the_environment_when_it_is_a_positive_number(monkeypatch, value, expected):
    """Else the usable cores up to four; an embedder asked for a count takes it."""
    from cerebro.embed import local

    monkeypatch.setenv(local.ENV_THREADS, value)
    assert local._thread_count(None) == (expected or min(4, len(os.sched_getaffinity(0))))
    assert local._thread_count(2) == 2  # an explicit count wins


@pytest.mark.parametrize("fast_start", [False, True])
def test_the_model_runs_on_one_thread_whatever_the_cores(monkeypatch, fast_start):
    """No intra-op pool (ADR 0048): a query or a memory embeds faster on one thread than on two, for less CPU;
    parallel work is across runs (the caller threads below)."""
    from types import SimpleNamespace

    from cerebro.embed import local

    monkeypatch.setenv(local.ENV_THREADS, "3")
    monkeypatch.setattr(local, "_FAST_START", fast_start)

    class Options(SimpleNamespace):
        def add_session_config_entry(self, *_: str) -> None:
            pass

    onnxruntime = SimpleNamespace(SessionOptions=Options, GraphOptimizationLevel=SimpleNamespace(ORT_DISABLE_ALL=0))
    options = local._session_options(onnxruntime, "ORT_DISABLE_ALL")
    assert (options.intra_op_num_threads, options.inter_op_num_threads) == (1, 1)


def test_a_very_long_memory_is_embedded_from_its_first_windows(embedder):
    """Issue 17: a 1 MB memory took minutes and gigabytes to embed. The vector is that of its first MAX_WINDOWS
    windows: text past them changes nothing, and the work is bounded."""
    from cerebro.embed.local import MAX_WINDOWS

    words = ["cache", "deploy", "token", "retry", "schema", "index", "vector", "queue"]
    long_text = " ".join(words[i % 8] + str(i % 97) for i in range(MAX_WINDOWS * 120))  # well past the cap
    first, extended = embedder.embed([long_text, long_text + " completely different trailing words" * 500])
    assert len(embedder._windows(long_text)) == MAX_WINDOWS  # after embed: the tokenizer loads with the model
    assert np.abs(np.asarray(first) - np.asarray(extended)).max() < 1e-6


# --------------------------------------------------------------------------- the optimised graph's cache (ADR 0028)


def _reference(model: str) -> dict:
    name = {local.MODEL_ID: "minilm-int8-dq7-reference.json", local.FLOAT_MODEL_ID: "minilm-int8-reference.json"}
    return json.loads((Path(__file__).parents[2] / "fixtures/embeddings" / name[model]).read_text())


def _fresh_embedder(monkeypatch, model: str = local.MODEL_ID) -> LocalEmbedder:
    """An embedder that loads the model again (the process-wide session dropped for this test)."""
    monkeypatch.setattr(local, "_LOADED", {})
    return LocalEmbedder(model)


def _gives_the_reference(embedder: LocalEmbedder) -> bool:
    reference = _reference(embedder.model_id)
    got = embedder.embed(reference["texts"])
    return all(cosine(g, e) >= 0.9999 for g, e in zip(got, reference["vectors"], strict=True))


@pytest.mark.parametrize("model", local.MODEL_IDS)
@pytest.mark.parametrize("fast_start", [False, True])
def test_the_optimised_graph_is_cached_with_its_weights_apart_and_reused(monkeypatch, isolated_home, fast_start, model):
    import onnxruntime

    monkeypatch.setattr(local, "_FAST_START", fast_start)
    cache = local._cache_dir(onnxruntime, model)
    assert not cache.exists()
    assert _gives_the_reference(_fresh_embedder(monkeypatch, model))  # built from the package's model, then saved
    assert sorted(p.name for p in cache.iterdir()) == sorted([local.CACHE_MODEL, local.CACHE_WEIGHTS])
    assert (cache / local.CACHE_MODEL).stat().st_size < 1_000_000 < (cache / local.CACHE_WEIGHTS).stat().st_size
    assert {oct(p.stat().st_mode & 0o777) for p in cache.iterdir()} == {"0o600"}
    assert oct(cache.stat().st_mode & 0o777) == "0o700"
    assert [p.name for p in cache.parent.iterdir() if p.name.endswith(".tmp")] == []
    built = {p.name: p.stat().st_mtime_ns for p in cache.iterdir()}

    from cerebro.embed import ort_c

    runtime = (ort_c.load() if fast_start else None) or onnxruntime  # one-shot: through the C API (ADR 0052)
    real = runtime.InferenceSession

    def only_the_cache(path, sess_options=None, providers=None):  # the cache must serve the second load
        assert str(path) == str(cache / local.CACHE_MODEL), "optimised again"
        return real(path, sess_options=sess_options, providers=providers)

    monkeypatch.setattr(runtime, "InferenceSession", only_the_cache)
    assert _gives_the_reference(_fresh_embedder(monkeypatch, model))
    assert {p.name: p.stat().st_mtime_ns for p in cache.iterdir()} == built  # read, not written
    assert [p.name for p in cache.parent.iterdir() if p.is_dir()] == [cache.name]  # the other model's is not built


def test_a_graph_cached_by_another_version_of_the_rewrite_is_not_used(monkeypatch, isolated_home):
    import onnxruntime

    from cerebro.embed import integer_graph

    assert _gives_the_reference(_fresh_embedder(monkeypatch))
    first = local._cache_dir(onnxruntime, local.MODEL_ID)
    monkeypatch.setattr(local, "REWRITE_VERSION", local.REWRITE_VERSION + 1)
    rewrites = []
    real = integer_graph.rewrite
    monkeypatch.setattr(integer_graph, "rewrite", lambda model: rewrites.append(1) or real(model))
    assert _gives_the_reference(_fresh_embedder(monkeypatch))
    assert rewrites == [1] and local._cache_dir(onnxruntime, local.MODEL_ID) != first  # built afresh, apart


@pytest.mark.parametrize("model", local.MODEL_IDS)
def test_the_graph_keeps_plain_layer_norms_and_its_cache_is_named_after_the_level(monkeypatch, isolated_home, model):
    """ADR 0049: the extended level's fused SkipLayerNormalization kernel cost ~18 % of a memory's CPU; the cached graph
    is optimised at the basic level, which leaves the plain operators, and a graph cached at another level is not
    loaded as this one."""
    import onnxruntime

    assert _gives_the_reference(_fresh_embedder(monkeypatch, model))
    cache = local._cache_dir(onnxruntime, model)
    graph = (cache / local.CACHE_MODEL).read_bytes()
    assert b"LayerNormalization" in graph  # the operators are there (the graph was read) ...
    assert b"SkipLayerNormalization" not in graph  # ... unfused (the extended level's graph has twelve)
    monkeypatch.setattr(local, "OPTIMISATION", "ORT_ENABLE_EXTENDED")
    assert local._cache_dir(onnxruntime, model) != cache


def test_a_cache_named_before_the_level_was_in_its_name_is_never_loaded(monkeypatch, isolated_home):
    """An upgrade leaves the extended level's cache folder (its name without the level) beside the new one: it is
    not read, whatever it holds."""
    import onnxruntime

    new = local._cache_dir(onnxruntime, local.MODEL_ID)
    old = new.with_name(new.name.replace(f"-{local.OPTIMISATION.removeprefix('ORT_ENABLE_').lower()}-", "-"))
    assert old != new
    old.mkdir(parents=True)
    for name in (local.CACHE_MODEL, local.CACHE_WEIGHTS):
        (old / name).write_bytes(b"not a model")  # loading this would fail: the test would see it
    assert _gives_the_reference(_fresh_embedder(monkeypatch))
    assert (new / local.CACHE_MODEL).exists() and (old / local.CACHE_MODEL).read_bytes() == b"not a model"


def test_a_damaged_cache_is_built_again(monkeypatch, isolated_home):
    import onnxruntime

    assert _gives_the_reference(_fresh_embedder(monkeypatch))
    weights = local._cache_dir(onnxruntime, local.MODEL_ID) / local.CACHE_WEIGHTS
    whole = weights.stat().st_size
    with open(weights, "r+b") as handle:  # a full disk, say
        handle.truncate(whole // 3)
    assert _gives_the_reference(_fresh_embedder(monkeypatch))
    assert weights.stat().st_size == whole


def test_stale_half_built_caches_and_old_single_file_caches_are_swept(monkeypatch, isolated_home):
    import onnxruntime

    cache = local._cache_dir(onnxruntime, local.MODEL_ID)
    cache.parent.mkdir(parents=True)
    stale = cache.with_name(f"{cache.name}.1.tmp")
    fresh = cache.with_name(f"{cache.name}.2.tmp")
    # The single-file cache of earlier versions (90 MB), named before the level was part of the name (ADR 0049).
    legacy = cache.with_name(f"minilm-int8-{local.MODEL_SHA256[:12]}-ort{onnxruntime.__version__}.onnx")
    other_model = cache.with_name("minilm-int8-000000000000-ort1.0.onnx")
    sibling = cache.with_name(f"{local._cache_dir(onnxruntime, local.FLOAT_MODEL_ID).name}.1.tmp")
    for folder in (stale, fresh, sibling):
        folder.mkdir()
        (folder / local.CACHE_WEIGHTS).write_bytes(b"partial")
    legacy.write_bytes(b"old")
    other_model.write_bytes(b"not ours")
    old = os.stat(stale).st_mtime - local._STALE_BUILD_SECONDS - 1
    os.utime(stale, (old, old))
    os.utime(sibling, (old, old))
    assert _gives_the_reference(_fresh_embedder(monkeypatch))
    assert not stale.exists() and not legacy.exists()
    assert fresh.exists() and other_model.exists()  # another process may be building; not this model's file
    assert sibling.exists()  # the float32 model's own folders are its own load's to sweep
    assert (cache / local.CACHE_WEIGHTS).exists()


# --------------------------------------------------------------------------- bulk runs (issue 18)


def _distinct_texts(n: int) -> list[str]:
    rng = random.Random(18)
    words = ["cache", "deploy", "token", "retry", "schema", "index", "vector", "queue", "walrus", "orchard", "kiwi"]
    return [" ".join(rng.choice(words) + str(rng.randrange(50)) for _ in range(rng.randrange(3, 40))) for _ in range(n)]


@pytest.fixture
def recorded_runs(monkeypatch) -> list[tuple[object, object, int]]:
    """(thread, session, windows) of every run of the model."""
    import threading

    runs: list[tuple[object, object, int]] = []
    real = LocalEmbedder._run

    def run(self, session, windows, batch):
        runs.append((threading.current_thread(), session, len(batch)))
        return real(self, session, windows, batch)

    monkeypatch.setattr(LocalEmbedder, "_run", run)
    return runs


BULK = 84  # windows: several runs a thread


@pytest.mark.parametrize(
    ("threads", "count", "short", "sizes"),
    [
        (2, 4, True, [2, 2]),  # a few short windows (one run's worth): one run for each thread (ADR 0048)
        (2, 9, True, [4, 5]),
        (3, 7, True, [2, 2, 3]),  # as many threads as asked, two windows each at least
        (4, 9, True, [2, 2, 2, 3]),  # none left without a run
        (4, 9, False, None),  # longer windows: runs by padded tokens (ADR 0050), dealt to the threads in turn
        (2, 48, False, None),
        (2, BULK, False, None),
    ],
)
def test_many_texts_are_embedded_by_a_thread_per_core_with_the_vectors_of_one_at_a_time(
    recorded_runs, threads, count, short, sizes
):
    """From four windows on, the runs are shared out among caller threads on the embedder's one session, each run of
    at most RUN_TOKENS padded tokens; every window gets exactly the vector it gets alone."""
    import threading

    from cerebro.embed import runs

    embedder = LocalEmbedder(threads=threads)
    texts = [" ".join(text.split()[:3]) for text in _distinct_texts(count)] if short else _distinct_texts(count)
    one_at_a_time = [embedder.embed([text])[0] for text in texts]
    assert {thread for thread, *_ in recorded_runs} == {threading.current_thread()}  # one window: this thread
    recorded_runs.clear()
    together = embedder.embed(texts)
    assert np.array_equal(np.asarray(together), np.asarray(one_at_a_time))  # every window, exactly its vector
    used = {thread for thread, *_ in recorded_runs}
    assert len(used) == threads and threading.current_thread() not in used
    assert {session for _, session, _ in recorded_runs} == {embedder._session}  # no second session loaded
    planned = runs.plan([len(embedder._windows(text)[0]) for text in texts], threads)
    assert sorted(size for *_, size in recorded_runs) == sorted(sizes or [len(run) for run in planned])
    if sizes is None:
        assert len(planned) >= threads  # each thread has runs, each within the budget
        assert all(len(run) == 1 or _padded(embedder, texts, run) <= runs.RUN_TOKENS for run in planned)
        per_thread = [sum(1 for thread, *_ in recorded_runs if thread is t) for t in used]
        assert max(per_thread) - min(per_thread) <= 1  # dealt in turn


def _padded(embedder: LocalEmbedder, texts: list[str], run: list[int]) -> int:
    return len(run) * max(len(embedder._windows(texts[i])[0]) for i in run)


def test_a_bulk_run_embeds_with_the_embedders_own_model():
    """Each model has its session: a float32 brain's import runs the float32 graph, bit for bit its one-at-a-time
    vectors, and the two models' bulk vectors differ."""
    texts = _distinct_texts(BULK)
    bulk = {}
    for model in local.MODEL_IDS:
        embedder = LocalEmbedder(model, threads=2)
        one_at_a_time = [embedder.embed([text])[0] for text in texts[:6]]
        bulk[model] = np.asarray(embedder.embed(texts))
        assert np.array_equal(bulk[model][:6], np.asarray(one_at_a_time))
    assert local._LOADED[local.MODEL_ID, "session"] is not local._LOADED[local.FLOAT_MODEL_ID, "session"]
    assert not np.array_equal(bulk[local.MODEL_ID], bulk[local.FLOAT_MODEL_ID])


@pytest.mark.parametrize("count", [2, 3])
def test_fewer_than_four_windows_stay_on_the_calling_thread(recorded_runs, count):
    """A query, a memory, a memory of three windows: one run, on the caller's thread, whatever the cores."""
    import threading

    LocalEmbedder(threads=4).embed(_distinct_texts(count))
    assert {thread for thread, *_ in recorded_runs} == {threading.current_thread()}
    assert sum(size for *_, size in recorded_runs) == count


def test_one_thread_asked_for_embeds_on_the_calling_thread_in_runs_within_the_budget(recorded_runs):
    """``CEREBRO_EMBED_THREADS=1`` (make mutate, a busy machine): no other thread, and an import's windows still go
    in runs of at most RUN_TOKENS padded tokens — one run of them all was issue 17's memory blow-up."""
    import threading

    from cerebro.embed import runs

    embedder = LocalEmbedder(threads=1)
    texts = _distinct_texts(BULK)
    embedder.embed(texts)
    assert {thread for thread, *_ in recorded_runs} == {threading.current_thread()}
    planned = runs.plan([len(embedder._windows(text)[0]) for text in texts], 1)
    assert sorted(size for *_, size in recorded_runs) == sorted(len(run) for run in planned)
    assert len(planned) > 6 and max(len(run) for run in planned) < BULK // 4


def test_a_bulk_run_that_fails_raises_on_the_calling_thread(monkeypatch):
    calls = []

    def failing(self, session, windows, batch):
        calls.append(len(batch))
        raise RuntimeError("onnxruntime: out of memory")

    monkeypatch.setattr(LocalEmbedder, "_run", failing)
    with pytest.raises(RuntimeError, match="out of memory"):
        LocalEmbedder(threads=2).embed(_distinct_texts(BULK))
    assert 1 <= len(calls) <= 2  # a thread failed on its first run; the other stopped at it, or before its own


def test_a_failed_bulk_run_stops_the_other_threads_after_their_current_run(monkeypatch):
    import threading
    import time

    runs: dict[str, int] = {}

    def run(self, session, windows, batch):
        name = threading.current_thread().ident
        runs[name] = runs.get(name, 0) + 1
        if len(runs) == 1 and runs[name] == 1 and not getattr(run, "failed", False):
            run.failed = True
            raise RuntimeError("onnxruntime: out of memory")
        time.sleep(0.05)  # the survivor's runs are slow: it must notice the failure between them
        return np.zeros((len(batch), local.DIMENSIONS), dtype=np.float32)

    monkeypatch.setattr(LocalEmbedder, "_run", run)
    texts = _distinct_texts(256)  # ~140 runs: ~70 a thread
    with pytest.raises(RuntimeError, match="out of memory"):
        LocalEmbedder(threads=2).embed(texts)
    assert sum(runs.values()) <= 4  # the failed run, and at most the survivor's run under way plus one


def test_an_interrupted_bulk_embed_waits_for_its_threads_before_it_raises(monkeypatch):
    """Ctrl-C while the caller waits: left running, the threads had ONNX Runtime torn down under them at exit (an
    abort). The interrupt reaches the caller only once every thread has stopped."""
    import threading
    import time

    real_join = threading.Thread.join
    interrupted = []

    def join(self, timeout=None):
        if self.name == "cerebro-embed-bulk" and not interrupted:
            interrupted.append(self)
            raise KeyboardInterrupt
        return real_join(self, timeout)

    runs = []

    def run(self, session, windows, batch):
        runs.append(len(batch))
        time.sleep(0.02)
        return np.zeros((len(batch), local.DIMENSIONS), dtype=np.float32)

    monkeypatch.setattr(threading.Thread, "join", join)
    monkeypatch.setattr(LocalEmbedder, "_run", run)
    with pytest.raises(KeyboardInterrupt):
        LocalEmbedder(threads=2).embed(_distinct_texts(256))  # ~140 runs: ~70 a thread
    assert interrupted
    assert not [t for t in threading.enumerate() if t.name == "cerebro-embed-bulk"]
    assert len(runs) <= 4  # told to stop: each thread ended after the run it was in (and perhaps one it had begun)


# --------------------------------------------------------------------------- the two local models (ADR 0041)


def test_a_brain_on_the_float_model_keeps_it_and_a_new_brain_gets_the_integer_one(tmp_path):
    """Brains made before ADR 0041 recorded the float32 model: they keep embedding with it (their vectors are only
    ever compared with its own), while ``init`` gives new brains the integer model; the CLI takes either name."""
    from cerebro import Brain

    old, new = tmp_path / "old.sqlite", tmp_path / "new.sqlite"
    Brain.init(old, embed_model=local.FLOAT_MODEL_ID)
    Brain.init(new)
    text = "The build broke after the Node upgrade; pinning npm fixed it."
    for path, model in ((old, local.FLOAT_MODEL_ID), (new, local.MODEL_ID)):
        with Brain.open(path) as brain:
            assert brain.stats().embedding_model == model and brain.embedder.model_id == model
            node_id = brain.add(text)
            vector = LocalEmbedder(model).embed([text])[0]
            knn = brain.handle.store.vectors.knn
            nearest, distance = knn(brain.handle.raw, vector, 1)[0]
            assert nearest == node_id and distance < 1e-3  # int8 storage: only its rounding apart
            other = LocalEmbedder(next(m for m in local.MODEL_IDS if m != model)).embed([text])[0]
            assert knn(brain.handle.raw, other, 1)[0][1] > 2 * distance
