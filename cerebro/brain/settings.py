"""Settings: the brain's configuration keys and its relation registry."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import cerebro  # cerebro.reports loads on first use: hooks never define the reports (ADR 0036)
from cerebro import clock, config
from cerebro.brain.handle import Handle
from cerebro.errors import InvalidInput, NotFound, quote

if TYPE_CHECKING:
    import cerebro.reports
    from cerebro.db.types import Session


def config_get(h: Handle, key: str) -> cerebro.reports.ConfigEntry:
    spec = config.lookup(key)
    with h.snapshot() as conn:  # the reads of this module are on the raw connection: no ORM import for them
        stored = h.store.reads.meta(conn, config.META_PREFIX + key)
    return _entry(spec, stored, _provider(h, key))


def config_value(h: Handle, key: str) -> Any:  # noqa: ANN401 - the setting's own type (int, float, bool or text)
    """The effective value, parsed to its type (brain value, else the default). Read on the raw
    connection: the hooks ask for settings on their hot path, where the ORM is never imported."""

    config.lookup(key)
    with h.snapshot() as conn:
        return config.effective(key, h.store.reads.config_values(conn).get(key), _provider(h, key))


def config_list(h: Handle) -> list[cerebro.reports.ConfigEntry]:
    with h.snapshot() as conn:
        stored = h.store.reads.config_values(conn)
    return [_entry(spec, stored.get(spec.key), _provider(h, spec.key)) for spec in config.REGISTRY.values()]


def config_set(h: Handle, key: str, value: str) -> cerebro.reports.ConfigChange:
    spec = config.lookup(key)
    if not isinstance(value, str):
        value = str(value).lower() if isinstance(value, bool) else str(value)
    canonical = spec.validate(value)
    default = config.default(key, _provider(h, key))

    def write(session: Session) -> cerebro.reports.ConfigChange:
        previous = h.store.meta.get(session, config.META_PREFIX + key)
        h.store.meta.put(session, config.META_PREFIX + key, canonical)
        return cerebro.reports.ConfigChange(key, canonical, previous if previous is not None else default)

    change = h.write(write)
    if key == "rerank_command" and canonical.strip():  # the user's own command, set here: approve it (ADR 0026)
        from cerebro import trust

        trust.approve(h.trust_key, canonical)
    return change


def config_reset(h: Handle, key: str | None = None, *, all: bool = False) -> list[str]:
    """Drop a brain override (or every one with ``all=True``); returns the keys that were reset."""
    if all and key:  # which was meant? --all reset every key and ignored the one named
        raise InvalidInput("config reset takes a key or --all, not both")
    if all:

        def write_all(session: Session) -> list[str]:
            keys = [k[len(config.META_PREFIX) :] for k in h.store.meta.get_many(session, config.META_PREFIX)]
            h.store.meta.delete_prefix(session, config.META_PREFIX)
            return sorted(keys)

        return h.write(write_all)
    if not key:
        raise InvalidInput("config reset needs a key, or --all")
    config.lookup(key)
    return [key] if h.write(lambda s: h.store.meta.delete(s, config.META_PREFIX + key)) else []


def _provider(h: Handle, key: str) -> str | None:
    """The brain's embedding provider when ``key``'s default depends on it (else None: no read needed)."""
    return h.embedding_settings()[0] if key in config.PROVIDER_DEFAULTS else None


def _entry(spec: config.ConfigKey, stored: str | None, provider: str | None) -> cerebro.reports.ConfigEntry:
    default = config.default(spec.key, provider)
    if stored is None:
        return cerebro.reports.ConfigEntry(spec.key, default, "default", default, spec.description)
    return cerebro.reports.ConfigEntry(spec.key, stored, "brain", default, spec.description)


# ------------------------------------------------------------------ relation registry

MAX_RELATION_CHARS = 100  # a name shown in every edge listing (the MCP tools take subtypes up to 100 too)


def relations(h: Handle) -> list[cerebro.reports.RelationInfo]:
    return h.read(lambda s: [h.store.relations.to_value(r) for r in h.store.relations.list_all(s)])


def add_relation(
    h: Handle, name: str, *, traversal_class: str | None = None
) -> tuple[cerebro.reports.RelationInfo, bool]:
    from cerebro.brain.validate import check_label

    # As `edge` checks the relation it is given: a name it refuses could never be used, and a name or class with a
    # line break or an escape sequence broke `relation list` (or wrote to the terminal).
    name = (check_label(name, "relation name") or "").strip()
    traversal_class = check_label(traversal_class, "relation class")
    if not name:
        raise InvalidInput("relation name must not be empty")
    for what, value in (("relation name", name), ("relation class", traversal_class or "")):
        if len(value) > MAX_RELATION_CHARS:
            raise InvalidInput(f"{what} is longer than {MAX_RELATION_CHARS} characters")

    def write(session: Session) -> tuple[cerebro.reports.RelationInfo, bool]:
        row, created = h.store.relations.add(session, name, traversal_class, clock.now())
        return h.store.relations.to_value(row), created

    return h.write(write)


def remove_relation(h: Handle, name: str) -> None:
    if not h.write(lambda s: h.store.relations.remove(s, name)):
        raise NotFound(f"relation {quote(name)} is not registered — run 'cerebro relation list'")
