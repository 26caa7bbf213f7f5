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
    # A provider that runs only these models (the local one: its file, with integer or float32 products); empty: any
    models: tuple[str, ...] = ()


def _local(model: str, dims: int) -> Embedder:
    from cerebro.embed.local import LocalEmbedder

    return LocalEmbedder(model)


def _ollama(model: str, dims: int) -> Embedder:
    from cerebro.embed.ollama import OllamaEmbedder

    return OllamaEmbedder(model, dims)


def _voyage(model: str, dims: int) -> Embedder:
    from cerebro.embed.voyage import VoyageEmbedder

    return VoyageEmbedder(model, dims)


DEFAULT_PROVIDER = "local"
# The local model's two ids (cerebro.embed.local): integer products, the default for new brains since ADR 0041, and
# float32 products, every brain's model before it.
LOCAL_MODEL = "all-MiniLM-L6-v2-onnx-int8-dq7"
LOCAL_FLOAT_MODEL = "all-MiniLM-L6-v2-onnx-int8"
PROVIDERS: dict[str, ProviderSpec] = {
    "local": ProviderSpec("local", LOCAL_MODEL, 384, _local, models=(LOCAL_MODEL, LOCAL_FLOAT_MODEL)),
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
    if spec.models:
        if model and model not in spec.models:
            raise InvalidInput(f"provider {quote(spec.name)} runs only {' or '.join(spec.models)}")
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
