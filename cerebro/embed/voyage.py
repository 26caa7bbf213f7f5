"""Provider ``voyage``: Voyage AI's ``/v1/embeddings`` (default model voyage-3.5, 1024 dims)."""

from __future__ import annotations

import os
from typing import Any

from cerebro.embed import http
from cerebro.embed.base import EmbeddingError, embed_chunked

DEFAULT_MODEL = "voyage-3.5"
DEFAULT_DIMENSIONS = 1024
BATCH = 64
KEY_ENV = "CEREBRO_VOYAGE_API_KEY"


def base_url() -> str:
    return (os.environ.get("CEREBRO_VOYAGE_URL") or "https://api.voyageai.com").rstrip("/")


class VoyageEmbedder:
    provider = "voyage"

    def __init__(self, model: str = DEFAULT_MODEL, dimensions: int = DEFAULT_DIMENSIONS, **http_options: float) -> None:
        self.model_id = model
        self.dimensions = dimensions
        self._http: dict[str, Any] = dict(http_options)

    def _embed_batch(self, pieces: list[str]) -> list[list[float]]:
        key = os.environ.get(KEY_ENV)
        if not key:
            raise EmbeddingError(f"voyage API key not set ({KEY_ENV})")
        vectors: list[list[float]] = []
        for start in range(0, len(pieces), BATCH):
            batch = pieces[start : start + BATCH]
            answer = http.post_json(
                f"{base_url()}/v1/embeddings",
                {"input": batch, "model": self.model_id},
                headers={"Authorization": f"Bearer {key}"},
                what="voyage API",
                **self._http,
            )
            data = answer.get("data") if isinstance(answer, dict) else None
            if not isinstance(data, list) or len(data) != len(batch):
                raise EmbeddingError("voyage API returned no embeddings")
            ordered = sorted(data, key=lambda d: d.get("index", 0) if isinstance(d, dict) else 0)
            for item in ordered:
                vector = item.get("embedding") if isinstance(item, dict) else None
                if not isinstance(vector, list) or not vector:
                    raise EmbeddingError("voyage API returned a malformed embedding")
                vectors.append([float(x) for x in vector])
        return vectors

    def embed(self, texts: list[str]) -> list[list[float]]:
        return embed_chunked(texts, self._embed_batch)
