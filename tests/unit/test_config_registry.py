from __future__ import annotations

import pytest

from cerebro import config
from cerebro.errors import InvalidInput, NotFound

UPSTREAM_ORDER = [
    "prime_limit",
    "gc_threshold",
    "search_limit",
    "search_threshold",
    "recall_threshold",
    "indegree_bonus_enabled",
    "stop_guard_enabled",
    "rerank_enabled",
    "rerank_command",
    "rerank_fusion",
    "bm25_enabled",
    "expand_threshold",
    "expand_spread_threshold",
    # ours, after upstream's (ADR 0010)
    "fusion",
    "keyword_weight",
    "lane_depth",
    "prime_token_budget",
    "feedback_docs",
    "feedback_weight",
    "centering",
    "adjacency",
    "redact_secrets",  # ours (ADR 0027)
    "max_content_bytes",  # ours (issue 17)
]


def test_registry_has_upstream_keys_in_upstream_order() -> None:
    assert list(config.REGISTRY) == UPSTREAM_ORDER
    defaults = {k: v.default for k, v in config.REGISTRY.items()}
    assert defaults["prime_limit"] == "20"
    assert defaults["gc_threshold"] == "0.01"
    assert defaults["recall_threshold"] == "0.3"
    assert defaults["expand_threshold"] == "0.75"
    assert defaults["expand_spread_threshold"] == "0.0"
    assert defaults["stop_guard_enabled"] == "false"


@pytest.mark.parametrize(
    ("key", "bad"),
    [
        ("prime_limit", "0"),
        ("prime_limit", "-3"),
        ("prime_limit", "2.5"),
        ("prime_limit", "x"),
        ("gc_threshold", "nan"),
        ("gc_threshold", "NaN"),
        ("gc_threshold", "1.01"),
        ("gc_threshold", "-0.1"),
        ("bm25_enabled", "True"),
        ("bm25_enabled", "1"),
        ("bm25_enabled", "yes"),
        ("bm25_enabled", ""),
        ("rerank_fusion", "RRF"),
        ("rerank_fusion", "mean"),
        # As Go's Atoi and ParseFloat read numbers (a brain shared with Go cerebro): no separators, ASCII digits only.
        ("prime_limit", "1_0"),
        ("prime_limit", "\uff15"),  # a full-width 5
        ("lane_depth", "1_0"),
        ("gc_threshold", "0_5"),
        ("gc_threshold", "\u0660.5"),  # an Arabic-Indic zero
        ("rerank_command", "python3\x00 x"),
        ("rerank_command", "\x1b]0;owned\x07\x1b[2J rerank"),
        ("rerank_command", "rerank\n--fast"),
    ],
)
def test_validators_refuse(key: str, bad: str) -> None:
    with pytest.raises(InvalidInput, match=f"invalid value for {key}"):
        config.lookup(key).validate(bad)


@pytest.mark.parametrize(
    ("key", "good"),
    [
        ("prime_limit", "5"),
        ("gc_threshold", "0"),
        ("gc_threshold", "1"),
        ("bm25_enabled", "false"),
        ("rerank_fusion", "reorder"),
        ("rerank_command", "python3 rerank.py --fast"),
        ("rerank_command", "python3\trerank.py"),
        ("gc_threshold", ".5"),
        ("gc_threshold", "5e-1"),
        ("gc_threshold", "+0.25"),
    ],
)
def test_validators_accept(key: str, good: str) -> None:
    assert config.lookup(key).validate(good) == good


def test_unknown_key_names_the_fix() -> None:
    with pytest.raises(NotFound, match="cerebro config list"):
        config.lookup("nope")


def test_brain_precedence_default_then_brain(brain) -> None:
    assert brain.config_value("prime_limit") == 20
    brain.config_set("prime_limit", "7")
    assert brain.config_value("prime_limit") == 7
    assert brain.config_get("prime_limit").source == "brain"
    brain.config_reset("prime_limit")
    assert brain.config_get("prime_limit").source == "default"
    brain.config_set("bm25_enabled", "false")
    brain.config_set("gc_threshold", "0.2")
    assert sorted(brain.config_reset(all=True)) == ["bm25_enabled", "gc_threshold"]


def test_readme_documents_every_config_key() -> None:
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("### Configuration") : readme.index("## Claude Code")]
    missing = [key for key in config.REGISTRY if f"`{key}`" not in table]
    assert not missing, f"README's configuration table lacks {missing}"
