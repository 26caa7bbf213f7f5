"""The local model's pooling without NumPy, bit for bit as ``LocalEmbedder`` computes it with NumPy (ADR 0052).

A process that embeds one text and exits runs the model through the C API (:mod:`cerebro.embed.ort_c`) and never
imports NumPy (~50–80 ms of its start-up). The vector must still be the one a server or an import computes for the
same text — a memory added by the CLI and found by the MCP server — so each step below repeats NumPy's float32
arithmetic exactly, in the same order:

- a window's mean: its tokens' rows added in token order (NumPy reduces that axis row by row), ÷ the token count;
- a length (``np.linalg.norm``): the float32 squares summed by NumPy's pairwise summation (blocks of up to 128 values
  added in eight lanes, halves above that), then the square root;
- unit vectors, a text's windows added in window order (``np.add.at``), and that sum made a unit vector.

Python computes in double; storing each result in an ``array('f')`` or through :func:`_f32` rounds it to float32,
which for one addition, multiplication, division or square root of float32 values is the float32 operation itself
(a double carries more than twice float32's precision). A test holds the two paths to identical vectors.
"""

from __future__ import annotations

import math
import struct
from array import array
from operator import add
from typing import TYPE_CHECKING, Any

from cerebro.embed import runs

if TYPE_CHECKING:
    from cerebro.embed.ort_c import Session

# Tokens above which the pooling runs in NumPy, imported for it: the Python pooling costs ~0.03 ms a token (8 ms a
# full 256-token window), NumPy's import ~80 ms once — a long memory's add, not a query.
NUMPY_FROM_TOKENS = 4096
_FLOAT = struct.Struct("f")
_TINY_LENGTH = _FLOAT.unpack(_FLOAT.pack(1e-12))[0]  # NumPy's clip(…, 1e-12) against a float32 length


def _f32(value: float) -> float:
    return _FLOAT.unpack(_FLOAT.pack(value))[0]


def _pairwise_sum(values: array, start: int, count: int) -> float:
    """NumPy's ``pairwise_sum`` of float32 values (numpy/_core/src/umath/loops_utils.h.src)."""
    if count < 8:
        total = -0.0
        for i in range(start, start + count):
            total = _f32(total + values[i])
        return total
    if count <= 128:
        lanes = list(values[start : start + 8])
        i, whole = 8, count - count % 8
        while i < whole:
            lanes = [_f32(a + b) for a, b in zip(lanes, values[start + i : start + i + 8], strict=True)]
            i += 8
        pairs = [_f32(lanes[k] + lanes[k + 1]) for k in range(0, 8, 2)]
        total = _f32(_f32(pairs[0] + pairs[1]) + _f32(pairs[2] + pairs[3]))
        for k in range(start + i, start + count):
            total = _f32(total + values[k])
        return total
    half = count // 2
    half -= half % 8
    return _f32(_pairwise_sum(values, start, half) + _pairwise_sum(values, start + half, count - half))


def _unit(vector: array) -> array:
    """``vector / clip(np.linalg.norm(vector), 1e-12)`` in float32."""
    squares = array("f", [x * x for x in vector])
    length = max(_f32(math.sqrt(_pairwise_sum(squares, 0, len(squares)))), _TINY_LENGTH)
    return array("f", [x / length for x in vector])


def window_mean(hidden: array, tokens: int, dimensions: int) -> array:
    """The mean of a window's ``tokens`` rows (``hidden``: token by token, unpadded)."""
    total = array("f", bytes(4 * dimensions))  # +0.0, as NumPy's sum starts: a column of -0.0 sums to +0.0
    for t in range(tokens):
        total = array("f", map(add, total, hidden[t * dimensions : (t + 1) * dimensions]))
    count = float(tokens)
    return array("f", [x / count for x in total])


def embed_windows(
    session: Session, windows: list[list[int]], owner: list[int], texts: int, dimensions: int, workers: int
) -> list[list[float]]:
    """The unit vectors of ``texts`` texts from their token ``windows`` (``owner[i]``: window i's text), each window
    run alone on ``session``, ``workers`` caller threads at most (as ``LocalEmbedder.embed``)."""
    if sum(map(len, windows)) > NUMPY_FROM_TOKENS:
        return _embed_windows_in_numpy(session, windows, owner, texts, dimensions, workers)
    means: list[array] = [array("f")] * len(windows)

    def run(batch: list[int]) -> None:
        for i in batch:
            means[i] = window_mean(session.hidden_states(windows[i], dimensions), len(windows[i]), dimensions)

    runs.run_all(runs.plan([len(w) for w in windows], workers), workers, run)
    sums = [array("f", bytes(4 * dimensions)) for _ in range(texts)]  # +0.0, as np.add.at adds into zeros
    for i, mean in enumerate(means):
        sums[owner[i]] = array("f", map(add, sums[owner[i]], _unit(mean)))
    return [_unit(total).tolist() for total in sums]


def _embed_windows_in_numpy(
    session: Session, windows: list[list[int]], owner: list[int], texts: int, dimensions: int, workers: int
) -> list[list[float]]:
    """:func:`embed_windows` for a long text, once the Python pooling would cost more than importing NumPy: the
    package path's own NumPy code (:func:`masked_mean`, :func:`texts_in_numpy`), each window alone."""
    import numpy as np

    vectors = np.zeros((len(windows), dimensions), dtype=np.float32)

    def run(batch: list[int]) -> None:
        for i in batch:
            hidden = np.frombuffer(session.hidden_states(windows[i], dimensions), dtype=np.float32)
            mask = np.ones((1, len(windows[i])), dtype=np.int64)
            vectors[i] = masked_mean(hidden.reshape(1, len(windows[i]), dimensions), mask)[0]

    runs.run_all(runs.plan([len(w) for w in windows], workers), workers, run)
    return texts_in_numpy(vectors, owner, texts)


def masked_mean(hidden: Any, mask: Any) -> Any:  # noqa: ANN401 - NumPy arrays
    """The mean of each window's token rows (``hidden``: windows × tokens × dimensions), its padding masked out."""
    import numpy as np

    weights = mask[:, :, None].astype(np.float32)
    return (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)


def texts_in_numpy(vectors: Any, owner: list[int], texts: int) -> list[list[float]]:  # noqa: ANN401 - a NumPy matrix
    """Window means (``vectors``, one row a window; changed in place) to their texts' unit vectors: each window made a
    unit vector, a text's windows added in order, the sum made a unit vector."""
    import numpy as np

    vectors /= np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)
    result = np.zeros((texts, vectors.shape[1]), dtype=np.float32)
    np.add.at(result, np.asarray(owner), vectors)
    result /= np.clip(np.linalg.norm(result, axis=1, keepdims=True), 1e-12, None)
    return result.tolist()
