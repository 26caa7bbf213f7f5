"""Provider names → settings and embedders; what ``init`` stores; when ``init --force`` may switch models."""

from __future__ import annotations

from pathlib import Path

import pytest

from cerebro import Brain, paths
from cerebro.db.engine import connect_raw
from cerebro.embed import registry
from cerebro.embed.base import EmbeddingError, NoEmbedder
from cerebro.embed.registry import make_embedder, resolve_settings
from cerebro.errors import InvalidInput
from cerebro.store import vec


@pytest.mark.parametrize(
    ("provider", "expected"),
    [
        ("local", ("local", "all-MiniLM-L6-v2-onnx-int8-dq7", 384)),
        ("ollama", ("ollama", "nomic-embed-text", 768)),
        ("voyage", ("voyage", "voyage-3.5", 1024)),
        ("none", ("none", "", 0)),
    ],
)
def test_defaults(provider, expected):
    assert resolve_settings(provider, None, None) == expected
    assert resolve_settings(provider, "", 0) == expected  # empty and 0 mean "the provider's"


def test_network_providers_take_any_model_and_dims():
    assert resolve_settings("ollama", "mxbai-embed-large", 1024) == ("ollama", "mxbai-embed-large", 1024)
    assert resolve_settings("voyage", "voyage-code-3", 2048) == ("voyage", "voyage-code-3", 2048)
    assert resolve_settings("ollama", None, 1024) == ("ollama", "nomic-embed-text", 1024)


def test_local_runs_its_two_models_only():
    """The file's integer products (the default, ADR 0041) and its float32 ones (brains made before)."""
    assert resolve_settings("local", "all-MiniLM-L6-v2-onnx-int8", 384) == ("local", "all-MiniLM-L6-v2-onnx-int8", 384)
    assert resolve_settings("local", "all-MiniLM-L6-v2-onnx-int8-dq7", None)[1] == "all-MiniLM-L6-v2-onnx-int8-dq7"
    with pytest.raises(InvalidInput, match=r"runs only all-MiniLM-L6-v2-onnx-int8-dq7 or all-MiniLM-L6-v2-onnx-int8$"):
        resolve_settings("local", "nomic-embed-text", None)
    with pytest.raises(InvalidInput, match="384 dimensions"):
        resolve_settings("local", None, 768)


def test_none_takes_no_model_or_dims():
    with pytest.raises(InvalidInput):
        resolve_settings("none", "x", None)
    with pytest.raises(InvalidInput):
        resolve_settings("none", None, 8)


def test_negative_dims_refused():
    with pytest.raises(InvalidInput, match="from 0 to 8192"):
        resolve_settings("ollama", None, -1)


def test_unknown_provider():
    with pytest.raises(InvalidInput) as caught:
        resolve_settings("openai", None, None)
    assert "openai" in str(caught.value)
    for name in ("local", "ollama", "voyage", "none"):
        assert name in str(caught.value)
    assert caught.value.exit_code == 2


def test_unknown_provider_creates_no_brain(tmp_path: Path):
    path = tmp_path / "b.sqlite"
    with pytest.raises(InvalidInput):
        Brain.init(path, embed_provider="openai")
    assert not path.exists()


def test_make_embedder():
    from cerebro.embed.local import LocalEmbedder
    from cerebro.embed.ollama import OllamaEmbedder
    from cerebro.embed.voyage import VoyageEmbedder

    assert isinstance(make_embedder("none", "", 0), NoEmbedder)
    assert isinstance(make_embedder("", "", 0), NoEmbedder)
    local = make_embedder("local", "all-MiniLM-L6-v2-onnx-int8", 384)
    assert isinstance(local, LocalEmbedder)
    assert (local.model_id, local.dimensions) == ("all-MiniLM-L6-v2-onnx-int8", 384)  # a brain's own, not the default
    assert make_embedder("local", "", 0).model_id == "all-MiniLM-L6-v2-onnx-int8-dq7"
    ollama = make_embedder("ollama", "mxbai-embed-large", 1024)
    assert isinstance(ollama, OllamaEmbedder)
    assert (ollama.provider, ollama.model_id, ollama.dimensions) == ("ollama", "mxbai-embed-large", 1024)
    voyage = make_embedder("voyage", "", 0)
    assert isinstance(voyage, VoyageEmbedder)
    assert (voyage.model_id, voyage.dimensions) == ("voyage-3.5", 1024)
    with pytest.raises(InvalidInput, match="does not know"):
        make_embedder("openai", "x", 3)


def test_no_embedder_refuses():
    with pytest.raises(EmbeddingError, match="no embedding provider"):
        NoEmbedder().embed(["x"])


def test_registry_embedders_use_production_http_defaults():
    """The factories pass no http options: 30 s timeout, 4 attempts, 0.5 s backoff from http.py."""
    from cerebro.embed import http

    assert (http.TIMEOUT_SECONDS, http.ATTEMPTS, http.BACKOFF_SECONDS) == (30.0, 4, 0.5)
    assert registry.PROVIDERS["ollama"].factory("m", 3)._http == {}
    assert registry.PROVIDERS["voyage"].factory("m", 3)._http == {}


