"""Provider ``ollama`` against a real loopback HTTP server speaking Ollama's /api/embeddings."""

from __future__ import annotations

import math
import socket
import threading

import pytest

from cerebro.embed import ollama
from cerebro.embed.base import CHAR_WINDOW, EmbeddingError
from cerebro.embed.ollama import OllamaEmbedder
from tests.embed.conftest import Reply, ollama_ok, scripted, unit_mean, vector_for

FAST = {"backoff": 0.01, "timeout": 5.0}


def embedder(dims: int = 768, model: str = "nomic-embed-text", **options: float) -> OllamaEmbedder:
    return OllamaEmbedder(model, dims, **{**FAST, **options})


@pytest.fixture
def ollama_server(http_server, monkeypatch):
    server = http_server(ollama_ok(768))
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", server.url)
    return server


def test_request_shape_and_normalised_vector(ollama_server):
    [vector] = embedder(model="nomic-embed-text").embed(["hello ollama"])
    assert len(ollama_server.requests) == 1
    request = ollama_server.requests[0]
    assert request.path == "/api/embeddings"
    assert request.body == {"model": "nomic-embed-text", "prompt": "hello ollama"}
    assert request.headers["content-type"] == "application/json"
    assert len(vector) == 768
    assert math.isclose(math.sqrt(sum(x * x for x in vector)), 1.0, rel_tol=1e-9)
    expected = unit_mean([vector_for("hello ollama", 768)])
    assert vector == pytest.approx(expected, abs=1e-12)


def test_model_name_is_sent_as_given(ollama_server):
    embedder(model="mxbai-embed-large").embed(["x"])
    assert ollama_server.requests[0].body["model"] == "mxbai-embed-large"


def test_one_request_per_text_in_order(ollama_server):
    vectors = embedder().embed(["first", "second", "third"])
    assert [r.body["prompt"] for r in ollama_server.requests] == ["first", "second", "third"]
    for text, vector in zip(["first", "second", "third"], vectors, strict=True):
        assert vector == pytest.approx(unit_mean([vector_for(text, 768)]), abs=1e-12)


@pytest.mark.parametrize(
    "failures",
    [[500], [503], [429], [500, 503], [429, 500, 503]],
    ids=["500", "503", "429", "500-503", "429-500-503"],
)
def test_retries_transient_statuses_then_succeeds(http_server, monkeypatch, failures):
    replies = [Reply(code, {"error": f"transient {code}"}) for code in failures]
    server = http_server(scripted(*replies, then=ollama_ok(768)))
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", server.url)
    [vector] = embedder().embed(["retry me"])
    assert len(server.requests) == len(failures) + 1
    assert all(r.body["prompt"] == "retry me" for r in server.requests)
    assert vector == pytest.approx(unit_mean([vector_for("retry me", 768)]), abs=1e-12)


@pytest.mark.parametrize("status", [500, 502, 503, 429])
def test_gives_up_after_four_attempts(http_server, monkeypatch, status):
    server = http_server(lambda request, n: Reply(status, {"error": "model is loading"}))
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", server.url)
    with pytest.raises(EmbeddingError) as caught:
        embedder().embed(["never"])
    assert len(server.requests) == 4
    message = str(caught.value)
    assert str(status) in message
    assert "gave up after 4 attempts" in message
    assert caught.value.exit_code == 10


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_client_errors_are_not_retried(http_server, monkeypatch, status):
    server = http_server(lambda request, n: Reply(status, {"error": f'model "nomic-embed-text" not found ({status})'}))
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", server.url)
    with pytest.raises(EmbeddingError) as caught:
        embedder().embed(["x"])
    assert len(server.requests) == 1
    assert f"returned {status}" in str(caught.value)
    assert "not found" in str(caught.value)  # the server's detail is passed on


def test_connection_refused_is_retried_then_fails(closed_port, monkeypatch, count_urlopen):
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", f"http://127.0.0.1:{closed_port}")
    with pytest.raises(EmbeddingError) as caught:
        embedder().embed(["x"])
    assert len(count_urlopen) == 4
    assert "unreachable" in str(caught.value)
    assert f"127.0.0.1:{closed_port}" in str(caught.value)
    assert "gave up after 4 attempts" in str(caught.value)


@pytest.mark.parametrize(
    "body",
    [
        b"this is not json",
        b'{"embedding": [0.1, 0.2',
        {"error": "no embedding here"},
        {"embedding": []},
        {"embedding": None},
        {"embedding": ["a", "b"]},
        {"embeddings": [[0.1, 0.2]]},  # the /api/embed shape, not /api/embeddings
        [0.1, 0.2, 0.3],
    ],
    ids=["garbage", "truncated", "missing", "empty", "null", "strings", "wrong-key", "bare-list"],
)
def test_malformed_answers_fail_without_retry(http_server, monkeypatch, body):
    server = http_server(lambda request, n: Reply(200, body))
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", server.url)
    with pytest.raises(EmbeddingError):
        embedder().embed(["x"])
    assert len(server.requests) == 1


