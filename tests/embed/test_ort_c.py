"""ONNX Runtime through its C API (ADR 0052): a one-shot process embeds without NumPy or the ``onnxruntime`` package,
and gets the vectors, bit for bit, that a server or an import gets for the same text."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from array import array
from pathlib import Path

import numpy as np
import pytest

from cerebro.embed import local, ort_c, pooling
from cerebro.embed.local import LocalEmbedder
from cerebro.embed.wordpiece import AsciiWordPiece

LONG = " ".join(f"{word}{i % 97}" for i, word in enumerate(["cache", "deploy", "token", "retry", "schema"] * 260))
TEXTS = [
    "How does authentication work?",
    "JWT auth with refresh tokens rotate every fifteen minutes; the refresh endpoint is /auth/refresh.",
    "",
    "Café au lait — naïve façade, 東京の天気, emoji 🚀 and Ελληνικά",  # not ASCII: the tokenizers package's ids
    LONG,  # windows enough to be shared out among caller threads
    "short",
]


def _embed(
    monkeypatch, model: str, *, c_api: bool, texts: list[str], threads: int | None = None, fast_start: bool = True
) -> list[list[float]]:
    """``texts`` embedded by a fresh embedder — a one-shot one (the fast-start options) through the C API or the
    package, or (``fast_start=False``) a long-lived process's. Its changes are undone on return, the test's own (its
    isolated CEREBRO_HOME) kept."""
    with monkeypatch.context() as patch:
        patch.setattr(local, "_LOADED", {})
        patch.setattr(local, "_FAST_START", fast_start)
        if not c_api:
            patch.setattr(ort_c, "load", lambda: None)  # as where the library cannot be found
        embedder = LocalEmbedder(model, threads=threads)
        vectors = embedder.embed(texts)
        assert isinstance(embedder._session, ort_c.Session) is c_api
    return vectors


@pytest.mark.parametrize("pooled_in", ["python", "numpy"])
@pytest.mark.parametrize("model", local.MODEL_IDS)
def test_the_c_api_gives_the_packages_vectors_bit_for_bit(monkeypatch, isolated_home, model, pooled_in):
    """A memory the CLI adds (C API) and the package's one-shot session meet on identical vectors: the same engine,
    graph and options, and the pooling repeated in float32 step for step (in Python; in NumPy for a long text). A
    long-lived process (an MCP server, an import) pre-packs the weights for its kernels: for the default model the
    same vectors still; for the float32 model, which multiplies in float32, the packed kernel's sums round apart in
    the last bits (1.6e-7 a component, measured) — not bit for bit there."""
    monkeypatch.setattr(pooling, "NUMPY_FROM_TOKENS", 10**9 if pooled_in == "python" else 0)
    _embed(monkeypatch, model, c_api=False, texts=TEXTS[:1])  # the graph cache built: both load it below
    by_c = _embed(monkeypatch, model, c_api=True, texts=TEXTS, threads=2)
    by_package = _embed(monkeypatch, model, c_api=False, texts=TEXTS, threads=2)
    by_server = _embed(monkeypatch, model, c_api=False, texts=TEXTS, threads=2, fast_start=False)
    assert len(by_c) == len(TEXTS) and all(len(v) == local.DIMENSIONS for v in by_c)
    assert by_c == by_package
    if model == local.MODEL_ID:
        assert by_c == by_server
    else:
        assert float(np.abs(np.asarray(by_c) - np.asarray(by_server)).max()) <= 1e-6
    assert abs(float(np.linalg.norm(by_c[0])) - 1.0) < 1e-6


def test_the_c_api_builds_the_graph_cache_the_package_then_loads(monkeypatch, isolated_home):
    """The first one-shot process on a machine builds the optimised graph (C API); a server loads that cache."""
    import onnxruntime

    cache = local._cache_dir(onnxruntime, local.MODEL_ID)
    first = _embed(monkeypatch, local.MODEL_ID, c_api=True, texts=TEXTS[:2])
    assert sorted(p.name for p in cache.iterdir()) == sorted([local.CACHE_MODEL, local.CACHE_WEIGHTS])
    assert {oct(p.stat().st_mode & 0o777) for p in cache.iterdir()} == {"0o600"}
    real = onnxruntime.InferenceSession

    def only_the_cache(path, sess_options=None, providers=None):  # the package must load what the C API built
        assert str(path) == str(cache / local.CACHE_MODEL), "optimised again"
        return real(path, sess_options=sess_options, providers=providers)

    monkeypatch.setattr(onnxruntime, "InferenceSession", only_the_cache)
    assert _embed(monkeypatch, local.MODEL_ID, c_api=False, texts=TEXTS[:2]) == first


def test_a_damaged_cache_is_built_again_through_the_c_api(monkeypatch, isolated_home):
    """ONNX Runtime's refusal of a damaged cache comes back as an error (its message), and the cache is rebuilt."""
    import onnxruntime

    first = _embed(monkeypatch, local.MODEL_ID, c_api=True, texts=TEXTS[:1])
    model = local._cache_dir(onnxruntime, local.MODEL_ID) / local.CACHE_MODEL
    model.write_bytes(b"not a model")
    runtime = ort_c.load()
    assert runtime is not None
    with pytest.raises(ort_c.OrtError, match=r"\S"):
        runtime.InferenceSession(str(model), runtime.SessionOptions())
    assert _embed(monkeypatch, local.MODEL_ID, c_api=True, texts=TEXTS[:1]) == first
    assert model.read_bytes() != b"not a model"


