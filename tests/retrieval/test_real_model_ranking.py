"""Recall ranking with the real local model (MiniLM int8), not the bag-of-words fake that drives the rest of
``tests/retrieval``: 30 memories on distinct topics, 10 questions that share no content word with the memory
they ask about. A regression in the model, its tokenizer or the pooling (CLS instead of mean, no mask, no
normalisation, special tokens dropped) moves these answers; the keyword lane cannot rescue them."""

from __future__ import annotations

import pytest

from cerebro import Brain, paths

MEMORIES = {
    "auth": "Access tokens are JWTs that expire after 15 minutes; refresh tokens rotate on every use.",
    "deploy": "Production releases go out through a blue-green switch on the load balancer.",
    "db_migrate": "Schema changes are applied with Alembic before the web servers restart.",
    "flaky": "The integration suite fails intermittently because two tests share one temp directory.",
    "cache": "Redis holds rendered product pages for ten minutes to take load off PostgreSQL.",
    "logging": "Services write structured JSON logs to stderr; the collector ships them to Loki.",
    "payments": "Stripe webhooks are verified with the signing secret before an order is marked paid.",
    "i18n": "User-facing strings live in gettext catalogs; translators work in Weblate.",
    "perf": "The dashboard was slow because every widget issued its own N+1 query; we batch them now.",
    "secrets": "API keys are kept in Vault and injected as environment variables at container start.",
    "style": "Python code is formatted with ruff format and lines stop at 120 characters.",
    "ci": "GitHub Actions runs lint, unit tests and a container build on every pull request.",
    "email": "Transactional mail is sent through Postmark; bounces are recorded on the user row.",
    "search": "Product search uses OpenSearch with a synonym list maintained by the merchandising team.",
    "timezones": "All timestamps are stored in UTC and converted to the user's zone only in the browser.",
    "backups": "Nightly pg_dump snapshots are copied to an S3 bucket in another region and kept 30 days.",
    "rate": "The public API allows 100 requests per minute per key; excess calls get HTTP 429.",
    "images": "Uploaded photos are resized by a worker into three widths and stored as WebP.",
    "feature": "New features ship behind LaunchDarkly flags and are enabled for staff first.",
    "oncall": "The on-call engineer is paged by PagerDuty when the error rate passes two percent.",
    "mobile": "The iOS app is built with SwiftUI and talks to the same REST API as the website.",
    "queue": "Background jobs run on Celery with RabbitMQ; failed jobs retry three times with backoff.",
    "a11y": "Every form field needs a visible label and the site is checked with axe before release.",
    "gdpr": "Deleting an account erases personal data within 30 days, as the privacy policy promises.",
    "monorepo": "Frontend and backend live in one repository; the frontend is under web/.",
    "types": "The backend is type-checked with mypy in strict mode in CI.",
    "ws": "Live order updates reach the browser over a WebSocket that reconnects with jitter.",
    "pdf": "Invoices are rendered to PDF with WeasyPrint from an HTML template.",
    "geo": "Store locations are geocoded once with the Google Maps API and cached in the database.",
    "ab": "Pricing page experiments are split 50/50 and judged after two weeks of traffic.",
}
QUERIES = {
    "how long does a login session stay valid": "auth",
    "what happens when a customer's card payment is confirmed": "payments",
    "where do we keep passwords and credentials for third-party services": "secrets",
    "why were some test runs randomly red": "flaky",
    "how do we recover the data if the main server is lost": "backups",
    "how is someone alerted when things go wrong in production": "oncall",
    "how are we translating the interface into other languages": "i18n",
    "what stops a client from hammering our endpoints": "rate",
    "how do we release unfinished functionality to employees before customers": "feature",
    "what happens to someone's information when they close their account": "gdpr",
}


@pytest.fixture(scope="module")
def ranked_brain(tmp_path_factory: pytest.TempPathFactory):
    import os

    home = tmp_path_factory.mktemp("ranking-home")
    old = os.environ.get("CEREBRO_HOME")
    os.environ["CEREBRO_HOME"] = str(home)
    try:
        path = paths.project_brain_path(tmp_path_factory.mktemp("ranking-project"))
        Brain.init(path)  # the default provider: the local model
        with Brain.open(path) as brain:
            ids = dict(zip(MEMORIES, brain.add_many([{"content": text} for text in MEMORIES.values()]), strict=True))
            yield brain, ids
    finally:
        if old is None:
            os.environ.pop("CEREBRO_HOME", None)
        else:
            os.environ["CEREBRO_HOME"] = old


@pytest.mark.parametrize("question", list(QUERIES))
def test_the_vector_lane_alone_finds_the_memory_a_question_means(ranked_brain, question: str) -> None:
    brain, ids = ranked_brain
    found = brain.recall(question, limit=3, lanes=("vector",), threshold=0.0)
    top3 = [r.node.id for r in found]
    assert ids[QUERIES[question]] in top3, [k for k, v in ids.items() if v in top3]


def test_hybrid_recall_keeps_the_meant_memory_in_its_top_three(ranked_brain) -> None:
    """The keyword lane cannot find these (no shared word) and must not push them out: a query's words do
    collide with other memories ("production", "release", "test")."""
    brain, ids = ranked_brain
    missed = [q for q, topic in QUERIES.items() if ids[topic] not in brain.recall(q, limit=3, threshold=0.0).ids]
    assert len(missed) <= 1, missed
