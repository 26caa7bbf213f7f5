"""Settings: the brain's configuration keys and its relation registry."""

from __future__ import annotations

from typing import Any

from cerebro import clock, config, values
from cerebro.brain.handle import Handle
from cerebro.errors import InvalidInput, NotFound, quote


def config_get(h: Handle, key: str) -> values.ConfigEntry:
    spec = config.lookup(key)
    from cerebro.store import meta

    stored = h.read(lambda s: meta.get(s, config.META_PREFIX + key))
    return _entry(spec, stored)


def config_value(h: Handle, key: str) -> Any:
    """The effective value, parsed to its type (brain value, else the default). Read on the raw
    connection: the hooks ask for settings on their hot path, where the ORM is never imported."""
    from cerebro.store import reads

    config.lookup(key)
    with h.snapshot() as conn:
        return config.effective(key, reads.config_values(conn).get(key))


def config_list(h: Handle) -> list[values.ConfigEntry]:
    from cerebro.store import meta

    stored = h.read(lambda s: meta.get_many(s, config.META_PREFIX))
    return [_entry(spec, stored.get(config.META_PREFIX + spec.key)) for spec in config.REGISTRY.values()]


def config_set(h: Handle, key: str, value: str) -> values.ConfigChange:
    spec = config.lookup(key)
    if not isinstance(value, str):
        value = str(value).lower() if isinstance(value, bool) else str(value)
    canonical = spec.validate(value)

    def write(session: Any) -> values.ConfigChange:
        from cerebro.store import meta

        previous = meta.get(session, config.META_PREFIX + key)
        meta.put(session, config.META_PREFIX + key, canonical)
        return values.ConfigChange(key, canonical, previous if previous is not None else spec.default)

    return h.write(write)


def config_reset(h: Handle, key: str | None = None, *, all: bool = False) -> list[str]:
    """Drop a brain override (or every one with ``all=True``); returns the keys that were reset."""
    from cerebro.store import meta

    if all:
        def write_all(session: Any) -> list[str]:
            keys = [k[len(config.META_PREFIX):] for k in meta.get_many(session, config.META_PREFIX)]
            meta.delete_prefix(session, config.META_PREFIX)
            return sorted(keys)

        return h.write(write_all)
    if not key:
        raise InvalidInput("config reset needs a key, or --all")
    config.lookup(key)
    return [key] if h.write(lambda s: meta.delete(s, config.META_PREFIX + key)) else []


def _entry(spec: config.ConfigKey, stored: str | None) -> values.ConfigEntry:
    if stored is None:
        return values.ConfigEntry(spec.key, spec.default, "default", spec.default, spec.description)
    return values.ConfigEntry(spec.key, stored, "brain", spec.default, spec.description)


# ------------------------------------------------------------------ relation registry


def relations(h: Handle) -> list[values.RelationInfo]:
    from cerebro.store import relations

    return h.read(lambda s: [relations.to_value(r) for r in relations.list_all(s)])


def add_relation(h: Handle, name: str, *, traversal_class: str | None = None) -> tuple[values.RelationInfo, bool]:
    from cerebro.store import relations

    name = (name or "").strip()
    if not name:
        raise InvalidInput("relation name must not be empty")

    def write(session: Any) -> tuple[values.RelationInfo, bool]:
        row, created = relations.add(session, name, traversal_class, clock.now())
        return relations.to_value(row), created

    return h.write(write)


def remove_relation(h: Handle, name: str) -> None:
    from cerebro.store import relations

    if not h.write(lambda s: relations.remove(s, name)):
        raise NotFound(f"relation {quote(name)} is not registered — run 'cerebro relation list'")

