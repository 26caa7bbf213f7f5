"""Provider ``voyage`` against a real loopback HTTP server speaking Voyage's /v1/embeddings."""

from __future__ import annotations

import math

import pytest

from cerebro.embed import voyage
from cerebro.embed.base import CHAR_WINDOW, EmbeddingError
from cerebro.embed.voyage import VoyageEmbedder
from tests.embed.conftest import Reply, scripted, unit_mean, vector_for, voyage_ok

KEY = "vo-test-key-123"


def embedder(dims: int = 1024, model: str = "voyage-3.5", **options: float) -> VoyageEmbedder:
    return VoyageEmbedder(model, dims, **{"backoff": 0.01, "timeout": 5.0, **options})


@pytest.fixture
def keyed(monkeypatch):
    monkeypatch.setenv("CEREBRO_VOYAGE_API_KEY", KEY)


@pytest.fixture
def voyage_server(http_server, monkeypatch, keyed):
    server = http_server(voyage_ok(1024))
    monkeypatch.setenv("CEREBRO_VOYAGE_URL", server.url)
    return server


def start(http_server, monkeypatch, responder):
    server = http_server(responder)
    monkeypatch.setenv("CEREBRO_VOYAGE_URL", server.url)
    return server


def test_request_shape_bearer_key_and_vectors(voyage_server):
    vectors = embedder(model="voyage-3.5").embed(["first text", "second text"])
    assert len(voyage_server.requests) == 1  # one batch
    request = voyage_server.requests[0]
    assert request.path == "/v1/embeddings"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.headers["content-type"] == "application/json"
    assert request.body == {"input": ["first text", "second text"], "model": "voyage-3.5"}
    assert [len(v) for v in vectors] == [1024, 1024]
    for text, vector in zip(["first text", "second text"], vectors, strict=True):
        assert vector == pytest.approx(unit_mean([vector_for(text, 1024)]), abs=1e-12)
        assert math.isclose(math.sqrt(sum(x * x for x in vector)), 1.0, rel_tol=1e-9)


def test_answers_are_ordered_by_index(http_server, monkeypatch, keyed):
    server = start(http_server, monkeypatch, voyage_ok(16, reverse=True))
    vectors = embedder(dims=16).embed(["a", "b", "c"])
    assert server.requests[0].answer["data"][0]["index"] == 2  # the server really answered out of order
    for text, vector in zip("abc", vectors, strict=True):
        assert vector == pytest.approx(unit_mean([vector_for(text, 16)]), abs=1e-12)


def test_batches_of_64(http_server, monkeypatch, keyed):
    server = start(http_server, monkeypatch, voyage_ok(8))
    texts = [f"text {i}" for i in range(70)]
    vectors = embedder(dims=8).embed(texts)
    assert [len(r.body["input"]) for r in server.requests] == [64, 6]
    assert vectors[69] == pytest.approx(unit_mean([vector_for("text 69", 8)]), abs=1e-12)


@pytest.mark.parametrize("failures", [[500], [503], [429], [429, 503, 500]], ids=["500", "503", "429", "mixed"])
def test_retries_transient_statuses_then_succeeds(http_server, monkeypatch, keyed, failures):
    server = start(
        http_server,
        monkeypatch,
        scripted(*[Reply(c, {"detail": "busy"}) for c in failures], then=voyage_ok(8)),
    )
    [vector] = embedder(dims=8).embed(["x"])
    assert len(server.requests) == len(failures) + 1
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in server.requests)
    assert vector == pytest.approx(unit_mean([vector_for("x", 8)]), abs=1e-12)


@pytest.mark.parametrize("status", [429, 500, 503])
def test_gives_up_after_four_attempts(http_server, monkeypatch, keyed, status):
    server = start(http_server, monkeypatch, lambda r, n: Reply(status, {"detail": "rate limited"}))
    with pytest.raises(EmbeddingError) as caught:
        embedder(dims=8).embed(["x"])
    assert len(server.requests) == 4
    assert f"returned {status}" in str(caught.value)
    assert "gave up after 4 attempts" in str(caught.value)


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_client_errors_are_not_retried(http_server, monkeypatch, keyed, status):
    server = start(http_server, monkeypatch, lambda r, n: Reply(status, {"detail": "Provided API key is invalid."}))
    with pytest.raises(EmbeddingError) as caught:
        embedder(dims=8).embed(["x"])
    assert len(server.requests) == 1
    assert f"voyage API returned {status}" in str(caught.value)
    assert "invalid" in str(caught.value)


def test_connection_refused_is_retried_then_fails(closed_port, monkeypatch, keyed, count_urlopen):
    monkeypatch.setenv("CEREBRO_VOYAGE_URL", f"http://127.0.0.1:{closed_port}")
    with pytest.raises(EmbeddingError) as caught:
        embedder(dims=8).embed(["x"])
    assert len(count_urlopen) == 4
    assert "unreachable" in str(caught.value)
    assert "gave up after 4 attempts" in str(caught.value)


