"""``cerebro doctor``'s brain check for a project whose brain is in a team database (ADR 0030): reachable, at
head, how much it holds, and no secrets in clear (the brain file's checks read the file itself: ``brain.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cerebro.doctor.base import FAIL, OK, WARN, Check, _cmd, _n


def check_team_brain(project: Path, bound: Any) -> Check:  # noqa: ANN401 - a team.Binding
    """A project whose brain is in a team database (ADR 0030): reachable, at head, and how much it holds."""
    from cerebro.api import Brain
    from cerebro.db import migrate, postgres
    from cerebro.errors import CerebroError

    try:
        # The revision read on a plain connection first: opening a brain upgrades it, and doctor writes nothing — a
        # shared database moved ahead would refuse the teammates still on the older cerebro.
        try:
            with postgres.connect(bound.url, bound.project) as conn:
                revision = postgres.revision(conn)
        except Exception:  # noqa: BLE001 - unreachable, refused…: opening it below names the problem as every command does
            revision = migrate.HEAD_REVISION
        if revision != migrate.HEAD_REVISION:
            detail = f"team brain at revision {revision}, this cerebro's is {migrate.HEAD_REVISION}"
            if revision is not None and not migrate.known_revision(revision):
                return Check(
                    "brain", FAIL, f"{detail}: written by a newer cerebro", "pip install -U cerebro-memory", {}
                )
            pending = (
                f"{detail}: an upgrade is pending (the next command that opens it upgrades it, for every teammate)"
            )
            return Check("brain", WARN, pending, None, {"path": postgres.redact(bound.url), "team": True})
        with Brain.open(bound.url, team_project=bound.project) as brain:
            stats = brain.stats()
            where = brain.location
            # Secrets stored in clear (before redaction, or with --allow-secret), as a brain file's check finds them
            holding = [f.id for f in brain.scan_secrets().findings] if brain.config_value("redact_secrets") else []
            with brain.handle.snapshot() as conn:
                odd, first_odd = brain.handle.store.checks.metadata_not_object(conn)
                half_done = brain.handle.store.reads.meta(conn, "reembed.provider") is not None
    except CerebroError as exc:
        return Check("brain", FAIL, f"team brain: {exc}", _cmd(project, "cerebro init --store URL"), {})
    detail = f"team brain {where}: {stats.active_nodes} active memories, schema {stats.revision}"
    extra = {
        "path": where,
        "team": True,
        "secrets_in_clear": len(holding),
        "metadata_not_object": odd,
        "vectors_missing": stats.pending_embeddings,
    }
    # (what is wrong, its fix), worst first: the check shows them all and the first one's fix.
    problems: list[tuple[str, str | None]] = []
    if holding:
        found = f"{_n(len(holding), 'record holds', 'records hold')} secrets in clear (first: {holding[0][:8]})"
        problems.append((found, _cmd(project, "cerebro secrets redact")))
    if half_done:
        problems.append(("a switch of embedding model is half done", _cmd(project, "cerebro reembed")))
    if stats.pending_embeddings:
        pending = f"{_n(stats.pending_embeddings, 'active memory has', 'active memories have')} no vector"
        problems.append((pending, _cmd(project, "cerebro embed --pending")))
    if odd:
        # Written by another tool (cerebro writes objects): read as {"_raw_metadata": …}, so nothing breaks meanwhile.
        problems.append(
            (
                f"{_n(odd, 'memory has', 'memories have')} metadata that is not a JSON object "
                f"(first: {str(first_odd)[:8]})",
                None,
            )
        )
    if problems:
        fixes = [fix for _, fix in problems if fix]
        if fixes:
            extra["fixes"] = fixes
        return Check("brain", WARN, "; ".join([detail, *(p for p, _ in problems)]), problems[0][1], extra)
    return Check("brain", OK, detail, None, extra)
