"""Reading export files back (json bundles — ours or upstream's — and jsonl), validated whole before
anything is written. Every problem is an ``InvalidInput`` naming the record, so a malformed, truncated
or hostile file changes nothing."""

from __future__ import annotations

import json
import math
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cerebro import clock, config
from cerebro import metadata as stored_metadata
from cerebro.errors import InvalidInput, quote
from cerebro.values import NODE_STATUSES, NODE_TYPES

MAX_BYTES = 512 * 1024 * 1024  # a brain export larger than this is not a brain export
_ID = re.compile(r"^[0-9a-f][0-9a-f-]{3,63}$")
# Meta keys a bundle may set: its configuration, never the target's embedding settings or boundaries —
# nor a local-only setting: a received file must not run a program on every recall or turn redaction off
# (ADR 0012, ADR 0027).
_REFUSED_CONFIG = {"config." + key for key in config.LOCAL_ONLY}


@dataclass
class Parsed:
    config: dict[str, str] = field(default_factory=dict)
    refused_config: list[str] = field(default_factory=list)
    nodes: list[dict[str, Any]] = field(default_factory=list)
    edges: list[dict[str, Any]] = field(default_factory=list)
    archive: list[dict[str, Any]] = field(default_factory=list)


ARCHIVE_REASONS = ("decayed", "superseded", "redundant", "capacity")


def _fail(where: str, message: str) -> InvalidInput:
    return InvalidInput(f"{where}: {message}")