def test_without_the_library_a_one_shot_process_uses_the_package_and_says_why(monkeypatch, tmp_path, capsys):
    from cerebro import logs

    monkeypatch.setenv("CEREBRO_LOG", "info")  # the diagnostic's level: a slower start is no warning
    monkeypatch.setattr(logs, "_structlog_level", None)  # configured afresh, on this test's stderr
    monkeypatch.setattr(ort_c, "library_path", lambda: None)
    monkeypatch.setattr(ort_c, "_RUNTIME", [])
    assert ort_c.load() is None
    assert ort_c.open_session(lambda engine: engine, c_api=True).__name__ == "onnxruntime"  # the package
    not_a_library = tmp_path / "libonnxruntime.so.1"
    not_a_library.write_bytes(b"\x7fELF but not really")
    monkeypatch.setattr(ort_c, "library_path", lambda: not_a_library)
    monkeypatch.setattr(ort_c, "_RUNTIME", [])
    assert ort_c.load() is None  # a library that will not load: the package, not a crash
    said = [line for line in capsys.readouterr().err.splitlines() if "onnxruntime_c_api_not_used" in line]
    assert len(said) == 2 and "no ONNX Runtime library" in said[0] and "libonnxruntime.so.1" in said[1]
    monkeypatch.setattr(logs, "_structlog_level", None)


def test_a_one_shot_recall_and_add_import_neither_numpy_nor_the_package(tmp_path):
    """The point of the C API: ~110 ms of imports off every `cerebro recall "…"` and `cerebro add` (issue 18); nor
    hashlib (OpenSSL): the short digests use the builtin SHA-256 (ADR 0053); nor the model's rewrite once its graph is
    cached; and a one-brain recall calls the brain's modules on a handle, without the Brain facade's imports."""
    project = tmp_path / "project"
    project.mkdir()
    env_code = (
        "import atexit, json, sys\n"
        "watched = ('numpy', 'onnxruntime', 'hashlib', 'cerebro.embed.integer_graph', 'cerebro.api')\n"
        "atexit.register(lambda: print(json.dumps([m for m in watched if m in sys.modules]), file=sys.stderr))\n"
        "sys.argv = ['cerebro', *sys.argv[1:]]\n"
        "from cerebro.cli.app import main\n"
        "sys.exit(main())\n"
    )

    def run(*args: str) -> tuple[str, list[str]]:
        done = subprocess.run(
            [sys.executable, "-c", env_code, *args], capture_output=True, text=True, check=True, cwd=project
        )
        return done.stdout, json.loads(done.stderr.strip().splitlines()[-1])

    run("init", "--skip-integration", "-p", str(project))
    run("add", "-p", str(project), "the first add on a machine builds the graph cache (its rewrite uses NumPy)")
    _, loaded = run("add", "-p", str(project), "the deploy key rotates every ninety days")
    assert loaded == []
    found, loaded = run("recall", "-p", str(project), "--format", "json", "when does the deploy key rotate")
    assert loaded == []
    assert json.loads(found)["results"][0]["content"] == "the deploy key rotates every ninety days"


