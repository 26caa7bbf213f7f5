"""edge, and the relation registry (relation add|list|rm)."""

from __future__ import annotations

from typing import Annotated

from cyclopts import App, Parameter

from cerebro.cli.common import open_brain
from cerebro.cli.output import emit
from cerebro.errors import quote
from cerebro.logs import warn


def edge(
    source: Annotated[str, Parameter(help="Source memory id (or prefix)")],
    target: Annotated[str, Parameter(help="Target memory id (or prefix)")],
    relation: Annotated[str, Parameter(help="e.g. derived_from, supports, contradicts, supersedes")],
    *,
    weight: Annotated[
        float | None, Parameter(help="Edge weight > 0 (default 1.0; kept on re-add unless given)")
    ] = None,
    valid_at: Annotated[str | None, Parameter(help="Valid from (RFC 3339 or YYYY-MM-DD)")] = None,
    invalid_at: Annotated[str | None, Parameter(help="Valid until, exclusive (RFC 3339 or YYYY-MM-DD)")] = None,
) -> None:
    """Link two memories. Re-adding an edge updates its weight and re-asserts its validity window.

    Examples
      cerebro edge 3f2a9c1e 8b7d0a44 supports
      cerebro edge 3f2a9c1e 8b7d0a44 contradicts --valid-at 2025-01-01
    """
    with open_brain() as brain:
        result = brain.add_edge(source, target, relation, weight=weight, valid_at=valid_at, invalid_at=invalid_at)
    if not result.registered:
        warn(f"relation {quote(relation)} is not registered (see 'cerebro relation list'); edge stored anyway")
    from cerebro.cli.render import weight_text

    e = result.edge
    verb = "Added" if result.created else "Updated"
    emit(
        result.to_dict(),
        f"{verb} edge {e.source_id[:8]} -[{e.relation}]-> {e.target_id[:8]} (weight {weight_text(e.weight)})",
    )


relation_app = App(
    name="relation",
    help="""Manage the registry of edge relations (advisory).

    Examples
      cerebro relation list
      cerebro relation add blocks
      cerebro relation rm blocks
    """,
)


@relation_app.command(name="add")
def relation_add(
    name: Annotated[str, Parameter(help="Relation name")],
    *,
    class_: Annotated[str | None, Parameter(name="--class", help="Traversal class, e.g. citation")] = None,
) -> None:
    """Register a relation name.

    Examples
      cerebro relation add blocks
      cerebro relation add cites --class citation
    """
    with open_brain() as brain:
        info, created = brain.add_relation(name, traversal_class=class_)
    if created:
        said = f"Registered: {info.name}"
    elif class_ is not None:  # an existing relation given a class: it takes it
        said = f"Already registered: {info.name} (class now {info.traversal_class})"
    else:
        said = f"Already registered: {info.name}"
    emit(info.to_dict() | {"created": created}, said)


@relation_app.command(name="list")
def relation_list() -> None:
    """List registered relations.

    Examples
      cerebro relation list
      cerebro relation list --format json
    """
    with open_brain() as brain:
        rows = brain.relations()

    def md() -> str:
        return (
            "\n".join(f"- {r.name}" + (f" ({r.traversal_class})" if r.traversal_class else "") for r in rows)
            or "No relations registered."
        )

    emit({"relations": [r.to_dict() for r in rows]}, md, items="relations")


@relation_app.command(name="rm")
def relation_rm(name: Annotated[str, Parameter(help="Relation name")]) -> None:
    """Unregister a relation (existing edges are kept).

    Examples
      cerebro relation rm blocks
    """
    with open_brain() as brain:
        brain.remove_relation(name)
    emit({"removed": name}, f"Removed relation: {name}")
