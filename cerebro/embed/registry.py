"""Provider names → embedders. ``local`` is the default for new brains (offline, no server)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cerebro.embed.base import Embedder, NoEmbedder
from cerebro.errors import InvalidInput, quote


@dataclass(frozen=True)
class ProviderSpec:
    name: str
    default_model: str
    default_dimensions: int
    factory: Callable[[str, int], Embedder]
    fixed_model: bool = False  # the local provider runs exactly one model


def _local(model: str, dims: int) -> Embedder:
    from cerebro.embed.local import LocalEmbedder

    return LocalEmbedder()


def _ollama(model: str, dims: int) -> Embedder:
    from cerebro.embed.ollama import OllamaEmbedder

    return OllamaEmbedder(model, dims)


def _voyage(model: str, dims: int) -> Embedder:
    from cerebro.embed.voyage import VoyageEmbedder

    return VoyageEmbedder(model, dims)


DEFAULT_PROVIDER = "local"
PROVIDERS: dict[str, ProviderSpec] = {
    "local": ProviderSpec("local", "all-MiniLM-L6-v2-onnx-int8", 384, _local, fixed_model=True),
    "ollama": ProviderSpec("ollama", "nomic-embed-text", 768, _ollama),
    "voyage": ProviderSpec("voyage", "voyage-3.5", 1024, _voyage),
    "none": ProviderSpec("none", "", 0, lambda model, dims: NoEmbedder()),
}


def register(spec: ProviderSpec) -> None:
    """Add a provider (tests register a deterministic fake)."""
    PROVIDERS[spec.name] = spec


MAX_DIMENSIONS = 8192  # sqlite-vec's largest vector column


def resolve_settings(provider: str, model: str | None, dims: int | None) -> tuple[str, str, int]:
    """Fill defaults and validate (provider, model, dimensions) as ``init`` stores them."""
    spec = PROVIDERS.get(provider)
    if spec is None:
        raise InvalidInput(f"unknown embedding provider {quote(provider)}: choose one of {', '.join(PROVIDERS)}")
    if dims is not None and not 0 <= dims <= MAX_DIMENSIONS:
        raise InvalidInput(f"--embed-dims must be from 0 to {MAX_DIMENSIONS}, got {dims}")
    if spec.name == "none":
        if model or dims:
            raise InvalidInput("provider 'none' takes no --embed-model or --embed-dims")
        return "none", "", 0
    if spec.fixed_model:
        if model and model != spec.default_model:
            raise InvalidInput(f"provider {quote(spec.name)} runs only {spec.default_model}")
        if dims and dims != spec.default_dimensions:
            raise InvalidInput(f"provider {quote(spec.name)} has {spec.default_dimensions} dimensions")
    return spec.name, model or spec.default_model, dims or spec.default_dimensions


def make_embedder(provider: str, model: str, dims: int) -> Embedder:
    if provider in ("", "none"):
        return NoEmbedder()
    spec = PROVIDERS.get(provider)
    if spec is None:
        raise InvalidInput(f"this brain uses embedding provider {quote(provider)}, which this cerebro does not know")
    return spec.factory(model or spec.default_model, dims or spec.default_dimensions)
