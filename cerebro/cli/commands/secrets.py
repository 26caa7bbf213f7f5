"""secrets scan|redact — find secrets a brain already holds in clear, and replace them (ADR 0027)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from cyclopts import App, Parameter

from cerebro.cli.common import open_brain
from cerebro.cli.output import emit

if TYPE_CHECKING:
    from cerebro.api import Brain
    from cerebro.reports import SecretScan

app = App(
    name="secrets",
    help="""Find secrets stored in clear (before redaction, or with it off) and replace them with markers.

    New memories never need this: every write replaces secrets with [secret:kind] markers unless
    redact_secrets is off or --allow-secret was given.

    Examples
      cerebro secrets scan
      cerebro secrets redact
    """,
)


def _render(scan: SecretScan) -> str:
    if not scan.findings:
        return f"No secrets found in {scan.scanned} records."
    verb = "Redacted" if scan.redacted else "Found"
    noun = "secret" if scan.secrets == 1 else "secrets"
    lines = [f"{verb} {scan.secrets} {noun} in {len(scan.findings)} of {scan.scanned} records:"]
    for f in scan.findings:
        kinds = ", ".join([*f.content_kinds, *(f"{k} (metadata)" for k in f.metadata_kinds)])
        lines.append(f"- {f.id[:8]} [{f.where}] {kinds}")
    if scan.redacted:
        lines.append(f"The backup taken first still holds them: {scan.backup} (delete it when satisfied).")
        if scan.older_backups:
            noun = "backup" if len(scan.older_backups) == 1 else "backups"
            listed = ", ".join(scan.older_backups)
            lines.append(f"{len(scan.older_backups)} older {noun} of this brain may hold them too: {listed}.")
    else:
        lines.append("Replace them with: cerebro secrets redact")
    return "\n".join(lines)


GlobalBrain = Annotated[bool, Parameter(name="--global", help="The global brain (CEREBRO_HOME/global.sqlite) instead")]


def _opened(global_: bool) -> Brain:
    if not global_:
        return open_brain()
    from cerebro.api import Brain
    from cerebro.brain.promotion import global_brain_path

    return Brain.open(global_brain_path())


@app.command(name="scan")
def scan(*, global_: GlobalBrain = False) -> None:
    """List the memories, archived memories, inbox candidates and links holding secrets (ids and kinds, never values).

    Examples
      cerebro secrets scan
      cerebro secrets scan --global
      cerebro secrets scan --format json
    """
    with _opened(global_) as brain:
        found = brain.scan_secrets()
    emit(found.to_dict(), lambda: _render(found), items="findings")


@app.command(name="redact")
def redact(
    *,
    dry_run: Annotated[bool, Parameter(help="Report what would be redacted; change nothing")] = False,
    global_: GlobalBrain = False,
) -> None:
    """Back the brain up, then replace every stored secret with its [secret:kind] marker (one transaction).

    Changed memories are re-indexed and re-embedded, and the old text is overwritten in the file, not only
    unlinked. The backup keeps the secrets: delete it once the brain is as you want it.

    Examples
      cerebro secrets redact --dry-run
      cerebro secrets redact
      cerebro secrets redact --global
    """
    from cerebro.cli.progress import reporter

    update, finish = reporter("embedding")
    with _opened(global_) as brain:
        done = brain.redact_secrets(dry_run=dry_run, progress=update)
    finish()
    emit(done.to_dict(), lambda: _render(done), items="findings")
