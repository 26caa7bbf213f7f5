"""``cerebro eval``: recall quality of the current brain on the operator's own queries (upstream ADR-011).

Queries are JSON lines ``{"query_id", "query"}``; ground truth is ``{"query_id", "relevant_node_ids":
[…]}``. Ids are validated live against the brain: ids that are not active memories are reported and
skipped, and a query left with none is skipped too. The output is upstream's baseline JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cerebro import clock, scoring
from cerebro.errors import InvalidInput, quote
from cerebro.evals.metrics import CUTOFFS, Tally

if TYPE_CHECKING:
    from cerebro.api import Brain


def _read_jsonl(path: Path, required: tuple[str, ...]) -> list[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise InvalidInput(f"{path} is not UTF-8 text") from None
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{path}:{number}: malformed JSON ({exc.msg})") from None
        except (ValueError, RecursionError):  # a 5,000-digit number, nesting deeper than Python goes
            raise InvalidInput(f"{path}:{number}: JSON cerebro cannot read") from None
        if not isinstance(record, dict) or any(key not in record for key in required):
            raise InvalidInput(f"{path}:{number}: each line needs {', '.join(required)}")
        records.append(record)
    return records


def load(queries_path: Path, truth_path: Path) -> list[tuple[str, str, list[str]]]:
    queries = _read_jsonl(queries_path, ("query_id", "query"))
    truth = _read_jsonl(truth_path, ("query_id", "relevant_node_ids"))
    relevant: dict[str, list[str]] = {}
    for record in truth:
        ids = record["relevant_node_ids"]
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise InvalidInput(f"relevant_node_ids of {quote(record['query_id'])} must be a list of ids")
        relevant[str(record["query_id"])] = ids
    pairs = []
    for record in queries:
        query_id = str(record["query_id"])
        if not isinstance(record["query"], str) or not record["query"].strip():
            raise InvalidInput(f"query {quote(query_id)} has no text")
        if query_id in relevant:
            pairs.append((query_id, record["query"], relevant[query_id]))
    if not pairs:
        raise InvalidInput("no query has ground truth (query_id values do not match)")
    return pairs


def run(
    brain: Brain, pairs: list[tuple[str, str, list[str]]], *, limit: int, threshold: float | None
) -> dict[str, Any]:
    active = {node.id for node in brain.list(status="active", limit=10**9)}
    if threshold is None:  # the brain's own, recorded: a baseline says which threshold its numbers were made with
        threshold = float(brain.config_value("recall_threshold"))
    tally = Tally()
    missing: dict[str, list[str]] = {}
    per_query = []
    for query_id, query, ids in pairs:
        known = {i for i in ids if i in active}
        if len(known) < len(ids):
            missing[query_id] = sorted(set(ids) - known)
        if not known:
            continue
        result = brain.recall(query, limit=limit, threshold=threshold)
        tally.add(result.ids, known)
        per_query.append(
            {"query_id": query_id, "relevant": len(known), "retrieved_relevant": len(known & set(result.ids))}
        )
    if tally.count == 0:
        raise InvalidInput("none of the ground-truth ids are active memories in this brain")
    stats = brain.stats()
    means = tally.means()
    return {
        "generated_at": clock.rfc3339(clock.now()),
        "brain": {
            "schema_version": stats.schema_version,
            "active_nodes": stats.active_nodes,
            "embedding_model": stats.embedding_model,
            "dimensions": stats.embedding_dimensions,
        },
        "scorer_weights": {
            "relevance": scoring.W_RELEVANCE,
            "importance": scoring.W_IMPORTANCE,
            "recency": scoring.W_RECENCY,
            "structural": scoring.W_STRUCTURAL,
        },
        "params": {"limit": limit, "threshold": threshold, "queries": tally.count},
        "metrics": {**{f"recall@{k}": means[f"recall@{k}"] for k in CUTOFFS}, "MRR": means["MRR"]},
        "skipped_ids": missing,
        "per_query": per_query,
    }
