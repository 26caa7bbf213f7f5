"""The brain configuration registry: typed keys with defaults, validators and descriptions.

Values live in the brain's ``schema_meta`` under ``config.<key>`` (upstream's layout, so brains written by
Go cerebro keep their settings). Precedence is an explicit flag > the brain's value > the compiled default.
The order of :data:`REGISTRY` is the order ``config list`` prints (upstream's order).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, NamedTuple

from cerebro.errors import InvalidInput, NotFound, quote

META_PREFIX = "config."


MAX_COUNT = 1000  # limits and depths: past this a setting only makes every call slow, or fail
MAX_CONTENT_BYTES = 64 * 1024 * 1024  # the most max_content_bytes may be (and what a command reads from stdin)


# Numbers as Go's strconv.Atoi / ParseFloat read them (ASCII digits, no "_" separators): a brain shared with Go
# cerebro holds only values it can read too. Python's int() and float() take "1_000" and "５" as well.
# The command line reads its numbers the same way (cerebro.cli.app).
WHOLE = re.compile(r"[+-]?[0-9]+")
DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _bounded_int(raw: str, low: int, high: int) -> int:
    if not WHOLE.fullmatch(raw.strip()):
        raise ValueError(f"{quote(raw)} is not a whole number")
    value = int(raw.strip())
    if not low <= value <= high:
        raise ValueError(f"{quote(raw)} must be from {low} to {high}")
    return value


def _positive_int(raw: str) -> int:
    return _bounded_int(raw, 1, MAX_COUNT)


def _whole_number(raw: str) -> int:
    return _bounded_int(raw, 0, MAX_COUNT)


def _unit_float(raw: str) -> float:
    if not DECIMAL.fullmatch(raw.strip()):
        raise ValueError(f"{quote(raw)} is not a number")
    value = float(raw.strip())
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{quote(raw)} must lie in [0, 1]")
    return value


def _bool(raw: str) -> bool:
    if raw == "true":
        return True
    if raw == "false":
        return False
    raise ValueError(f"{quote(raw)} must be exactly true or false")


def _command(raw: str) -> str:
    """A command line (split on whitespace into argv): one line of text, no control characters (a NUL cannot reach a
    program; an escape sequence would be printed to the terminal with every notice naming the command)."""
    if any((ord(c) < 32 and c != "\t") or ord(c) == 127 for c in raw):
        raise ValueError(f"{quote(raw)} holds a control character")
    return raw


def _fusion(raw: str) -> str:
    if raw not in ("rrf", "reorder"):
        raise ValueError(f"{quote(raw)} must be rrf or reorder")
    return raw


def _lane_fusion(raw: str) -> str:
    if raw not in ("blend", "rrf"):
        raise ValueError(f"{quote(raw)} must be blend or rrf")
    return raw


class ConfigKey(NamedTuple):  # a NamedTuple, not a dataclass: ~1 ms less at import on the hooks' path (ADR 0053)
    key: str
    default: str
    parse: Callable[[str], Any]
    description: str

    def validate(self, raw: str) -> str:
        """Return the canonical text to store, or raise InvalidInput."""
        try:
            self.parse(raw)
        except ValueError as exc:
            raise InvalidInput(f"invalid value for {self.key}: {exc}") from None
        return raw if self.parse in (_command, _fusion, _lane_fusion, _bool) else raw.strip()


_KEYS = [
    ConfigKey("prime_limit", "20", _positive_int, "Memories injected by recall --prime at session start"),
    ConfigKey("gc_threshold", "0.01", _unit_float, "Retention score below which gc archives a memory"),
    ConfigKey("search_limit", "10", _positive_int, "Default result count of search"),
    ConfigKey("search_threshold", "0.7", _unit_float, "Minimum cosine similarity for search (default: the provider's)"),
    ConfigKey("recall_threshold", "0.3", _unit_float, "Minimum cosine similarity for recall's vector lane"),
    ConfigKey("indegree_bonus_enabled", "true", _bool, "Score memories cited by derived_from/supports edges"),
    ConfigKey("stop_guard_enabled", "false", _bool, "Let the stop-guard hook block premature stops"),
    ConfigKey("rerank_enabled", "false", _bool, "Rerank recall results with rerank_command"),
    ConfigKey("rerank_command", "", _command, "Reranker command (argv split on spaces, never a shell)"),
    ConfigKey("rerank_fusion", "rrf", _fusion, "How reranker scores combine: rrf or reorder"),
    ConfigKey("bm25_enabled", "true", _bool, "Fuse the FTS5 keyword lane into recall"),
    ConfigKey("expand_threshold", "0.75", _unit_float, "Skip graph expansion when top cosine exceeds this (0 = off)"),
    ConfigKey("expand_spread_threshold", "0.0", _unit_float, "Skip expansion when the cosine spread is below this"),
    # Ours (ADR 0010): how recall fuses its lanes. Upstream's recipe is fusion=rrf.
    ConfigKey("fusion", "blend", _lane_fusion, "Lane fusion: blend (normalised scores) or rrf (ranks)"),
    ConfigKey("keyword_weight", "0.6", _unit_float, "blend: the keyword lane's share of the fused score"),
    ConfigKey("lane_depth", "50", _positive_int, "blend: candidates each lane brings before fusion"),
    ConfigKey(
        "prime_token_budget",
        "2000",
        lambda raw: _bounded_int(raw, 100, 100_000),
        "Most tokens (estimated) a session-start prime may inject",
    ),
    ConfigKey("feedback_docs", "3", _whole_number, "Top keyword hits that steer the vector query (0 = off)"),
    ConfigKey("feedback_weight", "0.7", _unit_float, "How far those hits move the vector query"),
    ConfigKey("centering", "1.0", _unit_float, "How far the vector query moves from the brain's mean (0 = off)"),
    # Ours (ADR 0033): the memories written just before and after a top result come with it.
    ConfigKey(
        "adjacency",
        "0.4",
        _unit_float,
        "Share of a top result's score lent to the memories written beside it; half of it to results near it (0 = off)",
    ),
    # Ours (ADR 0027): secrets in new memories become [secret:kind] markers before storage.
    ConfigKey("redact_secrets", "true", _bool, "Replace secrets in new memories with [secret:kind] markers"),
    # Ours (issue 17): a memory is a note, not a file; a 1 MB add took minutes and gigabytes on the local model.
    ConfigKey(
        "max_content_bytes",
        "1048576",
        lambda raw: _bounded_int(raw, 1024, MAX_CONTENT_BYTES),
        "Largest memory content accepted, in bytes of UTF-8",
    ),
]

REGISTRY: dict[str, ConfigKey] = {k.key: k for k in _KEYS}

# Settings that make recall run a program (ADR 0012, ADR 0026).
EXECUTABLE = frozenset({"rerank_command", "rerank_enabled"})
# Settings only the user on this machine may change, because a received file must never weaken the brain's
# protection — run a program, or store secrets in clear (ADR 0027): no export carries them, no import sets them.
LOCAL_ONLY = EXECUTABLE | {"redact_secrets"}

# Defaults that depend on the embedding provider: cosines are not comparable across models. search_threshold for
# the local MiniLM is measured (bench/similarity_calibration.py on LoCoMo: a question and its evidence turn have a
# median cosine of 0.48 and 0.40 keeps 70 % of such pairs, where upstream's 0.7 — chosen for nomic-embed-text on
# Ollama — kept under 10 %); the others keep upstream's 0.7 until measured (docs/benchmarks.md).
PROVIDER_DEFAULTS: dict[str, dict[str, str]] = {"search_threshold": {"local": "0.4"}}


def default(key: str, provider: str | None = None) -> str:
    """The default text of ``key`` for a brain on ``provider`` (the registry's when it does not depend on it)."""
    return PROVIDER_DEFAULTS.get(key, {}).get(provider or "", REGISTRY[key].default)


def effective(key: str, stored: str | None, provider: str | None = None) -> Any:  # noqa: ANN401 - the setting's type
    """The parsed value of ``key``: the stored text, or the default (for ``provider``) when absent or invalid (a
    value written by hand or by another tool must never break recall)."""
    spec = REGISTRY[key]
    if stored is not None:
        try:
            return spec.parse(stored)
        except ValueError:
            pass
    return spec.parse(default(key, provider))


def typed(key: str, text: str) -> object:
    """``text`` as its setting's type (``"20"`` → 20, ``"true"`` → True) for JSON; text that does not parse (a
    value written by hand) is shown as stored."""
    try:
        return REGISTRY[key].parse(text)
    except (KeyError, ValueError):
        return text


def lookup(key: str) -> ConfigKey:
    try:
        return REGISTRY[key]
    except KeyError:
        raise NotFound(f"unknown config key {quote(key)} — run 'cerebro config list' to see available keys") from None
