"""Provider ``ollama``: a local Ollama server's ``/api/embeddings`` (default model nomic-embed-text, 768)."""

from __future__ import annotations

import os
from typing import Any

from cerebro.embed import http
from cerebro.embed.base import EmbeddingError, embed_chunked

DEFAULT_MODEL = "nomic-embed-text"
DEFAULT_DIMENSIONS = 768


DEFAULT_PORT = 11434


def base_url() -> str:
    """``$CEREBRO_OLLAMA_URL``, else ``$OLLAMA_HOST``, else http://127.0.0.1:11434.

    ``OLLAMA_HOST`` is read as Ollama reads it: without a scheme it means http, without a port 11434,
    and an empty host (``:11434``) means this machine.
    """
    explicit = os.environ.get("CEREBRO_OLLAMA_URL")
    if explicit:
        return explicit.rstrip("/")
    host = (os.environ.get("OLLAMA_HOST") or "").strip()
    if not host:
        return f"http://localhost:{DEFAULT_PORT}"
    if "://" in host:
        return host.rstrip("/")
    host = host.rstrip("/")
    if host.startswith("["):  # IPv6: [::1] or [::1]:11434
        name, _, rest = host.partition("]")
        name += "]"
        port = rest[1:] if rest.startswith(":") else ""
    else:
        name, sep, port = host.rpartition(":") if host.count(":") == 1 else (host, "", "")
        if not sep:
            name, port = host, ""
    if not name:
        name = "localhost"
    return f"http://{name}:{port or DEFAULT_PORT}"


class OllamaEmbedder:
    provider = "ollama"

    def __init__(self, model: str = DEFAULT_MODEL, dimensions: int = DEFAULT_DIMENSIONS, **http_options: float) -> None:
        self.model_id = model
        self.dimensions = dimensions
        self._http: dict[str, Any] = dict(http_options)

    def _embed_one(self, text: str) -> list[float]:
        answer = http.post_json(
            f"{base_url()}/api/embeddings", {"model": self.model_id, "prompt": text}, what="ollama API", **self._http
        )
        vector = answer.get("embedding") if isinstance(answer, dict) else None
        if not isinstance(vector, list) or not vector or not all(isinstance(x, int | float) for x in vector):
            raise EmbeddingError("ollama API returned no embedding")
        return [float(x) for x in vector]

    def embed(self, texts: list[str]) -> list[list[float]]:
        return embed_chunked(texts, lambda pieces: [self._embed_one(p) for p in pieces])
