"""Provider names → embedders. The retrieval work adds ``local``, ``ollama`` and ``voyage`` here."""

from __future__ import annotations

from dataclasses import dataclass

from cerebro.embed.base import Embedder, NoEmbedder
from cerebro.errors import InvalidInput, quote


@dataclass(frozen=True)
class ProviderSpec:
    name: str
    default_model: str
    default_dimensions: int


PROVIDERS: dict[str, ProviderSpec] = {
    "none": ProviderSpec("none", "", 0),
}


def resolve_settings(provider: str, model: str | None, dims: int | None) -> tuple[str, str, int]:
    """Fill defaults and validate (provider, model, dimensions) as ``init`` stores them."""
    spec = PROVIDERS.get(provider)
    if spec is None:
        raise InvalidInput(f"unknown embedding provider {quote(provider)}: choose one of {', '.join(PROVIDERS)}")
    if dims is not None and dims < 0:
        raise InvalidInput(f"--embed-dims must be 0 or more, got {dims}")
    if spec.name == "none":
        if model or dims:
            raise InvalidInput("provider 'none' takes no --embed-model or --embed-dims")
        return "none", "", 0
    return spec.name, model or spec.default_model, dims or spec.default_dimensions


def make_embedder(provider: str, model: str, dims: int) -> Embedder:
    if provider == "none" or provider == "":
        return NoEmbedder()
    raise InvalidInput(f"embedding provider {quote(provider)} is not available in this version of cerebro")
