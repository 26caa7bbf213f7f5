"""One clock for the whole package, and the storage layout of timestamps.

Upstream compares timestamps as *strings* in SQL (edge validity windows, ``updated_at > last_surfaced``),
so every timestamp we write uses its layout ``YYYY-MM-DD HH:MM:SS`` in UTC. Reading accepts that layout
and RFC 3339 (legacy rows and Go exports hold both). Nothing takes its time from SQLite's
``CURRENT_TIMESTAMP``: tests and subprocesses can pin the clock with ``CEREBRO_NOW`` or :func:`set_now`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from datetime import UTC, date, datetime

from cerebro.errors import quote

STORAGE_LAYOUT = "%Y-%m-%d %H:%M:%S"
ENV_NOW = "CEREBRO_NOW"

_override: Callable[[], datetime] | None = None

# Layout, or RFC 3339 with 'T' or ' ' between date and time, optional fraction and zone.
_TIMESTAMP = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?"
    r"\s*(Z|z|[+-]\d{2}:?\d{2}|UTC)?$"
)


def now() -> datetime:
    """The current instant, UTC, to the second (the storage layout has no fraction)."""
    return precise_now().replace(microsecond=0)


def precise_now() -> datetime:
    """The current instant, UTC, with its fraction of a second: for times compared with another tool's (Claude
    Code's turns carry milliseconds)."""
    if _override is not None:
        instant = _override()
    elif env := os.environ.get(ENV_NOW):
        try:
            instant = parse(env)
        except ValueError:
            from cerebro.errors import InvalidInput, quote

            raise InvalidInput(f"{ENV_NOW} {quote(env)} is not a time (RFC 3339: 2026-01-02T03:04:05Z)") from None
    else:
        instant = datetime.now(UTC)
    return instant.astimezone(UTC)


def set_now(source: datetime | Callable[[], datetime] | None) -> None:
    """Pin the clock (tests). ``None`` restores the real clock. A datetime pins it to that instant."""
    global _override  # noqa: PLW0603 - the process-wide setting this module exists to hold
    if source is None or callable(source):
        _override = source
    else:
        fixed = source
        _override = lambda: fixed  # noqa: E731


def now_text() -> str:
    return format_ts(now())


def format_ts(value: datetime) -> str:
    """Format an instant in the storage layout (naive values are taken as UTC)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    v = value.astimezone(UTC)
    # Built by hand: strftime("%Y") does not zero-pad years below 1000 on glibc (Go's zero time is year 1).
    return f"{v.year:04d}-{v.month:02d}-{v.day:02d} {v.hour:02d}:{v.minute:02d}:{v.second:02d}"


def rfc3339(value: datetime) -> str:
    """Format an instant as RFC 3339 UTC with a Z (``2026-12-01T06:43:32Z``): every time in JSON and exports.
    Naive values are taken as UTC; year 1 (Go's zero time) is ``0001-…``, as :func:`format_ts` builds it."""
    return format_ts(value).replace(" ", "T") + "Z"


def parse(text: str) -> datetime:
    """Parse the storage layout, RFC 3339, or a bare ``YYYY-MM-DD`` (midnight UTC) into an aware UTC datetime.

    Raises ValueError with a message a user can act on.
    """
    if isinstance(text, datetime):
        return text if text.tzinfo else text.replace(tzinfo=UTC)
    if isinstance(text, date):
        return datetime(text.year, text.month, text.day, tzinfo=UTC)
    match = _TIMESTAMP.match(str(text).strip())
    if not match:
        raise ValueError(f"invalid timestamp {quote(text)}: use RFC 3339 (2026-03-11T10:00:00Z) or YYYY-MM-DD")
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    micro = int((fraction or "0")[:6].ljust(6, "0"))
    try:
        value = datetime(
            int(year),
            int(month),
            int(day),
            int(hour or 0),
            int(minute or 0),
            int(second or 0),
            micro,
            tzinfo=UTC,
        )
    except ValueError as exc:
        raise ValueError(f"invalid timestamp {quote(text)}: {exc}") from None
    if zone and zone not in ("Z", "z", "UTC"):
        sign = 1 if zone[0] == "+" else -1
        digits = zone[1:].replace(":", "")
        hours, minutes = int(digits[:2]), int(digits[2:])
        if hours > 23 or minutes > 59:  # RFC 3339's time-numoffset: +99:99 is no offset
            raise ValueError(f"invalid timestamp {quote(text)}: the offset {zone} is not a time of day")
        offset_minutes = sign * (hours * 60 + minutes)
        from datetime import timedelta

        try:
            value = value - timedelta(minutes=offset_minutes)
        except OverflowError:
            raise ValueError(f"invalid timestamp {quote(text)}: out of range") from None
    return value


def normalise(text: str | None) -> str | None:
    """Re-write any accepted timestamp text in the storage layout; ``None`` and ``''`` pass through."""
    if text is None or text == "":
        return text
    return format_ts(parse(text))


def rfc3339_optional(text: str | None) -> str | None:
    """Time text in any layout :func:`parse` reads (storage layout, RFC 3339 with an offset or fractions), as
    RFC 3339 UTC; None when absent or unreadable."""
    parsed = parse_optional(text)
    return rfc3339(parsed) if parsed is not None else None


def parse_optional(text: str | None) -> datetime | None:
    if text is None or text == "":
        return None
    try:
        return parse(text)
    except ValueError:
        return None
