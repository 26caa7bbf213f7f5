"""Secrets on the Brain's write paths, and in what a brain already holds (ADR 0027).

:func:`scrub` is called by every write that stores memory text (add, add_many, update, supersede, the inbox,
import) before the text reaches the store, the keyword index or the embedder. :func:`scan` finds secrets
stored before redaction existed (or while it was off); :func:`redact_stored` replaces them, after a backup,
and leaves no copy of the old text in the file's free pages, its keyword index or its write-ahead log.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import cerebro  # cerebro.reports loads on first use: hooks never define the reports (ADR 0036)
from cerebro.brain import embedding
from cerebro.brain.handle import Handle
from cerebro.brain.validate import _check_size, check_metadata_size

if TYPE_CHECKING:
    from pathlib import Path

    import cerebro.reports
    from cerebro.db.types import Session


def policy(h: Handle, allow_secret: bool) -> tuple[bool, int]:
    """What a write does to memory text, from one read of the brain's settings: whether it redacts secrets
    (``redact_secrets``, unless the caller allowed them) and the most bytes of content it takes
    (``max_content_bytes``)."""
    from cerebro import config

    if not isinstance(allow_secret, bool):
        from cerebro.errors import InvalidInput

        raise InvalidInput("allow_secret must be true or false")
    with h.snapshot() as conn:
        stored = h.store.reads.config_values(conn)
    redact = not allow_secret and bool(config.effective("redact_secrets", stored.get("redact_secrets")))
    return redact, int(config.effective("max_content_bytes", stored.get("max_content_bytes")))


def notice(kinds: list[str], *, hint: bool = True) -> str:
    """The warning for secrets redacted on a write: how many of each kind (never their values). ``hint``: name the
    CLI's ``--allow-secret`` (not where the writer has no such choice: a link, an MCP tool, an import)."""
    counts = Counter(kinds)
    listed = ", ".join(f"{kind} ×{n}" if n > 1 else kind for kind, n in sorted(counts.items()))
    noun = "secret" if len(kinds) == 1 else "secrets"
    advice = f"; --allow-secret keeps {'it' if len(kinds) == 1 else 'them'} on purpose" if hint else ""
    return f"redacted {len(kinds)} {noun} before storing ({listed}){advice}"


def without_hint(message: str) -> str:
    """A warning as a writer without ``--allow-secret`` (an MCP client) is told it."""
    return _HINT.sub("", message)


_HINT = re.compile(r"; --allow-secret keeps (?:it|them) on purpose$")


def scrub(
    h: Handle,
    content: str | None,
    metadata: dict[str, Any] | None,
    *,
    redact: bool,
    warn: bool = True,
    hint: bool = True,
) -> tuple[str | None, dict[str, Any] | None, list[str]]:
    """``content`` and ``metadata`` with their secrets replaced by markers (when ``redact``), and the kinds
    replaced; a warning names them, never their values."""
    if not redact:
        return content, metadata, []
    from cerebro import redaction  # compiling its patterns costs ~10 ms: only writes pay it

    kinds: list[str] = []
    if content is not None:
        content, kinds = redaction.redact(content)
    if metadata is not None:
        metadata, more = redaction.redact_json(metadata)
        kinds += more
    if kinds and warn:
        h.on_warning(notice(kinds, hint=hint))
    return content, metadata, kinds


Subtype = TypeVar("Subtype")  # a subtype: a str, None, or the sentinel for "unchanged"
OriginT = TypeVar("OriginT")  # an origin (cerebro.values.Origin), or None


def scrub_labels(subtype: Subtype, origin: OriginT, *, redact: bool) -> tuple[Subtype, OriginT, list[str]]:
    """A memory's labels — its subtype and its origin's fields — with their secrets replaced by markers (when
    ``redact``), and the kinds replaced. Labels are listed, shown and synced in clear: a token pasted as a subtype or
    a session name was stored as given. Anything that is not text (None, an "unchanged" sentinel) is left as it is."""
    if not redact:
        return subtype, origin, []
    from cerebro import redaction

    kinds: list[str] = []

    def clean(value: Any) -> Any:  # noqa: ANN401 - a label, or what stands for none
        if not isinstance(value, str) or not value:
            return value
        text, found = redaction.redact(value)
        kinds.extend(found)
        return text

    fields = ("actor", "channel", "session", "host")
    if origin is not None and any(isinstance(getattr(origin, f, None), str) for f in fields):
        origin = dataclasses.replace(origin, **{f: clean(getattr(origin, f)) for f in fields})  # type: ignore[type-var]
    return clean(subtype), origin, kinds


def for_storage(
    h: Handle,
    content: str,
    metadata: dict[str, Any] | None,
    allow_secret: bool,
    subtype: Any = None,  # noqa: ANN401 - a subtype as scrub_labels takes it
    origin: Any = None,  # noqa: ANN401 - an origin as scrub_labels takes it
) -> tuple[str, dict[str, Any] | None, Any, Any]:
    """A memory's content, metadata and labels as they will be stored: within the size limit, secrets redacted
    unless allowed (one warning for all of them)."""
    redact, limit = policy(h, allow_secret)
    clean, meta, kinds = scrub(
        h, _check_size(content, limit), check_metadata_size(metadata, limit), redact=redact, warn=False
    )
    subtype, origin, more = scrub_labels(subtype, origin, redact=redact)
    if kinds or more:
        h.on_warning(notice(kinds + more))
    return clean if clean is not None else content, meta, subtype, origin


# ------------------------------------------------------------------------------------------ already stored


def _metadata(text: str | None) -> Any:  # noqa: ANN401 - stored JSON, whatever shape a file gave it
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text  # not JSON (written by hand): scanned as text


