"""A brain on provider ``ollama``, end to end against a loopback Ollama: vectors written with their node,
a server outage that never loses a memory, the pending backfill, and recall's keyword fallback."""

from __future__ import annotations

from pathlib import Path

import pytest

from cerebro import Brain, paths
from cerebro.db.engine import connect_raw
from cerebro.embed import registry
from cerebro.embed.ollama import OllamaEmbedder
from cerebro.store import vec
from tests.embed.conftest import Reply, ollama_ok, truncated_json, unit_mean, vector_for


@pytest.fixture(autouse=True)
def fast_ollama(monkeypatch):
    """The registry's ollama provider, with tiny backoff (the production one waits up to seconds)."""
    spec = registry.PROVIDERS["ollama"]
    monkeypatch.setitem(
        registry.PROVIDERS,
        "ollama",
        registry.ProviderSpec(
            spec.name,
            spec.default_model,
            spec.default_dimensions,
            lambda model, dims: OllamaEmbedder(model, dims, backoff=0.01, timeout=5.0),
        ),
    )


@pytest.fixture
def ollama_up(http_server, monkeypatch):
    server = http_server(ollama_ok(768))
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", server.url)
    return server


@pytest.fixture
def ollama_path(project: Path) -> Path:
    path = paths.project_brain_path(project)
    result = Brain.init(path, embed_provider="ollama")
    assert (result.embedding_provider, result.embedding_model, result.embedding_dimensions) == (
        "ollama",
        "nomic-embed-text",
        768,
    )
    return path


def raw(path: Path):
    return connect_raw(path)


def vector_rows(path: Path) -> int:
    conn = raw(path)
    try:
        return conn.execute("SELECT COUNT(*) FROM vec_nodes").fetchone()[0]
    finally:
        conn.close()


def stored_vector(path: Path, node_id: str) -> list[float] | None:
    conn = raw(path)
    try:
        return vec.vectors_for(conn, [node_id]).get(node_id)
    finally:
        conn.close()


def node_model(path: Path, node_id: str) -> str:
    conn = raw(path)
    try:
        return conn.execute("SELECT embedding_model FROM nodes WHERE id = ?", (node_id,)).fetchone()[0]
    finally:
        conn.close()


def pending_flag(path: Path) -> str | None:
    conn = raw(path)
    try:
        row = conn.execute("SELECT value FROM schema_meta WHERE key = 'has_pending_embeddings'").fetchone()
        return row[0] if row else None
    finally:
        conn.close()


def table_width(path: Path) -> int | None:
    conn = raw(path)
    try:
        return vec.table_dimensions(conn)
    finally:
        conn.close()


def test_init_makes_no_request_and_a_768_table(ollama_up, ollama_path):
    assert ollama_up.requests == []
    assert table_width(ollama_path) == 768


def test_add_stores_the_vector_and_model(ollama_up, ollama_path):
    with Brain.open(ollama_path) as brain:
        warnings: list[str] = []
        brain.on_warning = warnings.append
        node_id = brain.add("Deploys go through the staging cluster first")
        stats = brain.stats()
    assert warnings == []
    assert [r.body for r in ollama_up.requests] == [
        {"model": "nomic-embed-text", "prompt": "Deploys go through the staging cluster first"}
    ]
    assert vector_rows(ollama_path) == 1
    assert stats.pending_embeddings == 0
    assert (stats.embedding_provider, stats.embedding_model, stats.embedding_dimensions) == (
        "ollama",
        "nomic-embed-text",
        768,
    )
    assert node_model(ollama_path, node_id) == "nomic-embed-text"
    expected = unit_mean([vector_for("Deploys go through the staging cluster first", 768)])
    assert stored_vector(ollama_path, node_id) == pytest.approx(expected, abs=1e-6)  # float32 on disk
    assert pending_flag(ollama_path) is None


def test_outage_then_backfill(http_server, monkeypatch, ollama_up, ollama_path, cli):
    with Brain.open(ollama_path) as brain:
        warnings: list[str] = []
        brain.on_warning = warnings.append
        first = brain.add("The payments service retries webhooks three times")

        ollama_up.stop()  # the server goes away: connection refused from now on
        second = brain.add("Webhook signatures are verified with HMAC SHA256")
        assert len(warnings) == 1
        assert warnings[0].startswith(f"embedding failed for {second[:8]}: ")
        assert "unreachable" in warnings[0]
        assert warnings[0].endswith("(node stored; run `cerebro embed --pending`)")
        assert "\n" not in warnings[0]
        assert brain.get(second).node.content == "Webhook signatures are verified with HMAC SHA256"
        assert brain.stats().pending_embeddings == 1

        # recall still works, on the keyword lane
        result = brain.recall("webhook signatures HMAC")
        assert result.mode == "keyword-fallback"
        assert any("embedding unavailable" in n for n in result.notices)
        assert second in result.ids
        # search is recall's pipeline (upstream): the same keyword fallback
        searched = brain.search("webhook signatures")
        assert searched.mode == "keyword-fallback" and second in searched.ids

    assert vector_rows(ollama_path) == 1
    assert pending_flag(ollama_path) == "true"
    assert node_model(ollama_path, second) == ""
    assert node_model(ollama_path, first) == "nomic-embed-text"

    searched = cli("search", "webhook")
    assert searched.exit_code == 0 and "embedding unavailable" in searched.stderr

    recalled = cli("recall", "webhook signatures HMAC", "--format", "json")
    assert recalled.exit_code == 0, recalled
    assert recalled.json()["mode"] == "keyword-fallback"
    assert "embedding unavailable" in recalled.stderr

    failed = cli("embed", "--pending", "--format", "json")
    assert failed.exit_code == 0, failed
    assert failed.json()["embedded"] == 0
    assert failed.json()["failed"] == 1
    assert failed.json()["remaining"] == 1
    assert pending_flag(ollama_path) == "true"

    # the server comes back (on a new port: CEREBRO_OLLAMA_URL is read per request)
    back = http_server(ollama_ok(768))
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", back.url)
    result = cli("embed", "--pending", "--format", "json")
    assert result.exit_code == 0, result
    report = result.json()
    assert (report["embedded"], report["failed"], report["remaining"]) == (1, 0, 0)
    assert [r.body["prompt"] for r in back.requests] == ["Webhook signatures are verified with HMAC SHA256"]
    assert vector_rows(ollama_path) == 2
    assert pending_flag(ollama_path) is None
    assert node_model(ollama_path, second) == "nomic-embed-text"
    expected = unit_mean([vector_for("Webhook signatures are verified with HMAC SHA256", 768)])
    assert stored_vector(ollama_path, second) == pytest.approx(expected, abs=1e-6)

    with Brain.open(ollama_path) as brain:
        assert brain.stats().pending_embeddings == 0
        result = brain.recall("webhook signatures HMAC")
        assert result.mode == "hybrid"
        assert result.notices == []
        hits = brain.search("Webhook signatures are verified with HMAC SHA256", threshold=0.0)
        assert hits.ids[0] == second  # the same text, the same vector

    again = cli("embed", "--pending", "--format", "json")
    assert again.json() == {"embedded": 0, "failed": 0, "remaining": 0, "errors": []}