def test_zero_vector_is_an_error(http_server, monkeypatch):
    server = http_server(lambda request, n: Reply(200, {"embedding": [0.0] * 8}))
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", server.url)
    with pytest.raises(EmbeddingError, match="zero or non-finite"):
        embedder(dims=8).embed(["x"])


def test_a_stalled_server_costs_the_calls_time_once_not_once_an_attempt(http_server, monkeypatch):
    """The timeout is the whole call's, retries included (ADR 0062): four attempts of 30 s each held a recall or an
    add for two minutes before it went on without the provider."""
    server = http_server(lambda request, n: Reply(200, {"embedding": [1.0, 0.0]}, delay=3.0))
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", server.url)
    with pytest.raises(EmbeddingError) as caught:
        OllamaEmbedder("nomic-embed-text", 2, timeout=0.5, backoff=0.01).embed(["slow"])
    assert len(server.requests) == 1
    assert "timed out" in str(caught.value)
    assert "gave up after 1 attempt)" in str(caught.value)


def test_retries_go_on_while_the_calls_time_lasts(http_server, monkeypatch):
    """A failure that comes back at once is retried; one that took most of the time leaves room for no retry, and
    the message is the last failure's, not a bare "out of time"."""
    server = http_server(lambda request, n: Reply(503, {"error": "busy"}, delay=0.45))
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", server.url)
    with pytest.raises(EmbeddingError) as caught:  # a backoff of up to 200 s, cut to the 0.05 s left
        OllamaEmbedder("nomic-embed-text", 2, timeout=0.5, backoff=100.0).embed(["busy"])
    assert len(server.requests) == 1
    assert "returned 503" in str(caught.value)
    assert "gave up after 1 attempt)" in str(caught.value)
    quick = http_server(lambda request, n: Reply(503, {"error": "busy"}))
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", quick.url)
    with pytest.raises(EmbeddingError, match=r"returned 503.*gave up after 4 attempts"):
        OllamaEmbedder("nomic-embed-text", 2, timeout=5.0, backoff=0.01).embed(["busy"])
    assert len(quick.requests) == 4


def test_long_text_is_chunked_each_posted_and_mean_pooled(ollama_server):
    words = [f"word{i % 97}" for i in range(2500)]
    text = " ".join(words)
    assert len(text) > CHAR_WINDOW
    [vector] = embedder().embed([text])
    prompts = [r.body["prompt"] for r in ollama_server.requests]
    assert len(prompts) >= 2
    assert all(len(p) <= CHAR_WINDOW for p in prompts)
    assert "".join(prompts) == text  # split on whitespace, nothing lost or repeated
    returned = [r.answer["embedding"] for r in ollama_server.requests]
    assert vector == pytest.approx(unit_mean(returned), abs=1e-9)
    assert math.isclose(math.sqrt(sum(x * x for x in vector)), 1.0, rel_tol=1e-9)


def test_long_text_among_short_ones_keeps_owners(ollama_server):
    long_text = "alpha " * 1500
    vectors = embedder().embed(["short one", long_text, "short two"])
    assert len(vectors) == 3
    assert vectors[0] == pytest.approx(unit_mean([vector_for("short one", 768)]), abs=1e-12)
    assert vectors[2] == pytest.approx(unit_mean([vector_for("short two", 768)]), abs=1e-12)
    middle = [r.answer["embedding"] for r in ollama_server.requests[1:-1]]
    assert len(middle) >= 2
    assert vectors[1] == pytest.approx(unit_mean(middle), abs=1e-9)


# ----------------------------------------------------------------------------- base URL resolution


def test_cerebro_ollama_url_beats_ollama_host(http_server, monkeypatch):
    preferred = http_server(ollama_ok(4))
    other = http_server(ollama_ok(4))
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", preferred.url)
    monkeypatch.setenv("OLLAMA_HOST", other.url)
    embedder(dims=4).embed(["x"])
    assert len(preferred.requests) == 1
    assert other.requests == []


def test_ollama_host_without_scheme(http_server, monkeypatch):
    server = http_server(ollama_ok(4))
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{server.port}")
    assert ollama.base_url() == f"http://127.0.0.1:{server.port}"
    embedder(dims=4).embed(["x"])
    assert len(server.requests) == 1
    assert server.requests[0].path == "/api/embeddings"


def test_ollama_host_with_scheme_and_trailing_slash(http_server, monkeypatch):
    server = http_server(ollama_ok(4))
    monkeypatch.setenv("OLLAMA_HOST", server.url + "/")
    embedder(dims=4).embed(["x"])
    assert server.requests[0].path == "/api/embeddings"


def test_cerebro_ollama_url_trailing_slash_and_path_prefix(http_server, monkeypatch):
    server = http_server(ollama_ok(4))
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", server.url + "/proxy/ollama/")
    embedder(dims=4).embed(["x"])
    assert server.requests[0].path == "/proxy/ollama/api/embeddings"