def _text(record: dict[str, Any], key: str, where: str, *, required: bool = False) -> str | None:
    value = record.get(key)
    if value is None:
        if required:
            raise _fail(where, f"missing {key}")
        return None
    if not isinstance(value, str):
        raise _fail(where, f"{key} must be text")
    if "\x00" in value:
        raise _fail(where, f"{key} holds a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise _fail(where, f"{key} is not valid UTF-8") from None
    return value


def _number(
    record: dict[str, Any], key: str, where: str, default: float, low: float | None = None, high: float | None = None
) -> float:
    value = record.get(key)
    if value is None:  # absent or null
        value = default
    if isinstance(value, bool) or not isinstance(value, int | float) or not _finite(value):
        raise _fail(where, f"{key} must be a finite number")
    if (low is not None and value < low) or (high is not None and value > high):
        raise _fail(where, f"{key} {value} is out of range")
    return float(value)


def _finite(value: float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an int past float's range
        return False


def _count(record: dict[str, Any], key: str, where: str) -> int:
    value = record.get(key) or 0  # absent or null: 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63:  # SQLite's INTEGER
        raise _fail(where, f"{key} must be a whole number from 0 to 2^63 - 1")
    return value


def _time(record: dict[str, Any], key: str, where: str) -> str | None:
    value = _text(record, key, where)
    if value in (None, ""):
        return None
    try:
        return clock.normalise(value)
    except (ValueError, OverflowError):
        raise _fail(where, f"{key} {quote(value)} is not a timestamp") from None


def _id(record: dict[str, Any], key: str, where: str) -> str:
    value = _text(record, key, where, required=True)
    if not _ID.match(value or ""):
        raise _fail(where, f"{key} {quote(value)} is not a node id")
    return value  # type: ignore[return-value]


def _node(record: object, where: str) -> dict[str, Any]:
    if not isinstance(record, dict):
        raise _fail(where, "a node must be an object")
    node_type = _text(record, "type", where, required=True)
    if node_type not in NODE_TYPES:
        raise _fail(where, f"unknown type {quote(node_type)}")
    status = _text(record, "status", where) or "active"
    if status not in NODE_STATUSES:
        raise _fail(where, f"unknown status {quote(status)}")
    content = _text(record, "content", where, required=True)
    if not content or not content.strip():
        raise _fail(where, "content is empty")
    metadata = record.get("metadata")
    if isinstance(metadata, str) and metadata:
        try:
            metadata = json.loads(metadata)
        except ValueError:
            raise _fail(where, "metadata is not JSON") from None
    if metadata is not None and not isinstance(metadata, dict):
        raise _fail(where, "metadata must be an object")
    _check_metadata(metadata, where)
    from cerebro.values import DECAY_RATES

    return {
        "id": _id(record, "id", where),
        "type": node_type,
        "subtype": _text(record, "subtype", where) or None,
        "content": content,
        "metadata": json.dumps(metadata, ensure_ascii=False) if metadata is not None else None,
        "importance": _number(record, "importance", where, 0.5, 0.0, 1.0),
        "decay_rate": _number(record, "decay_rate", where, DECAY_RATES[node_type], 0.0),  # type checked above
        "access_count": _count(record, "access_count", where),
        "times_reinforced": _count(record, "times_reinforced", where),
        "status": status,
        "created_at": _time(record, "created_at", where) or clock.now_text(),
        "last_accessed": _time(record, "last_accessed", where),
        "last_reinforced": _time(record, "last_reinforced", where),
        "updated_at": _time(record, "updated_at", where),
        "last_surfaced": _time(record, "last_surfaced", where),
        "provenance_root": _flag(record, "provenance_root", where),
        "origin_actor": _text(record, "origin_actor", where),
        "origin_channel": _text(record, "origin_channel", where),
        "origin_session": _text(record, "origin_session", where),
        "origin_host": _text(record, "origin_host", where),
    }


def _flag(record: dict[str, Any], key: str, where: str) -> int:
    """A yes/no field as stored (1 or 0): true, false, 1, 0 or absent — anything else ("yes", 2) is refused rather
    than read as no."""
    value = record.get(key)
    if value is None:
        return 0
    if isinstance(value, bool) or (type(value) is int and value in (0, 1)):
        return int(value)
    raise _fail(where, f"{key} must be true or false, got {quote(value)}")


def _check_metadata(metadata: object, where: str) -> None:
    """The API's rules for metadata (depth, NaN and infinities, UTF-8), on a record's decoded value."""
    if metadata is not None and (wrong := stored_metadata.problem(metadata)) is not None:
        raise _fail(where, wrong)


def _edge(record: object, where: str) -> dict[str, Any]:
    if not isinstance(record, dict):
        raise _fail(where, "an edge must be an object")
    relation = _text(record, "relation", where, required=True)
    if not relation or not relation.strip():
        raise _fail(where, "relation is empty")
    valid_at, invalid_at = _time(record, "valid_at", where), _time(record, "invalid_at", where)
    if valid_at and invalid_at and valid_at > invalid_at:
        raise _fail(where, "valid_at is after invalid_at")
    metadata = record.get("metadata")
    if metadata is not None and not isinstance(metadata, dict | str):
        raise _fail(where, "metadata must be an object")
    if isinstance(metadata, str):
        _text(record, "metadata", where)  # NUL, UTF-8
    # A string (upstream may carry metadata as text) is stored as a JSON object, flagged if it was not one.
    metadata = stored_metadata.load(metadata)
    _check_metadata(metadata, where)
    return {
        "source_id": _id(record, "source_id", where),
        "target_id": _id(record, "target_id", where),
        "relation": relation,
        "weight": _number(record, "weight", where, 1.0, 0.0),
        "metadata": stored_metadata.dumps(metadata),
        "created_at": _time(record, "created_at", where) or clock.now_text(),
        "valid_at": valid_at,
        "invalid_at": invalid_at,
    }


def _archived(record: dict[str, Any], where: str) -> dict[str, Any]:
    reason = _text(record, "archive_reason", where)
    if reason is not None and reason not in ARCHIVE_REASONS:
        raise _fail(where, f"unknown archive_reason {quote(reason)}")
    metadata = record.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise _fail(where, "metadata must be an object")
    _check_metadata(metadata, where)
    node_type = _text(record, "type", where, required=True)
    if node_type not in NODE_TYPES:
        raise _fail(where, f"unknown type {quote(node_type)}")
    status = _text(record, "status", where)
    if status is not None and status not in NODE_STATUSES:
        raise _fail(where, f"unknown status {quote(status)}")
    content = _text(record, "content", where, required=True)
    if not content or not content.strip():
        raise _fail(where, "content is empty")
    return {
        "id": _id(record, "id", where),
        "type": node_type,
        "subtype": _text(record, "subtype", where),
        "content": content,
        "metadata": json.dumps(metadata, ensure_ascii=False) if metadata is not None else None,
        "importance": _number(record, "importance", where, 0.5, 0.0, 1.0),
        "status": status,
        "archive_reason": reason,
        "original_created_at": _time(record, "original_created_at", where),
        "archived_at": _time(record, "archived_at", where),
    }


def _meta(parsed: Parsed, key: object, value: object, where: str) -> None:
    if not isinstance(key, str) or not isinstance(value, str):
        raise _fail(where, "meta keys and values must be text")
    if not key.startswith("config."):
        return  # the target keeps its own version, embedding settings and convention boundaries
    if key in _REFUSED_CONFIG:
        parsed.refused_config.append(key)
        return
    name = key[len("config.") :]
    if name not in config.REGISTRY:  # a setting this cerebro does not know: reported, not stored
        parsed.refused_config.append(key)
        return
    config.REGISTRY[name].validate(value)
    parsed.config[key] = value


def _bundle(path: Path, bundle: dict[str, Any], parsed: Parsed) -> Parsed:
    if not isinstance(bundle.get("nodes"), list):  # an export always has its list, empty or not
        raise InvalidInput(f"{path}: not a cerebro export (no nodes list)")
    if "version" in bundle and str(bundle["version"]) != "1":
        raise InvalidInput(f"{path}: export version {quote(bundle['version'])} is not supported")
    meta = bundle.get("meta") or {}
    if not isinstance(meta, dict):
        raise InvalidInput(f"{path}: meta must be an object")
    for key, value in meta.items():
        _meta(parsed, key, value, f"{path}: meta {quote(key)}")
    parsed.nodes = [_node(n, f"{path}: node {i + 1}") for i, n in enumerate(bundle.get("nodes") or [])]
    edges = bundle.get("edges") or []
    if not isinstance(edges, list):
        raise InvalidInput(f"{path}: edges must be a list")
    parsed.edges = [_edge(e, f"{path}: edge {i + 1}") for i, e in enumerate(edges)]
    return parsed


def read(path: Path) -> Parsed:
    try:
        info = path.stat()
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):  # /dev/zero never ends, a FIFO may never write: an export is a file
        raise InvalidInput(f"{path} is not a regular file: not a brain export")
    if info.st_size > MAX_BYTES:
        raise InvalidInput(f"{path} is larger than {MAX_BYTES} bytes: not a brain export")
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_BYTES + 1)  # a file that grows while read is still bounded
        if len(data) > MAX_BYTES:
            raise InvalidInput(f"{path} is larger than {MAX_BYTES} bytes: not a brain export")
        text = data.decode("utf-8-sig")  # a byte-order mark some editors write is not content
    except UnicodeDecodeError:
        raise InvalidInput(f"{path} is not UTF-8 text") from None
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None
    parsed = Parsed()
    stripped = text.strip()
    if not stripped:
        raise InvalidInput(f"{path} is empty: not a brain export")
    document = None
    if stripped.startswith("{"):
        try:
            document = json.loads(stripped)
        except (ValueError, RecursionError):
            first = stripped.split("\n", 1)[0]
            # One document cut short or malformed — on one line, or laid out over many (its first line is
            # then the bare brace) — rather than records, whose errors are named by line below.
            if first.strip() == "{" or first == stripped:
                raise InvalidInput(f"{path} is not valid JSON (truncated or malformed)") from None
    if isinstance(document, dict) and "kind" not in document:
        # One JSON document: a bundle, however it is laid out (a jsonl file has a "kind" on every line).
        return _bundle(path, document, parsed)
    return parse_lines(text.splitlines(), str(path), parsed)


