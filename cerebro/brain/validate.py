"""Input checks shared by the Brain's methods: every refusal is an InvalidInput naming the fix."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from cerebro import clock
from cerebro.errors import InvalidInput, quote
from cerebro.values import NODE_STATUSES, NODE_TYPES, UNSET  # noqa: F401 - UNSET is re-exported

if TYPE_CHECKING:
    from cerebro.brain.handle import Handle


def _check_type(node_type: str) -> str:
    if node_type not in NODE_TYPES:
        raise InvalidInput(f"unknown type {quote(node_type)}: use one of {', '.join(NODE_TYPES)}")
    return node_type


def _check_status(status: str) -> str:
    if status not in NODE_STATUSES:
        raise InvalidInput(f"unknown status {quote(status)}: use one of {', '.join(NODE_STATUSES)}")
    return status


def _check_importance(importance: object) -> float:
    return _check_unit(importance, "importance")


def _check_text(value: str, what: str) -> str:
    """Text must be valid Unicode (no lone surrogates, as undecodable bytes on a command line become)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"{what} is not valid UTF-8 text") from None
    return value


_CONTROL = r"[\x00-\x1f\x7f-\x9f]"  # Unicode's control characters (category Cc): NUL, line breaks, escapes


def check_label(value: object, what: str) -> str | None:
    """A subtype or a relation: text on one line without control characters (shown in lists and headers, matched
    exactly), valid UTF-8; None as given."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be text")
    _check_text(value, what)
    if re.search(_CONTROL, value):
        raise InvalidInput(f"{what} holds a control character (a NUL, a line break, …): {quote(value)}")
    return value


def checked_origin(origin: Any) -> Any:  # noqa: ANN401 - a values.Origin or None, checked here
    """``origin`` as given (None too), its fields held to a label's rules: a NUL or a line break in one was stored
    in a brain file and failed on a team brain ("text fields cannot contain NUL")."""
    if origin is None:
        return None
    for name in ("actor", "channel", "session", "host"):
        check_label(getattr(origin, name, None), f"origin {name}")
    return origin


def _check_content(content: object) -> str:
    if not isinstance(content, str):
        raise InvalidInput("content must be text")
    _check_text(content, "content")
    if not content.strip():
        raise InvalidInput("content must not be empty")
    if "\x00" in content:
        raise InvalidInput("content must not contain NUL characters")
    return content


def _check_size(content: str, limit: int) -> str:
    """Content within the brain's ``max_content_bytes`` (a memory is a note: store a summary of a large file)."""
    size = len(content.encode("utf-8"))
    if size > limit:
        raise InvalidInput(
            f"content is {size:,} bytes, more than this brain's max_content_bytes ({limit:,}): store a summary, "
            "or raise the limit with `cerebro config set max_content_bytes N`"
        )
    return content


def check_metadata_size(metadata: dict[str, Any] | None, limit: int) -> dict[str, Any] | None:
    """Metadata within the brain's ``max_content_bytes`` too, as JSON: every read that returns the memory carries it
    (a 20 MB value was accepted, then sent with every `list` and `recall`)."""
    if metadata:
        import json

        size = len(json.dumps(metadata, ensure_ascii=False).encode("utf-8"))
        if size > limit:
            raise InvalidInput(
                f"metadata is {size:,} bytes, more than this brain's max_content_bytes ({limit:,}): keep large data "
                "elsewhere and store where it is"
            )
    return metadata


def parse_metadata(metadata: object) -> dict[str, Any] | None:
    """A dict, or a JSON object given as text. Anything else is refused."""
    if metadata is None:
        return None
    import json  # here: ~1.5 ms of import that the read paths (prime, recall) never need

    if isinstance(metadata, str):
        _check_text(metadata, "metadata")
        try:
            metadata = json.loads(metadata)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"malformed metadata JSON: {exc.msg} at position {exc.pos}") from None
        except RecursionError:
            raise InvalidInput("metadata JSON is nested too deeply") from None
        except ValueError as exc:  # a number longer than Python converts (4,300 digits)
            raise InvalidInput(f"metadata JSON holds a value cerebro cannot read: {exc}") from None
    if not isinstance(metadata, dict):
        raise InvalidInput("metadata must be a JSON object")
    from cerebro.metadata import problem

    wrong = problem(metadata)
    if wrong is not None:
        raise InvalidInput(wrong)
    return metadata


BEADS_ID = r"^[a-z][a-z0-9-]{0,31}-[0-9a-z]{3,32}$"  # upstream's pattern (cmd_add_beadsid); re caches it compiled


def _check_beads_id(beads_id: object) -> str | None:
    """A Beads issue id, trimmed; empty after trimming means none (upstream)."""
    if beads_id is None:
        return None
    if not isinstance(beads_id, str):
        raise InvalidInput("the beads id must be text")
    beads_id = beads_id.strip()
    if not beads_id:
        return None
    if not re.fullmatch(BEADS_ID, beads_id):
        raise InvalidInput(
            f"invalid beads id {quote(beads_id)}: expected a Beads issue id such as bd-a1b2 "
            "(lowercase prefix, a dash, 3-32 letters or digits)"
        )
    return beads_id


def _check_query(query: object) -> str:
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("the query must not be empty")
    _check_text(query, "the query")
    if "\x00" in query:
        raise InvalidInput("the query must not contain NUL characters")
    return query


MAX_LIMIT = 10**9  # SQLite's LIMIT is a 64-bit integer (past it: an OverflowError); anything near that is a mistake


def _check_limit(limit: object) -> int:
    if not isinstance(limit, int) or isinstance(limit, bool) or not 0 < limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be a whole number from 1 to {MAX_LIMIT}, got {quote(limit)}")
    return limit


def _check_unit(value: Any, name: str) -> float:  # noqa: ANN401 - validated here: whatever the caller passed
    """A number in [0, 1] (importance, thresholds); the one check of the unit interval outside config."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"{name} must be a number in [0, 1], got {quote(value)}") from None
    if math.isnan(number) or not 0.0 <= number <= 1.0:
        raise InvalidInput(f"{name} must lie in [0, 1], got {quote(value)}")
    return number


def _parse_instant(value: Any) -> Any:  # noqa: ANN401 - validated here: a datetime, RFC 3339 text or None in, a datetime or None out
    if value in (None, ""):
        return None
    try:
        return clock.parse(value)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from None


def metadata_with(
    h: Handle,
    meta_dict: dict[str, Any] | None,
    anchors: Any,  # noqa: ANN401 - validated here: whatever the caller passed
    anchor_ref: Any,  # noqa: ANN401 - validated here: whatever the caller passed
    beads_id: Any,  # noqa: ANN401 - validated here: whatever the caller passed
) -> dict[str, Any] | None:
    """``metadata`` plus the Beads id and the anchors' records (files read, git asked: before any write)."""
    from cerebro import anchors as anchoring

    beads = _check_beads_id(beads_id)
    if beads is not None:
        meta_dict = {**(meta_dict or {}), "beadsId": beads}
    return anchoring.attach(meta_dict, anchoring.resolve(h.project, anchors, anchor_ref))
