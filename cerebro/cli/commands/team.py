"""team connect|push|pull — share a brain file's memories through the project's team brain (ADR 0031)."""

from __future__ import annotations

from typing import Annotated

from cyclopts import App, Parameter

from cerebro.cli.common import open_brain
from cerebro.cli.context import open_team_brain
from cerebro.cli.output import emit

app = App(
    name="team",
    help="""Share memories with the team brain on PostgreSQL: push the ones marked shared, pull the team's.

    Examples
      cerebro team connect postgresql+psycopg://me@db/team
      cerebro team push
      cerebro team pull
    """,
)


@app.command(name="connect")
def team_connect(
    url: Annotated[str, Parameter(help="The team database: postgresql+psycopg://user@host/db (no password)")],
    *,
    team_project: Annotated[
        str | None, Parameter(help="This project's name in the team database (default: the folder's name)")
    ] = None,
) -> None:
    """Share this project's brain with a team brain: the project's brain there is made (on this brain's model)
    when it does not exist yet. The password comes from PGPASSWORD or ~/.pgpass and is never written.

    Examples
      cerebro team connect postgresql+psycopg://me@db/team --team-project acme-api
    """
    from cerebro import paths, team
    from cerebro.api import Brain
    from cerebro.cli_state import state
    from cerebro.errors import InvalidInput

    project = paths.resolve_project_dir(state.project)
    if not team.is_store_url(url):
        raise InvalidInput(f"team connect takes a PostgreSQL URL (postgresql+psycopg://user@host/db), not {url!r}")
    key = team.check_project_key(team_project or team.default_project_key(project))
    with open_brain() as local:
        provider, model, dims = local.handle.embedding_settings()
    made = Brain.init(url, embed_provider=provider, embed_model=model or None, embed_dims=dims, team_project=key)
    team.connect(project, url, key)
    emit(
        {"team": made.path, "team_project": key, "created": made.created},
        f"{'Created' if made.created else 'Connected to'} the team brain {made.path}",
    )


@app.command(name="push")
def team_push(
    *, all_: Annotated[bool, Parameter(name="--all", help="Every memory, not only those marked shared")] = False
) -> None:
    """Send this brain's shared memories (``add --share``: metadata "shared": true) to the team brain: a later
    version wins, and a second run sends nothing.

    Examples
      cerebro team push
      cerebro team push --all
    """
    with open_brain() as local, open_team_brain("team push") as shared:
        report = local.team_push(shared, everything=all_)
    emit(report.to_dict(), _summary(report))


@app.command(name="pull")
def team_pull() -> None:
    """Bring the team brain's memories into this brain: a later version wins; they are embedded here.

    Examples
      cerebro team pull
    """
    with open_brain() as local, open_team_brain("team pull") as shared:
        report = local.team_pull(shared)
    emit(report.to_dict(), _summary(report))


def _summary(report) -> str:  # noqa: ANN001 - a SyncReport
    return (
        f"{report.direction.capitalize()}: {report.written} of {report.considered} memories written "
        f"({report.unchanged} unchanged), {report.edges} edges, {report.archived} archived"
        + (f", {report.pending_embeddings} awaiting embedding" if report.pending_embeddings else "")
    )
