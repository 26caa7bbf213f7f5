"""Secret redaction: value-shaped secrets in text become a typed marker, ``[secret:aws-access-key]``.

Every write path of the Brain runs memory text (content, and string values inside metadata) through
:func:`redact` before storage, the keyword index and embedding, unless the brain's ``redact_secrets`` setting
is off or the caller allowed the secret (``add --allow-secret``). ADR 0027 has the reasoning; the measured
precision and recall on the labelled sets in ``fixtures/secrets/`` are in ``docs/privacy.md``.

Two kinds of evidence make a secret:
- **its shape**: the published formats of providers' keys and tokens (a fixed prefix, a length, an alphabet),
  private-key blocks, JWTs, a password inside a URL;
- **its name**: a value assigned to (or said of) a secret-like name — ``DB_PASSWORD=…``, ``"api_key": "…"``,
  ``--token …``, ``Authorization: Bearer …``, "the staging password is …". A password-like name takes any
  literal value; other names (token, secret, API key) only a value that looks random.
A string with neither (a commit id, a digest, a UUID, base64 data) is left alone: redaction must not eat the
hashes and ids an agent's memories are full of. Values that are references or placeholders (``os.environ[…]``,
``${TOKEN}``, ``<your-key>``, ``****``) are not secrets.

Every pattern is linear: names are found from a keyword outwards with bounded steps, never by a regex that
can backtrack over a long run of text (memories can be large and hostile).
"""

from __future__ import annotations

import bisect
from typing import Any

from cerebro.redaction.names import by_name
from cerebro.redaction.shapes import by_shape
from cerebro.redaction.values import MARKER, MARKER_RE, MASK, Finding

__all__ = ["MARKER", "MARKER_RE", "Finding", "find", "redact", "redact_json"]


def find(text: str) -> list[Finding]:
    """Every secret in ``text``, in order, none overlapping (a provider's shape wins over a name)."""
    if not text:
        return []
    if "[secret:" in text:  # markers are read as blanks: what was redacted is never found again inside them
        text = MARKER_RE.sub(lambda m: MASK * len(m.group()), text)
    candidates = by_shape(text)
    candidates += by_name(text)
    chosen: list[Finding] = []  # kept in order of start, none overlapping
    for finding in candidates:  # in priority order: shapes, then URLs, commands and headers, then names
        at = bisect.bisect_left(chosen, finding.start, key=lambda f: f.start)
        clear_before = at == 0 or chosen[at - 1].end <= finding.start
        clear_after = at == len(chosen) or finding.end <= chosen[at].start
        if finding.end > finding.start and clear_before and clear_after:
            chosen.insert(at, finding)
    return chosen


def redact(text: str) -> tuple[str, list[str]]:
    """``text`` with every secret replaced by its marker, and the kinds replaced (in order)."""
    findings = find(text)
    if not findings:
        return text, []
    out, last = [], 0
    for f in findings:
        out += [text[last : f.start], MARKER.format(kind=f.kind)]
        last = f.end
    out.append(text[last:])
    return "".join(out), [f.kind for f in findings]


def redact_json(value: Any, key: str | None = None) -> tuple[Any, list[str]]:  # noqa: ANN401 - JSON-shaped data in, the same shape out
    """Redact every string inside JSON-shaped data (metadata); keys are kept. A value under a secret-like key
    (``{"api_key": "…"}``, ``{"password": 48213907}``, each of ``{"passwords": ["…", "…"]}``) is judged as that
    assignment; a number found to be one becomes its marker."""
    kinds: list[str] = []
    if isinstance(value, str):
        return _redact_named(key, value) if key is not None else redact(value)
    if isinstance(value, int | float) and not isinstance(value, bool) and key is not None:
        clean, found = _redact_named(key, str(value))
        return (clean, found) if found else (value, [])
    if isinstance(value, dict):
        out = {}
        for name, item in value.items():
            clean, found = redact_json(item, name if isinstance(name, str) and not isinstance(item, dict) else None)
            out[name] = clean
            kinds += found
        return out, kinds
    if isinstance(value, list):
        items = []
        singular = key[:-1] if key is not None and key.endswith("s") else key  # each of "passwords" a password
        for item in value:
            clean, found = redact_json(item, singular)
            items.append(clean)
            kinds += found
        return items, kinds
    return value, kinds


def _redact_named(key: str, item: str) -> tuple[str, list[str]]:
    """A metadata string under ``key``: its own secrets, or the whole value when the key names a secret."""
    clean, kinds = redact(item)
    if kinds:
        return clean, kinds
    probe = f'"{key}": "{item}"'
    whole = [f for f in by_name(probe) if f.start == len(key) + 5 and f.end == len(probe) - 1]
    if whole:
        return MARKER.format(kind=whole[0].kind), [whole[0].kind]
    return item, []