def parse_lines(lines: list[str], source: str, parsed: Parsed | None = None) -> Parsed:
    """jsonl records (``export --format jsonl``), each validated, named by ``source:line`` when one is not."""
    parsed = parsed if parsed is not None else Parsed()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{source}:{number}"
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            raise InvalidInput(f"{where}: malformed JSON line") from None
        if not isinstance(record, dict):
            raise _fail(where, "each line must be an object")
        kind = record.get("kind")
        if kind == "meta":
            _meta(parsed, record.get("key"), record.get("value"), where)
        elif kind == "node":
            parsed.nodes.append(_node(record, where))
        elif kind == "edge":
            parsed.edges.append(_edge(record, where))
        elif kind == "archive":
            parsed.archive.append(_archived(record, where))
        else:
            raise _fail(where, f"unknown record kind {quote(kind)}")
    return parsed


def check_references(parsed: Parsed, known_ids: set[str]) -> None:
    ids = [n["id"] for n in parsed.nodes]
    if len(ids) != len(set(ids)):
        raise InvalidInput("the file lists a node id twice")
    available = known_ids | set(ids)
    for number, edge in enumerate(parsed.edges, start=1):
        for end in ("source_id", "target_id"):
            if edge[end] not in available:
                raise InvalidInput(
                    f"edge {number} points at {edge[end][:8]}, which is in neither the file nor the brain"
                )