# ----------------------------------------------------------------------------- init through the CLI


def meta(path: Path) -> dict[str, str]:
    conn = connect_raw(path)
    try:
        return dict(conn.execute("SELECT key, value FROM schema_meta").fetchall())
    finally:
        conn.close()


def width(path: Path) -> int | None:
    conn = connect_raw(path)
    try:
        return vec.table_dimensions(conn)
    finally:
        conn.close()


def test_cli_init_stores_provider_and_dims(cli, project):
    result = cli("init", "--embed-provider", "ollama", "--embed-dims", "1024", "--format", "json")
    assert result.exit_code == 0, result
    data = result.json()
    assert (data["embedding_provider"], data["embedding_model"], data["embedding_dimensions"]) == (
        "ollama",
        "nomic-embed-text",
        1024,
    )
    assert data["created"] is True
    path = paths.project_brain_path(project)
    stored = meta(path)
    assert stored["embedding_provider"] == "ollama"
    assert stored["embedding_model"] == "nomic-embed-text"
    assert stored["embedding_dimensions"] == "1024"
    assert width(path) == 1024

    stats = cli("stats", "--format", "json").json()
    assert (stats["embedding_provider"], stats["embedding_dimensions"]) == ("ollama", 1024)

    again = cli("init", "--embed-provider", "voyage", "--format", "json")  # no --force: kept as is
    assert again.exit_code == 0
    assert again.json()["created"] is False
    assert again.json()["embedding_provider"] == "ollama"
    assert meta(path)["embedding_provider"] == "ollama"


def test_cli_init_refuses_bad_settings(cli, project):
    assert cli("init", "--embed-provider", "openai").exit_code == 2
    assert cli("init", "--embed-provider", "local", "--embed-dims", "768").exit_code == 2
    assert cli("init", "--embed-provider", "local", "--embed-model", "nomic-embed-text").exit_code == 2
    assert not paths.project_brain_path(project).exists()


def test_init_none_has_no_vector_table(cli, project):
    assert cli("init", "--embed-provider", "none").exit_code == 0
    assert width(paths.project_brain_path(project)) is None


def test_force_refuses_to_switch_models_when_vectors_exist(cli, project):
    assert cli("init", "--embed-provider", "fake").exit_code == 0
    path = paths.project_brain_path(project)
    assert cli("add", "a memory with a vector").exit_code == 0
    before = meta(path)

    result = cli("init", "--force", "--embed-provider", "ollama")
    assert result.exit_code == 2
    assert "1 vectors" in result.stderr and "mix vector spaces" in result.stderr
    after = meta(path)
    assert (
        (after["embedding_provider"], after["embedding_model"], after["embedding_dimensions"])
        == (
            before["embedding_provider"],
            before["embedding_model"],
            before["embedding_dimensions"],
        )
        == ("fake", "fake-hash-64", "64")
    )
    assert width(path) == 64


def test_force_with_the_same_settings_keeps_vectors(cli, project):
    assert cli("init", "--embed-provider", "fake").exit_code == 0
    assert cli("add", "kept").exit_code == 0
    result = cli("init", "--force", "--embed-provider", "fake", "--format", "json")
    assert result.exit_code == 0, result
    assert result.json()["backup"]
    conn = connect_raw(paths.project_brain_path(project))
    try:
        assert conn.execute("SELECT COUNT(*) FROM vec_nodes").fetchone()[0] == 1
    finally:
        conn.close()


def test_force_may_switch_models_when_no_vectors(cli, project):
    assert cli("init", "--embed-provider", "fake").exit_code == 0
    path = paths.project_brain_path(project)
    result = cli("init", "--force", "--embed-provider", "ollama", "--embed-dims", "1024", "--format", "json")
    assert result.exit_code == 0, result
    assert result.json()["backup"]
    stored = meta(path)
    assert (stored["embedding_provider"], stored["embedding_model"], stored["embedding_dimensions"]) == (
        "ollama",
        "nomic-embed-text",
        "1024",
    )
    assert width(path) == 1024


def test_force_may_switch_when_memories_have_no_vectors(cli, project):
    assert cli("init", "--embed-provider", "fake-down").exit_code == 0
    path = paths.project_brain_path(project)
    added = cli("add", "stored without a vector")
    assert added.exit_code == 0
    assert "embedding failed" in added.stderr
    result = cli("init", "--force", "--embed-provider", "fake")
    assert result.exit_code == 0, result
    assert width(path) == 64
    assert meta(path)["embedding_provider"] == "fake"
    report = cli("embed", "--pending", "--format", "json").json()
    assert (report["embedded"], report["remaining"]) == (1, 0)


def test_embed_pending_without_a_provider(cli):
    assert cli("init", "--embed-provider", "none").exit_code == 0
    result = cli("embed", "--pending")
    assert result.exit_code == 2
    assert "no embedding provider" in result.stderr
