"""The embedder interface, and what every provider shares: chunking long texts and pooling.

Providers import their heavy dependencies inside their functions, so ``import cerebro`` stays cheap.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from cerebro.errors import EmbeddingError

# Network providers' window, in characters (upstream splits content over ~6 KB, rune-safely).
CHAR_WINDOW = 6000


@runtime_checkable
class Embedder(Protocol):
    provider: str
    model_id: str
    dimensions: int

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One L2-normalised vector per text, ``dimensions`` long each."""
        ...


class NoEmbedder:
    """Provider ``none``: no vectors; recall runs on the keyword and graph lanes."""

    provider = "none"
    model_id = ""
    dimensions = 0

    def embed(self, texts: list[str]) -> list[list[float]]:
        raise EmbeddingError("no embedding provider configured — search requires embeddings")


def normalise(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    if not math.isfinite(norm) or norm == 0:
        raise EmbeddingError("the provider returned a zero or non-finite vector")
    return [x / norm for x in vector]


def mean_pool(vectors: Sequence[Sequence[float]]) -> list[float]:
    """Mean of the (normalised) chunk vectors, re-normalised."""
    width = len(vectors[0])
    total = [0.0] * width
    for vector in vectors:
        for i, x in enumerate(normalise(vector)):
            total[i] += x
    return normalise(total)


def split_chars(text: str, window: int = CHAR_WINDOW) -> list[str]:
    """Split on character (code point) boundaries, preferring whitespace near the end of each window."""
    if len(text) <= window:
        return [text]
    parts: list[str] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + window)
        if end < len(text):
            cut = text.rfind(" ", start + window // 2, end)
            end = cut if cut > start else end
        parts.append(text[start:end])
        start = end
    return [p for p in parts if p.strip()] or [text[:window]]


def embed_chunked(
    texts: list[str], embed_batch: Callable[[list[str]], list[list[float]]], window: int = CHAR_WINDOW
) -> list[list[float]]:
    """Embed texts through ``embed_batch``, chunking long ones and pooling their chunks."""
    pieces: list[str] = []
    owners: list[int] = []
    for index, text in enumerate(texts):
        for piece in split_chars(text, window):
            pieces.append(piece)
            owners.append(index)
    vectors = embed_batch(pieces)
    if len(vectors) != len(pieces):
        raise EmbeddingError(f"the provider returned {len(vectors)} vectors for {len(pieces)} texts")
    grouped: list[list[list[float]]] = [[] for _ in texts]
    for owner, vector in zip(owners, vectors, strict=True):
        grouped[owner].append(vector)
    return [mean_pool(group) for group in grouped]
