"""What reaches the MCP SDK from stdin: each request line as the client sent it, except that a lone UTF-16 surrogate
escaped in its JSON (``"\\ud83d"``: half an emoji, as a JavaScript client leaves one when it cuts a string at a
length) becomes U+FFFD. The SDK's JSON parser refuses such a line and answers nothing, so the client's call waited
for ever; Python's ``json`` reads it, and the text stands in for the broken character as a stored text that is not
UTF-8 does (ADR 0063).
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from io import TextIOWrapper
from typing import TYPE_CHECKING, Any

from cerebro import surrogates

if TYPE_CHECKING:
    from collections.abc import Iterator


def lenient_line(line: str) -> str:
    """``line`` with every lone surrogate in its JSON strings as U+FFFD; any other line as it is (a pair escaped
    whole is one character, and the SDK reads it)."""
    if not surrogates.ESCAPE.search(line.encode("utf-8", "surrogatepass")):
        return line
    try:
        message = json.loads(line)
    except ValueError:
        return line  # not JSON: the SDK says so, as for any other
    return json.dumps(surrogates.replaced(message), ensure_ascii=False) + "\n"


class _LenientLines(TextIOWrapper):
    """Stdin as UTF-8 text lines (undecodable bytes as U+FFFD, as the SDK reads them), each through
    :func:`lenient_line`."""

    def readline(self, size: int = -1, /) -> str:  # type: ignore[override] # typeshed types it as _IOBase does
        return lenient_line(super().readline(size))


@contextmanager
def lenient_stdin() -> Iterator[Any]:
    """Stdin for ``stdio_server(stdin=...)``, read from a private copy of fd 0 while fd 0 itself reads the null
    device (as the SDK's own claim of stdin does: a child process must not read the client's requests)."""
    import anyio

    wire = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    saved = os.dup(0)
    os.dup2(null, 0)
    os.close(null)
    try:
        with os.fdopen(wire, "rb") as raw, _LenientLines(raw, encoding="utf-8", errors="replace") as text:
            yield anyio.wrap_file(text)
    finally:
        os.dup2(saved, 0)
        os.close(saved)