def test_a_stalled_server_is_asked_once_within_the_calls_time(http_server, monkeypatch, keyed):
    server = start(http_server, monkeypatch, lambda r, n: Reply(200, {"data": []}, delay=3.0))
    with pytest.raises(EmbeddingError, match=r"timed out \(gave up after 1 attempt\)"):
        VoyageEmbedder("voyage-3.5", 8, timeout=0.5, backoff=0.01).embed(["slow"])
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "body",
    [
        b"<html>bad gateway</html>",
        {"object": "list"},
        {"data": []},
        {"data": None},
        {"data": [{"embedding": [0.1, 0.2], "index": 0}, {"embedding": [0.3, 0.4], "index": 1}]},  # 2 for 1
        {"data": [{"index": 0}]},
        {"data": [{"embedding": [], "index": 0}]},
        {"data": ["not an object"]},
    ],
    ids=[
        "html",
        "no-data",
        "empty-data",
        "null-data",
        "too-many",
        "no-embedding",
        "empty-embedding",
        "string-item",
    ],
)
def test_malformed_answers_fail_without_retry(http_server, monkeypatch, keyed, body):
    server = start(http_server, monkeypatch, lambda r, n: Reply(200, body))
    with pytest.raises(EmbeddingError):
        embedder(dims=2).embed(["x"])
    assert len(server.requests) == 1


@pytest.mark.parametrize("key", [None, ""])
def test_missing_key_fails_before_any_request(http_server, monkeypatch, count_urlopen, key):
    server = start(http_server, monkeypatch, voyage_ok(8))
    if key is not None:
        monkeypatch.setenv("CEREBRO_VOYAGE_API_KEY", key)
    with pytest.raises(EmbeddingError) as caught:
        embedder(dims=8).embed(["x"])
    assert "CEREBRO_VOYAGE_API_KEY" in str(caught.value)
    assert caught.value.exit_code == 10
    assert server.requests == []
    assert count_urlopen == []


def test_default_base_url(monkeypatch):
    assert voyage.base_url() == "https://api.voyageai.com"
    monkeypatch.setenv("CEREBRO_VOYAGE_URL", "http://127.0.0.1:9/")
    assert voyage.base_url() == "http://127.0.0.1:9"


def test_long_text_is_chunked_and_mean_pooled(voyage_server):
    text = " ".join(f"token{i % 131}" for i in range(3000))
    assert len(text) > CHAR_WINDOW
    [vector] = embedder().embed([text])
    assert len(voyage_server.requests) == 1  # every chunk in one batch
    pieces = voyage_server.requests[0].body["input"]
    assert len(pieces) >= 2
    assert all(len(p) <= CHAR_WINDOW for p in pieces)
    assert "".join(pieces) == text
    returned = [d["embedding"] for d in voyage_server.requests[0].answer["data"]]
    assert vector == pytest.approx(unit_mean(returned), abs=1e-9)


def test_key_never_appears_in_errors(http_server, monkeypatch, keyed, closed_port):
    server = start(http_server, monkeypatch, lambda r, n: Reply(401, {"detail": "Provided API key is invalid."}))
    with pytest.raises(EmbeddingError) as caught:
        embedder(dims=8).embed(["x"])
    assert KEY not in str(caught.value)
    assert len(server.requests) == 1
    monkeypatch.setenv("CEREBRO_VOYAGE_URL", f"http://127.0.0.1:{closed_port}")
    with pytest.raises(EmbeddingError) as caught:
        embedder(dims=8).embed(["x"])
    assert KEY not in str(caught.value)


def test_answer_cut_short_is_an_embedding_error(http_server, monkeypatch, keyed):
    from tests.embed.conftest import truncated_json

    server = start(http_server, monkeypatch, lambda r, n: truncated_json('{"data": [{"embedding": [0.1'))
    with pytest.raises(EmbeddingError):
        embedder(dims=2).embed(["x"])
    assert 1 <= len(server.requests) <= 4


def test_redirects_are_not_followed_so_the_key_never_reaches_another_host(monkeypatch):
    """A 302 from the API to another host must not carry the Authorization header anywhere."""
    import http.server
    import threading

    from cerebro.embed.base import EmbeddingError
    from cerebro.embed.voyage import VoyageEmbedder

    seen: list[str] = []

    class Target(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            seen.append(self.headers.get("Authorization", ""))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    target = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Target)

    class Redirect(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.send_response(302)
            self.send_header("Location", f"http://localhost:{target.server_port}/v1/embeddings")
            self.end_headers()

        def log_message(self, *args):
            pass

    source = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    for server in (target, source):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("CEREBRO_VOYAGE_API_KEY", "sk-SECRET")
        monkeypatch.setenv("CEREBRO_VOYAGE_URL", f"http://127.0.0.1:{source.server_port}")
        with pytest.raises(EmbeddingError):
            VoyageEmbedder(attempts=1, backoff=0.01).embed(["x"])
        assert seen == []
    finally:
        for server in (target, source):
            server.shutdown()
            server.server_close()