def test_default_base_url(monkeypatch):
    assert ollama.base_url() == "http://localhost:11434"
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", "")
    monkeypatch.setenv("OLLAMA_HOST", "")
    assert ollama.base_url() == "http://localhost:11434"


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", "http://127.0.0.1:11434"),
        ("0.0.0.0", "http://0.0.0.0:11434"),
        ("gpu-box", "http://gpu-box:11434"),
    ],
)
def test_ollama_host_without_port_means_ollamas_default_port(monkeypatch, host, expected):
    """Ollama reads OLLAMA_HOST=0.0.0.0 (its usual "listen everywhere" setting) as 0.0.0.0:11434; a
    scheme-less host without a port must not become port 80."""
    monkeypatch.setenv("OLLAMA_HOST", host)
    assert ollama.base_url() == expected


def test_non_http_url_is_refused_without_request(monkeypatch, count_urlopen):
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", "ftp://127.0.0.1:1")
    with pytest.raises(EmbeddingError, match="http"):
        embedder().embed(["x"])
    assert count_urlopen == []


# ----------------------------------------------------------------------------- broken HTTP answers


def test_answer_cut_short_is_retried_like_a_dropped_connection(http_server, monkeypatch):
    """A 200 whose body stops before its Content-Length (proxy or server died mid-answer) is a transient
    connection failure: retried, and the next good answer is used."""
    from tests.embed.conftest import truncated_json

    server = http_server(scripted(truncated_json(), then=ollama_ok(4)))
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", server.url)
    [vector] = embedder(dims=4).embed(["x"])
    assert len(server.requests) == 2
    assert vector == pytest.approx(unit_mean([vector_for("x", 4)]), abs=1e-12)


@pytest.mark.parametrize(
    "raw",
    [
        b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"embedding": [0.1',
        b"SSH-2.0-OpenSSH_9.6\r\n\r\n",  # something that is not an HTTP server at all
    ],
    ids=["cut-short", "not-http"],
)
def test_broken_http_answers_are_embedding_errors(http_server, monkeypatch, raw):
    """Whatever goes wrong on the wire, ``embed`` raises EmbeddingError (exit 10), never a raw
    http.client exception (which the CLI would report as an internal error, exit 1)."""
    server = http_server(lambda request, n: Reply(raw=raw))
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", server.url)
    with pytest.raises(EmbeddingError):
        embedder(dims=4).embed(["x"])
    assert 1 <= len(server.requests) <= 4


def _trickling_server(stop: threading.Event) -> int:
    """A server that answers 200 with a long Content-Length, then one byte every 20 ms: each read within any socket
    timeout, the whole answer never."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.1)

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
                for _ in range(150):  # 3 s at most: a client that waits for it all fails, but not for ever
                    if stop.is_set():
                        break
                    try:
                        conn.sendall(b" ")
                    except OSError:
                        break
                    stop.wait(0.02)
        listener.close()

    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1]


def test_a_server_that_trickles_its_answer_meets_the_requests_deadline(monkeypatch):
    """The timeout bounded each socket read, not the answer: a byte a second kept `cerebro add` waiting for ever."""
    stop = threading.Event()
    try:
        monkeypatch.setenv("CEREBRO_OLLAMA_URL", f"http://127.0.0.1:{_trickling_server(stop)}")
        with pytest.raises(EmbeddingError, match=r"took longer than 0.3 s to answer \(gave up after 1 attempt\)"):
            OllamaEmbedder("nomic-embed-text", 2, timeout=0.3, attempts=1).embed(["slow"])
    finally:
        stop.set()


def test_an_answer_past_the_size_cap_is_refused_without_reading_it_all(http_server, monkeypatch):
    from cerebro.embed import http

    monkeypatch.setattr(http, "MAX_ANSWER_BYTES", 1000)
    server = http_server(lambda request, n: Reply(200, {"embedding": [0.5] * 2000}))
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", server.url)
    with pytest.raises(EmbeddingError, match="answered with more than 1000 bytes"):
        embedder(dims=2000).embed(["x"])
    assert len(server.requests) == 1  # not retried: the same answer would come again


def test_a_password_in_the_providers_url_is_never_shown(closed_port, monkeypatch) -> None:
    """`CEREBRO_OLLAMA_URL=http://admin:secret@host` went whole into every warning and MCP notice."""
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", f"http://admin:S3cretPass@127.0.0.1:{closed_port}")
    with pytest.raises(EmbeddingError) as caught:
        OllamaEmbedder("nomic-embed-text", 2, attempts=1).embed(["x"])
    assert "S3cretPass" not in str(caught.value) and f"admin:***@127.0.0.1:{closed_port}" in str(caught.value)
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", "ftp://admin:S3cretPass@host")
    with pytest.raises(EmbeddingError, match=r"ftp://admin:\*\*\*@host") as refused:
        OllamaEmbedder("nomic-embed-text", 2, attempts=1).embed(["x"])
    assert "S3cretPass" not in str(refused.value)
