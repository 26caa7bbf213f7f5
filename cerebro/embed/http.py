"""JSON over HTTP for the network providers: 30 s for a call — every attempt and the whole of each answer, not each
read of it — and at most 64 MiB of an answer; up to 4 attempts with exponential backoff and jitter on connection
errors, 429 and 5xx only, while that time lasts (ADR 0062). Standard library only (fast to import)."""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.request
from typing import Any

from cerebro.embed.base import EmbeddingError

TIMEOUT_SECONDS = 30.0  # a call's whole time, its retries included: a stalled server costs it once, not once an attempt
MAX_ANSWER_BYTES = 64 * 1024 * 1024  # 64 texts × 4,096 floats as JSON is ~6 MB: past this, no embedding answer
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
    from tenacity import (
        Retrying,
        retry_if_exception_type,
        stop_after_attempt,
        wait_random_exponential,
    )

    body = json.dumps(payload).encode("utf-8")
    deadline = time.monotonic() + timeout
    tries, last = 0, None
    request_headers = {"Content-Type": "application/json", "Accept": "application/json", **(headers or {})}

    def attempt() -> Any:  # noqa: ANN401 - the provider's JSON answer, as it sent it
        nonlocal tries, last
        left = deadline - time.monotonic()
        if left <= 0 and last is not None:  # the backoff used up the call's time: the last failure stands
            raise last
        tries += 1
        try:
            return ask(max(left, 0.001))
        except _Retryable as exc:
            last = exc
            raise

    def ask(left: float) -> Any:  # noqa: ANN401 - the provider's JSON answer, as it sent it
        # http(s) only: the scheme is checked below, before the first attempt
        request = urllib.request.Request(url, data=body, headers=request_headers, method="POST")  # noqa: S310
        try:
            with _OPENER.open(request, timeout=left) as response:
                raw = _read_within(response, deadline, timeout, what)
        except urllib.error.HTTPError as exc:
            detail = exc.read(300).decode("utf-8", "replace").strip()
            message = f"{what} returned {exc.code}: {detail}"
            if exc.code == 429 or exc.code >= 500:
                raise _Retryable(message) from None
            raise EmbeddingError(message) from None
        except (urllib.error.URLError, http.client.HTTPException, TimeoutError, ConnectionError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise _Retryable(f"{what} unreachable at {shown(url)}: {reason}") from None
        try:
            return json.loads(raw)
        except ValueError:
            raise EmbeddingError(f"{what} returned malformed JSON") from None

    jitter = wait_random_exponential(multiplier=backoff, max=backoff * 8)
    retrying = Retrying(
        retry=retry_if_exception_type(_Retryable),
        stop=stop_after_attempt(max(1, attempts)),
        wait=lambda state: min(jitter(state), max(0.0, deadline - time.monotonic())),  # never past the deadline
        reraise=True,
    )
    if not url.startswith(("http://", "https://")):
        raise EmbeddingError(f"{what} URL must be http(s): {shown(url)}")
    try:
        return retrying(attempt)
    except _Retryable as exc:
        made = f"{tries} attempt" if tries == 1 else f"{tries} attempts"
        raise EmbeddingError(f"{exc} (gave up after {made})") from None


def shown(url: str) -> str:
    """``url`` as a message may show it: a password in it (``http://user:secret@host``) masked."""
    scheme, sep, rest = url.partition("://")
    authority, slash, path = rest.partition("/")
    if not sep or "@" not in authority:
        return url
    userinfo, _, host = authority.rpartition("@")
    user, colon, _ = userinfo.partition(":")
    return f"{scheme}://{user}{':***' if colon else ''}@{host}{slash}{path}"


def _read_within(response: Any, deadline: float, timeout: float, what: str) -> bytes:  # noqa: ANN401 - an http.client response
    """The answer's body, read a block at a time: a server that trickles a byte a second (each read within the
    socket's timeout) meets the call's deadline; one that sends without end meets the size cap."""
    blocks, total = [], 0
    while block := response.read1(65536):
        total += len(block)
        if total > MAX_ANSWER_BYTES:
            raise EmbeddingError(f"{what} answered with more than {MAX_ANSWER_BYTES} bytes")
        if time.monotonic() > deadline:
            raise _Retryable(f"{what} took longer than {timeout:g} s to answer")
        blocks.append(block)
    if getattr(response, "length", None):  # the connection closed before the Content-Length: a dropped answer
        raise _Retryable(f"{what} answer cut short ({response.length} bytes missing)")
    return b"".join(blocks)
