"""The optional reranker: an operator-supplied subprocess (upstream ADR-012), never a shell.

Contract: the command (split on whitespace into argv) reads ``{"query": str, "documents": [str, …]}`` on
stdin and writes ``{"scores": [float, …]}`` on stdout, one finite score per document. It gets 30 s and
4 MiB of output. Anything else — missing binary, crash, timeout, oversized or malformed output, wrong
length, NaN — is a :class:`RerankError`, and recall keeps its composite order with a one-line warning.
"""

from __future__ import annotations

import json
import math
import subprocess
import threading
from collections.abc import Sequence
from typing import TypeVar

from cerebro.errors import QUOTED_CHARACTERS, RerankError, shortened

T = TypeVar("T")

TIMEOUT_SECONDS = 30.0
MAX_OUTPUT_BYTES = 4 * 1024 * 1024
OVER_RETRIEVE = 40  # candidates handed to the reranker: max(limit, 40)
ENV_COMMAND = "CEREBRO_RERANK_COMMAND"


def score(
    command: str,
    query: str,
    documents: Sequence[str],
    *,
    timeout: float = TIMEOUT_SECONDS,
    max_output: int = MAX_OUTPUT_BYTES,
) -> list[float]:
    argv = command.split()
    if not argv:
        raise RerankError("empty reranker command")
    payload = json.dumps({"query": query, "documents": list(documents)}).encode("utf-8")
    try:
        proc = subprocess.Popen(  # noqa: S603 - argv from the operator's config, never a shell
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
    except OSError as exc:
        raise RerankError(f"cannot start: {exc.strerror or exc}") from None
    except ValueError as exc:  # an argument holding a NUL character
        raise RerankError(f"cannot start: {exc}") from None

    chunks: list[bytes] = []
    overflow = threading.Event()

    def read() -> None:
        total = 0
        assert proc.stdout is not None  # noqa: S101 - narrows the type: started with PIPE
        while block := proc.stdout.read(65536):
            total += len(block)
            if total > max_output:
                overflow.set()
                proc.kill()
                return
            chunks.append(block)

    def write() -> None:
        assert proc.stdin is not None  # noqa: S101 - narrows the type: started with PIPE
        try:
            proc.stdin.write(payload)
            proc.stdin.close()
        except OSError:  # the child stopped reading (crashed, or ignores stdin)
            pass

    reader = threading.Thread(target=read, daemon=True)
    writer = threading.Thread(target=write, daemon=True)
    reader.start()
    writer.start()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise RerankError(f"timed out after {timeout:g}s") from None
    reader.join(timeout=5)
    if overflow.is_set():
        raise RerankError(f"output exceeded {max_output} bytes")
    if proc.returncode != 0:
        raise RerankError(f"exited with status {proc.returncode}")
    try:
        answer = json.loads(b"".join(chunks))
    except (ValueError, RecursionError):  # RecursionError: arrays nested thousands deep, well within the size cap
        raise RerankError("malformed JSON on stdout") from None
    scores = answer.get("scores") if isinstance(answer, dict) else None
    if not isinstance(scores, list):
        raise RerankError('no "scores" list in its answer')
    if len(scores) != len(documents):
        raise RerankError(f"{len(scores)} scores for {len(documents)} documents")
    clean: list[float] = []
    for value in scores:
        try:  # an integer past float's range (10**400) does not convert: not a score either
            number = float(value) if isinstance(value, int | float) and not isinstance(value, bool) else math.nan
        except OverflowError:
            number = math.nan
        if not math.isfinite(number):
            raise RerankError(f"non-finite or non-numeric score {shortened(repr(value), QUOTED_CHARACTERS)}")
        clean.append(number)
    return clean


def reorder(items: Sequence[T], scores: Sequence[float], fusion: str) -> list[T]:
    """``reorder``: stable sort by reranker score; anything else is RRF of the composite rank and the
    reranker rank (1/(60+r₁) + 1/(60+r₂)), ties keeping the composite order."""
    indices = list(range(len(items)))
    by_reranker = sorted(indices, key=lambda i: -scores[i])
    if fusion == "reorder":
        return [items[i] for i in by_reranker]
    reranker_rank = {i: rank for rank, i in enumerate(by_reranker, start=1)}
    fused = {i: 1.0 / (60 + i + 1) + 1.0 / (60 + reranker_rank[i]) for i in indices}
    return [items[i] for i in sorted(indices, key=lambda i: (-fused[i], i))]


def command_name(command: str) -> str:
    parts = command.split()
    return parts[0] if parts else ""