def test_cli_add_with_server_down_stores_and_warns(closed_port, monkeypatch, ollama_path, cli):
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", f"http://127.0.0.1:{closed_port}")
    result = cli("add", "stored even when ollama is down")
    assert result.exit_code == 0, result
    node_id = result.stdout.strip()
    assert len(node_id) == 36
    assert f"embedding failed for {node_id[:8]}" in result.stderr
    assert "cerebro embed --pending" in result.stderr
    assert pending_flag(ollama_path) == "true"
    assert node_model(ollama_path, node_id) == ""


def test_wrong_dimension_is_never_stored(http_server, monkeypatch, ollama_path):
    server = http_server(ollama_ok(512))  # a different model behind the same name
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", server.url)
    with Brain.open(ollama_path) as brain:
        warnings: list[str] = []
        brain.on_warning = warnings.append
        node_id = brain.add("served by the wrong model")
        assert brain.stats().pending_embeddings == 1
        report = brain.embed_pending()
    assert len(server.requests) == 2
    assert len(warnings) == 1
    assert "512-dimensional" in warnings[0] and "768" in warnings[0]
    assert (report.embedded, report.failed, report.remaining) == (0, 1, 1)
    assert "512-dimensional" in report.errors[0]
    assert vector_rows(ollama_path) == 0
    assert table_width(ollama_path) == 768
    assert node_model(ollama_path, node_id) == ""
    assert pending_flag(ollama_path) == "true"


def test_recall_on_the_vector_lane(ollama_up, ollama_path):
    with Brain.open(ollama_path) as brain:
        ids = [brain.add(text) for text in ("alpha memory", "beta memory", "gamma memory")]
        hits = brain.search("beta memory", threshold=0.0)
        assert hits.ids[0] == ids[1]
        assert hits.results[0].similarity == pytest.approx(1.0, abs=1e-5)
        assert brain.recall("beta memory").mode == "hybrid"


def test_search_with_a_connection_dropped_mid_answer_falls_back_to_keywords(http_server, monkeypatch, ollama_path, cli):
    """As upstream's search: a provider failure gives keyword-only results and a notice, not an internal error."""
    with Brain.open(ollama_path) as brain:
        brain.config_set("bm25_enabled", "true")
    server = http_server(lambda request, n: truncated_json())
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", server.url)
    result = cli("search", "anything")
    assert result.exit_code == 0, result
    assert "keyword-only" in result.stderr and "internal error" not in result.stderr


def test_recall_and_add_survive_a_connection_dropped_mid_answer(http_server, monkeypatch, ollama_path):
    server = http_server(lambda request, n: truncated_json())
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", server.url)
    with Brain.open(ollama_path) as brain:
        warnings: list[str] = []
        brain.on_warning = warnings.append
        node_id = brain.add("kept although the answer was cut short")
        assert len(warnings) == 1 and node_id[:8] in warnings[0]
        assert brain.recall("answer cut short").mode == "keyword-fallback"
    assert server.requests


def test_recall_waits_for_a_stalled_provider_only_so_long(http_server, monkeypatch, ollama_up, ollama_path):
    """A provider that accepts the query and never answers held a recall for two minutes (four attempts of 30 s)
    before it went on with keywords alone; it waits QUERY_WAIT_SECONDS (ADR 0062)."""
    from cerebro.brain import query_embedding

    with Brain.open(ollama_path) as brain:
        brain.config_set("bm25_enabled", "true")
        kept = brain.add("the deploy runs blue green behind the load balancer")
    stalled = http_server(lambda request, n: Reply(200, {"embedding": [0.5] * 768}, delay=5.0))
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", stalled.url)
    monkeypatch.setattr(query_embedding, "QUERY_WAIT_SECONDS", 0.3)
    with Brain.open(ollama_path) as brain:
        result = brain.recall("deploy blue green")
    assert result.mode == "keyword-fallback"
    assert result.ids == [kept]
    assert any("did not answer within 0.3 s" in notice for notice in result.notices)
