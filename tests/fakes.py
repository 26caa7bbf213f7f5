"""A deterministic stand-in embedder for fast logic tests (the real local model is used in the
semantic and end-to-end tests).

``fake``: hashed bag-of-words vectors (64 dims, L2-normalised): texts sharing words are close.
``fake-down``: always fails, like an Ollama server that is not running. Its ``broken`` switch lets a test
make ``fake`` fail mid-way too (``FakeEmbedder.broken = True``).
"""

from __future__ import annotations

import hashlib
import math
import re

from cerebro.embed.base import EmbeddingError
from cerebro.embed.registry import ProviderSpec, register

DIMS = 64
_WORD = re.compile(r"\w+")


def hashed_vector(text: str, dims: int = DIMS) -> list[float]:
    vector = [0.0] * dims
    for word in _WORD.findall(text.lower()):
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        vector[int.from_bytes(digest[:4], "little") % dims] += 1.0 if digest[4] % 2 else -1.0
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0:
        vector[0], norm = 1.0, 1.0
    return [x / norm for x in vector]


class FakeEmbedder:
    provider = "fake"
    broken = False  # class-wide switch: tests flip it to simulate a provider going down
    calls = 0

    def __init__(self, model: str = "fake-hash-64", dims: int = DIMS) -> None:
        self.model_id = model
        self.dimensions = dims

    def embed(self, texts: list[str]) -> list[list[float]]:
        FakeEmbedder.calls += 1
        if FakeEmbedder.broken:
            raise EmbeddingError("fake provider is down")
        return [hashed_vector(t, self.dimensions) for t in texts]


class DownEmbedder(FakeEmbedder):
    provider = "fake-down"

    def embed(self, texts: list[str]) -> list[list[float]]:
        raise EmbeddingError("connection refused (fake-down)")


def register_fakes() -> None:
    register(ProviderSpec("fake", "fake-hash-64", DIMS, FakeEmbedder))
    register(ProviderSpec("fake-down", "fake-down", DIMS, DownEmbedder))
