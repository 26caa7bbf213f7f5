"""export, backup."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Literal

from cyclopts import Parameter

from cerebro.cli.context import open_brain
from cerebro.cli.output import emit
from cerebro.errors import InvalidInput


def export(
    *,
    format: Annotated[
        Literal["json", "jsonl", "sql", "sqlite"],
        Parameter(
            name=["--format", "-f"], help="json (upstream's bundle), jsonl (sorted, git-friendly), sql or sqlite"
        ),
    ] = "json",
    output: Annotated[
        Path | None, Parameter(name=["--output", "-o"], help="Write here (required for sqlite; default stdout)")
    ] = None,
    force: Annotated[
        bool, Parameter(help="Replace the -o file if it exists (a re-export over the copy a repository tracks)")
    ] = False,
) -> None:
    """Export the brain. On this command --format names the dump format; the command prints no report.

    A file written with -o appears in one step: never half written, even if the export is interrupted.

    Examples
      cerebro export -o brain.json
      cerebro export --format jsonl -o memories.jsonl --force
      cerebro export --format sqlite -o brain-copy.sqlite
    """
    from cerebro import paths

    if format not in ("json", "jsonl", "sql", "sqlite"):
        raise InvalidInput(f"unknown export format {format!r}: use json, jsonl, sql or sqlite")
    if format == "sqlite" and output is None:
        raise InvalidInput("export --format sqlite needs -o FILE")
    if output is not None and not force and os.path.lexists(output):
        raise InvalidInput(f"{output} already exists: choose another path, or --force to replace it")
    with open_brain() as brain:
        if format == "sqlite" and output is not None:
            brain.export_sqlite(output, overwrite=force)
            return
        data = brain.export(format)
    text = (
        json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        if format == "json"
        else "".join(f"{line}\n" for line in data)
    )  # jsonl, sql
    if output is None:
        sys.stdout.write(text)
        return
    with paths.written_in_one_step(output, overwrite=force) as partial:
        partial.write_text(text, encoding="utf-8")


def backup(
    *,
    output: Annotated[
        Path | None, Parameter(name=["--output", "-o"], help="Write the copy here instead of CEREBRO_HOME/backups")
    ] = None,
) -> None:
    """A consistent copy of the brain (safe while agents write).

    Examples
      cerebro backup
      cerebro backup -o brain-backup.sqlite
    """
    with open_brain() as brain:
        target = brain.backup(output)
    emit({"backup": str(target)}, f"Backup written to {target}")


def import_(
    file: Annotated[Path, Parameter(help="A json bundle (cerebro's or upstream's) or a jsonl export")],
    *,
    on_conflict: Annotated[
        Literal["skip", "replace", "newer"],
        Parameter(
            help="skip (keep what the brain has), replace (update in place), or newer (update a memory only with a "
            "later version of it)"
        ),
    ] = "skip",
) -> None:
    """Import memories; the whole file is checked first and written in one transaction.

    Examples
      cerebro import brain.json
      cerebro import memories.jsonl --on-conflict replace
    """
    from cerebro.cli.progress import reporter
    from cerebro.logs import warn

    update, finish = reporter("embedding")
    with open_brain() as brain:
        report = brain.import_file(file, on_conflict=on_conflict, progress=update)
    finish()
    if report["config_refused"]:
        warn(f"not imported (set them yourself if you trust the file): {', '.join(report['config_refused'])}")
    pending = report.get("pending_embeddings") or 0
    emit(
        report,
        f"Imported: {report['nodes_imported']} nodes, {report['edges_imported']} edges "
        f"(skipped {report['nodes_skipped']} nodes, {report['edges_skipped']} edges)"
        + (f"; {pending} awaiting embedding (run `cerebro embed --pending`)" if pending else ""),
    )


def migrate(
    *,
    realpath_hashes: Annotated[bool, Parameter(help="Re-key brains hashed from a path through a symlink")] = False,
    scan_root: Annotated[
        list[Path] | None, Parameter(help="Where to look for projects (repeatable; default $HOME)")
    ] = None,
    max_depth: Annotated[int, Parameter(help="How deep below each root")] = 4,
    dry_run: Annotated[bool, Parameter(help="Report what would change; change nothing")] = False,
) -> None:
    """Migrate brains between layouts (today: --realpath-hashes).

    Examples
      cerebro migrate --realpath-hashes --dry-run
      cerebro migrate --realpath-hashes --scan-root ~/code --max-depth 3
    """
    import os

    from cerebro import realpath_migration
    from cerebro.cli_state import state
    from cerebro.logs import warn

    if not realpath_hashes:
        raise InvalidInput("at least one migration kind flag is required (--realpath-hashes)")
    if max_depth < 0:
        raise InvalidInput(f"--max-depth must be 0 or more, got {max_depth}")
    roots = list(scan_root or [])
    if not roots:
        home = os.environ.get("HOME")
        if home and Path(home).is_dir():
            roots = [Path(home)]
        else:
            warn("no $HOME to scan; scanning the current directory")
            roots = [Path.cwd()]
    say = None if state.quiet else (lambda line: print(line, file=sys.stderr))
    report = realpath_migration.migrate(roots, max_depth=max_depth, dry_run=dry_run, progress=say)
    for error in report.errors:
        warn(error)

    def md() -> str:
        moved = len(report.renamed) + len(report.merged)
        if not moved:
            return (
                f"Nothing to migrate. Scanned {report.scanned} director(ies). "
                "All brains are already keyed by realpath hashes."
            )
        lines = [
            f"Migrated {moved} brain(s){' (dry run)' if dry_run else ''}. Renamed {len(report.renamed)}. "
            f"Merged {len(report.merged)}."
        ]
        lines += [f"  renamed {e['old'][:12]} → {e['new'][:12]} ({e['project']})" for e in report.renamed]
        lines += [f"  merged {e['old'][:12]} → {e['new'][:12]} ({e['project']})" for e in report.merged]
        return "\n".join(lines)

    emit(report.to_dict(), md)


def reembed(
    *,
    provider: Annotated[str | None, Parameter(help="local, ollama or voyage (default: the brain's)")] = None,
    model: Annotated[
        str | None, Parameter(help="Model (default: the brain's own; with --provider, the provider's)")
    ] = None,
    dims: Annotated[
        int | None, Parameter(help="Dimensions (default: the brain's own; with --provider, the provider's)")
    ] = None,
    force: Annotated[
        bool, Parameter(help="Re-embed even when every memory already has a vector from this model")
    ] = False,
) -> None:
    """Switch the brain to another embedding model; an interrupted run resumes where it stopped. On the model the
    brain already uses, nothing is done unless a memory lacks its vector (or --force).

    Examples
      cerebro reembed --provider ollama
      cerebro reembed --provider voyage --model voyage-3.5
      cerebro reembed --model all-MiniLM-L6-v2-onnx-int8-dq7
      cerebro reembed --force
    """
    from cerebro.cli.progress import reporter

    update, finish = reporter("re-embedding")
    with open_brain() as brain:
        report = brain.reembed(provider=provider, model=model, dims=dims, progress=update, force=force)
    finish()
    if report["skipped"]:
        emit(
            report,
            f"Nothing to do: the brain is on {report['model']} ({report['dimensions']} dims) and all "
            f"{report['active']} active memories have its vectors (--force re-embeds them anyway).",
        )
        return
    emit(
        report,
        f"Brain now on {report['model']} ({report['dimensions']} dims): {report['embedded_total']} of "
        f"{report['active']} active memories embedded ({report['embedded_now']} in this run).",
    )