# --------------------------------------------------------------------------- the pooling, against NumPy's


class _Model:
    """Stand-in hidden states (a function of the window and the token), served the way each engine serves them: one
    window at a time (the C API) or padded runs (the package; the padding filled with junk the mask must hide)."""

    def __init__(self, dimensions: int, scale: float) -> None:
        self.dimensions, self.scale = dimensions, scale

    def _rows(self, window: list[int]) -> np.ndarray:
        rng = np.random.default_rng(abs(hash(tuple(window))) % 2**32)
        rows = (rng.standard_normal((len(window), self.dimensions)) * self.scale).astype(np.float32)
        rows[:, 0] = -0.0  # a column of negative zeros: NumPy's sums start from +0.0, so must the pure Python's
        return rows

    def hidden_states(self, window: list[int], dimensions: int) -> array:
        return array("f", self._rows(window).tobytes())

    def run(self, _outputs: None, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        ids, mask = feed["input_ids"], feed["attention_mask"]
        hidden = np.full((*ids.shape, self.dimensions), 7.5, dtype=np.float32)  # padding: junk
        for row in range(ids.shape[0]):
            length = int(mask[row].sum())
            hidden[row, :length] = self._rows(ids[row, :length].tolist())
        return [hidden]


@pytest.mark.parametrize("pooled_in", ["python", "numpy"])
@pytest.mark.parametrize(("dimensions", "scale"), [(384, 1.0), (384, 40.0), (384, 1e-3), (5, 1.0), (1000, 2.0)])
def test_the_pooling_repeats_numpys_float32_arithmetic_exactly(monkeypatch, dimensions, scale, pooled_in):
    """Mean of a window's tokens, unit vectors, a text's windows added and made a unit vector: the C API path's pure
    Python against LocalEmbedder's NumPy, on texts of one to many windows (padded runs, caller threads), lengths
    that reach each branch of NumPy's pairwise summation (fewer than 8 values, a block, halves)."""
    monkeypatch.setattr(local, "DIMENSIONS", dimensions)
    monkeypatch.setattr(pooling, "NUMPY_FROM_TOKENS", 10**9 if pooled_in == "python" else 0)
    embedder = LocalEmbedder(threads=2)
    embedder._wordpiece = AsciiWordPiece.load()
    embedder._cls, embedder._sep = embedder._wordpiece.token_id("[CLS]"), embedder._wordpiece.token_id("[SEP]")
    rng = random.Random(dimensions)
    words = ["cache", "deploy", "token", "retry", "schema", "index", "vector", "queue", "walrus", "orchard"]
    texts = [" ".join(rng.choice(words) for _ in range(rng.choice([1, 3, 9, 40, 130, 300, 700]))) for _ in range(24)]
    embedder._session = _Model(dimensions, scale)
    by_numpy = embedder.embed(texts)
    windows, owner = [], []
    for index, text in enumerate(texts):
        for window in embedder._windows(text):
            windows.append(window)
            owner.append(index)
    by_python = pooling.embed_windows(_Model(dimensions, scale), windows, owner, len(texts), dimensions, 2)
    assert [np.asarray(v, dtype=np.float32).tobytes() for v in by_python] == [
        np.asarray(v, dtype=np.float32).tobytes() for v in by_numpy
    ]  # as stored: bit for bit, the sign of a zero included


def test_the_library_is_found_inside_the_installed_package_without_importing_it():
    path = ort_c.library_path()
    assert path is not None and path.is_file()
    assert Path(path).parent.parent.name == "onnxruntime"
    code = "import sys\nfrom cerebro.embed import ort_c\nort_c.load()\nprint('onnxruntime' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"


def test_a_process_that_embedded_one_text_still_runs_bulk_work_through_the_package(monkeypatch, isolated_home):
    """The two sessions are kept apart: the C API's runs one window at a time, and once a process no longer prefers a
    fast start (a library host that set it for one text, then imports), its embedders get the package's session with
    its runs, not the one-shot session loaded before. (The CLI never turns the preference off: a one-shot command
    embeds a text or two and exits.)"""
    monkeypatch.setattr(local, "_LOADED", {})
    monkeypatch.setattr(local, "_FAST_START", True)
    one = LocalEmbedder()
    one.embed(["a query"])
    assert isinstance(one._session, ort_c.Session)
    monkeypatch.setattr(local, "_FAST_START", False)
    bulk = LocalEmbedder()
    bulk.embed(["one memory", "another memory"])
    assert not isinstance(bulk._session, ort_c.Session)


def test_a_session_the_c_api_refuses_is_opened_by_the_package(monkeypatch, isolated_home):
    """Slower, never broken: where the C API cannot open the model, the package opens it, with the same vectors."""
    expected = _embed(monkeypatch, local.MODEL_ID, c_api=False, texts=TEXTS[:2])

    def refuse(self, source, sess_options, providers=None):
        raise ort_c.OrtError("refused")

    monkeypatch.setattr(ort_c.Runtime, "InferenceSession", refuse)
    monkeypatch.setattr(local, "_LOADED", {})
    monkeypatch.setattr(local, "_FAST_START", True)
    embedder = LocalEmbedder()
    assert embedder.embed(TEXTS[:2]) == expected
    assert not isinstance(embedder._session, ort_c.Session)


def test_an_engine_that_refuses_the_api_version_is_not_used(monkeypatch):
    monkeypatch.setattr(ort_c, "API_VERSION", 10_000)
    monkeypatch.setattr(ort_c, "_RUNTIME", [])
    assert ort_c.load() is None


def test_the_engine_is_released_before_exit_and_refuses_runs_after(tmp_path):
    """ONNX Runtime 1.21–1.22 on macOS abort at exit when an environment is never released: the runtime releases
    its sessions and environment at exit (here: explicitly, then the process exits cleanly)."""
    code = (
        "import sys\n"
        "from cerebro.embed import ort_c\n"
        "from cerebro.embed.local import LocalEmbedder, prefer_fast_start\n"
        "prefer_fast_start()\n"
        "embedder = LocalEmbedder()\n"
        "assert len(embedder.embed(['a query'])[0]) == 384\n"
        "runtime = ort_c.load()\n"
        "assert runtime is not None and len(runtime.sessions) == 1\n"
        "runtime.close()\n"
        "runtime.close()  # once only\n"
        "try:\n"
        "    embedder._session.hidden_states([101, 102], 384)\n"
        "except ort_c.OrtError as exc:\n"
        "    print('refused:', exc)\n"
    )
    env = {**os.environ, "CEREBRO_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused: ONNX Runtime was released")


def test_a_run_the_engine_refuses_raises_its_message_and_the_session_still_runs(monkeypatch, isolated_home):
    """A token id outside the vocabulary makes ONNX Runtime's Gather fail: its own message, as an error — not a crash
    — and the session embeds the next window as before."""
    good = _embed(monkeypatch, local.MODEL_ID, c_api=True, texts=["a query"])
    with monkeypatch.context() as patch:
        patch.setattr(local, "_LOADED", {})
        patch.setattr(local, "_FAST_START", True)
        embedder = LocalEmbedder()
        assert embedder.embed(["a query"]) == good
        session = embedder._session
        assert isinstance(session, ort_c.Session)
        with pytest.raises(ort_c.OrtError, match=r"\S"):
            session.hidden_states([101, 10**9, 102], local.DIMENSIONS)
        assert embedder.embed(["a query"]) == good
