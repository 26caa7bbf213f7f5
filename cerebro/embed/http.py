"""JSON over HTTP for the network providers: 30 s per request, up to 4 attempts with exponential
backoff and jitter on connection errors, 429 and 5xx only. Standard library only (fast to import)."""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from typing import Any

from cerebro.embed.base import EmbeddingError

TIMEOUT_SECONDS = 30.0
ATTEMPTS = 4
BACKOFF_SECONDS = 0.5  # first wait; doubles each attempt, with full jitter


class _Retryable(Exception):
    pass


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Embedding APIs do not redirect; following one would hand the API key to another host."""

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: object,
        code: int,
        msg: str,
        headers: object,
        newurl: str,
    ) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


def post_json(
    url: str,
    payload: dict[str, Any],
    *,
    headers: dict[str, str] | None = None,
    timeout: float = TIMEOUT_SECONDS,
    attempts: int = ATTEMPTS,
    backoff: float = BACKOFF_SECONDS,
    what: str = "embedding provider",
) -> Any:  # noqa: ANN401 - the provider's JSON answer, as it sent it
    from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_random_exponential

    body = json.dumps(payload).encode("utf-8")
    request_headers = {"Content-Type": "application/json", "Accept": "application/json", **(headers or {})}

    def attempt() -> Any:  # noqa: ANN401 - the provider's JSON answer, as it sent it
        # http(s) only: the scheme is checked below, before the first attempt
        request = urllib.request.Request(url, data=body, headers=request_headers, method="POST")  # noqa: S310
        try:
            with _OPENER.open(request, timeout=timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:300].decode("utf-8", "replace").strip()
            message = f"{what} returned {exc.code}: {detail}"
            if exc.code == 429 or exc.code >= 500:
                raise _Retryable(message) from None
            raise EmbeddingError(message) from None
        except (urllib.error.URLError, http.client.HTTPException, TimeoutError, ConnectionError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise _Retryable(f"{what} unreachable at {url}: {reason}") from None
        try:
            return json.loads(raw)
        except ValueError:
            raise EmbeddingError(f"{what} returned malformed JSON") from None

    retrying = Retrying(
        retry=retry_if_exception_type(_Retryable),
        stop=stop_after_attempt(max(1, attempts)),
        wait=wait_random_exponential(multiplier=backoff, max=backoff * 8),
        reraise=True,
    )
    if not url.startswith(("http://", "https://")):
        raise EmbeddingError(f"{what} URL must be http(s): {url}")
    try:
        return retrying(attempt)
    except _Retryable as exc:
        raise EmbeddingError(f"{exc} (gave up after {attempts} attempts)") from None