def findings(rows: list[tuple[str, str, str, str | None]]) -> list[cerebro.reports.SecretFinding]:
    """The records among ``rows`` — (where, id, content, metadata as stored) — that hold secrets (the doctor's
    check reads a copy's rows through this too)."""
    from cerebro import redaction

    found = []
    for where, node_id, content, metadata in rows:
        kinds = [f.kind for f in redaction.find(content)]
        meta_kinds = redaction.redact_json(_metadata(metadata))[1]
        if kinds or meta_kinds:
            found.append(cerebro.reports.SecretFinding(node_id, where, tuple(kinds), tuple(meta_kinds)))
    return found


def scan(h: Handle) -> cerebro.reports.SecretScan:
    """Every stored memory, archived memory and inbox candidate holding a secret (ids and kinds only)."""
    return _scan(h)[0]


def _scan(h: Handle) -> tuple[cerebro.reports.SecretScan, dict[tuple[str, str], tuple[str, str | None]]]:
    with h.snapshot() as conn:
        rows = h.store.texts.all_texts(conn)
    found = cerebro.reports.SecretScan(scanned=len(rows), findings=findings(rows))
    held = {(f.where, f.id) for f in found.findings}
    return found, {(w, i): (c, m) for w, i, c, m in rows if (w, i) in held}


def redact_stored(
    h: Handle, *, dry_run: bool = False, progress: Callable[[int, int], None] | None = None
) -> cerebro.reports.SecretScan:
    """Replace every stored secret by its marker, after a backup: one transaction; changed memories re-indexed
    and re-embedded; the old text overwritten in the file, its keyword index and its write-ahead log. A record
    changed by another writer meanwhile is left as that writer stored it (its write was redacted itself)."""
    found, stored = _scan(h)
    if dry_run or not found.findings:
        return found
    from cerebro import redaction
    from cerebro.brain import exports

    backup = exports.backup(h) if not h.is_team else _export_aside(h)
    changed: dict[tuple[str, str], tuple[str, str | None]] = {}
    for key, (content, metadata) in stored.items():
        parsed = _metadata(metadata)
        changed[key] = (
            redaction.redact(content)[0],
            metadata if parsed is None else _dump(redaction.redact_json(parsed)[0]),
        )
    # Memories whose content changed get a new keyword row and vector; a metadata-only change needs neither.
    memories = {i: c for (w, i), (c, _) in changed.items() if w == "memory" and c != stored[(w, i)][0]}
    vectors: dict[str, Any] = {}
    errors: dict[str, str | None] = {}
    made = h.embedding_settings()[1]  # the model, read before embedding (embedding.embed_for_write)
    for done, (node_id, text) in enumerate(memories.items(), start=1):
        vectors[node_id], errors[node_id] = h.try_embed(text)  # outside the transaction, as every write embeds
        if progress:
            progress(done, len(memories))

    def write(session: Session) -> int:
        has_fts = h.store.keywords.available(session)
        replaced = {
            key
            for key, (content, metadata) in changed.items()
            if h.store.texts.replace(session, *key, content, metadata, was=stored[key])
        }
        for node_id in (i for i in memories if ("memory", i) in replaced):
            row = h.store.nodes.get_row(session, node_id)
            session.refresh(row)
            if has_fts and row.status == "active":
                h.store.keywords.reindex(session, node_id, row.content, row.subtype)
            embedding.store_vector(h, session, row, vectors.get(node_id), errors.get(node_id), made_with=made)
        if has_fts:
            h.store.keywords.optimize(session)
        return len(replaced)

    replaced = h.write(write)
    if replaced < len(changed):
        h.on_warning(f"{len(changed) - replaced} of {len(changed)} records changed while this ran: left as now stored")
    h.rollback()
    try:
        with h.raw_in_use() as conn:
            purged = h.store.texts.compact(conn)
    except Exception as exc:  # the redaction is committed: a busy brain only defers the compaction
        from cerebro.retry import is_lock_error

        if not is_lock_error(exc):
            raise
        h.on_warning("redacted; the old text's free pages were not compacted (the brain was busy): run it again later")
        purged = False
    # Backups taken before (by hand, before an upgrade, by init --force) hold the secrets too: say which.
    # A file's backups may carry a label (pre-init, pre-upgrade); a team project's exports never do, so "alpha"
    # does not take project "alpha-beta"'s for its own.
    label = r"(-[a-z-]+)?" if backup.suffix == ".sqlite" else ""
    mine = re.compile(rf"{re.escape(h.name)}{label}-\d{{8}}T\d{{6}}Z(-\d+)?{re.escape(backup.suffix)}")
    older = sorted(
        (p for p in backup.parent.iterdir() if p != backup and mine.fullmatch(p.name)),
        key=lambda p: p.stat().st_mtime,
    )
    return cerebro.reports.SecretScan(
        found.scanned,
        found.findings,
        redacted=True,
        backup=str(backup),
        log_purged=purged,
        older_backups=tuple(str(p) for p in older),
    )


def _export_aside(h: Handle) -> Path:
    """A team brain has no file to copy: its project's jsonl export, 0600 in the backups folder, is what was there
    before (it failed with "a backup is made from a brain file", so no team brain could be redacted)."""
    from cerebro import clock, paths
    from cerebro.brain import exports

    lines = exports.export(h, "jsonl")
    target = paths.backups_dir() / f"{h.name}-{clock.now().strftime('%Y%m%dT%H%M%SZ')}.jsonl"
    with paths.written_in_one_step(target) as partial:
        partial.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return target


def _dump(value: Any) -> str:  # noqa: ANN401 - JSON-shaped data
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
