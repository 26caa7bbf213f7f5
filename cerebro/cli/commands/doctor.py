"""cerebro doctor: every problem with this project's Claude Code + cerebro setup, each with its fix."""

from __future__ import annotations

from typing import Annotated

from cyclopts import Parameter

from cerebro.cli.output import emit

MARKS = {"ok": "✓", "warn": "!", "fail": "✗", "skip": "-"}


def doctor(
    *,
    no_latency: Annotated[
        bool,
        Parameter(name="--no-latency", help="Do not time the hook commands (hook-latency is reported as skipped)"),
    ] = False,
) -> None:
    """Check this project's Claude Code + cerebro setup and print the command that fixes each problem.

    Checks: cli-on-path (cerebro on PATH, this version), hooks (init's hooks or the plugin, current, guarded, not doubled), hook-latency (start-up of the hook commands against Claude Code's budgets, median of 3), brain (exists, integrity, schema, keyword and vector indexes in sync), embedder (the brain's provider embeds a text), file-modes (0600 files, 0700 folders), metrics (last ingest), end-of-session (no overdue work). Writes nothing. Exits 12 when a check fails; warnings alone exit 0.

    Examples
      cerebro doctor
      cerebro doctor --no-latency --format json
    """
    from cerebro import doctor as checks_
    from cerebro import paths
    from cerebro.cli_state import state
    from cerebro.errors import ChecksFailed, InvalidInput

    project = paths.resolve_project_dir(state.project).absolute()
    if not project.is_dir():
        raise InvalidInput(f"project folder {project} does not exist")
    checks = checks_.run_checks(project, latency=not no_latency)
    ok = checks_.passed(checks)
    data = {"ok": ok, "project": str(project), "checks": [c.to_dict() for c in checks]}

    def md() -> str:
        width = max(len(c.name) for c in checks)
        lines = [f"# Cerebro doctor: {project}", ""]
        for check in checks:
            lines.append(f"{MARKS.get(check.status, '?')} {check.name.ljust(width)}  {check.detail}")
            for fix in check.to_dict().get("fixes") or ([check.fix] if check.fix else []):
                lines.append(f"  {' ' * width}  fix: {fix}")
        counts = {s: sum(c.status == s for c in checks) for s in ("fail", "warn")}
        lines.append("")
        if not counts["fail"] and not counts["warn"]:
            lines.append("All checks passed.")
        else:
            lines.append(f"{counts['fail']} failing, {counts['warn']} with warnings.")
        return "\n".join(lines)

    emit(data, md)
    failed = [c.name for c in checks if c.status == "fail"]
    if failed:
        raise ChecksFailed(f"doctor: {len(failed)} check{'s' if len(failed) > 1 else ''} failed ({', '.join(failed)})")
