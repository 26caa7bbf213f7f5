"""The embedder interface. Providers import their heavy dependencies inside their functions."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


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
        raise RuntimeError("no embedding provider configured — search requires embeddings")
