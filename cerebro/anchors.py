"""Code anchors: a memory's link to the code it is about, checked when it is read (ADR 0018).

Stored (at write time) under the metadata key ``anchors``, a list of records::

    {"path": "src/auth.py", "lines": [10, 24], "sha256": "…", "commit": "…", "ref": "v1.2"}

``path`` is relative to the project directory (symlinks resolved; never outside it); ``lines`` (optional)
is a 1-based inclusive range; ``sha256`` hashes the whole file's bytes, or — with ``lines`` — those lines
joined by ``\\n`` (line endings dropped, so a CRLF conversion or a newline added at the end of the file do
not change it); ``commit`` is ``git rev-parse HEAD`` when the project is in a git repository; ``ref`` is
the ``--anchor-ref`` given, verbatim. Upstream Go cerebro's single ``anchor`` value (path plus a sha256 of
the file content; a plain path string is read too) is understood as well.

At read time every anchor gets a status — ``verified`` (the hash matches), ``stale`` (the content
changed), ``missing`` (the file is gone, or not a regular file, or now resolves outside the project),
``unknown`` (no project directory is known, or nothing to compare with) — and a memory the worst of its
anchors' (missing > stale > unknown > verified). A line range whose lines no longer hash the same is
searched for elsewhere in the file: an edit above it moves the block, which is then still ``verified``,
reported with ``moved_to``. Nothing is ever stored, changed or deleted at read time.

Read-side cost: only memories with anchors pay, each distinct file is read and hashed once per
:class:`Checker` (one per command), and no subprocess runs (git is asked only when anchors are written).
Stdlib only: this module is on the hook's hot path.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cerebro.errors import InvalidInput, quote

if TYPE_CHECKING:
    from cerebro.values import Node

METADATA_KEY = "anchors"
UPSTREAM_KEY = "anchor"  # upstream Go cerebro: one anchor, {"path", "sha256"}


def _digest(data: bytes | memoryview) -> str:
    """A file's or a block's SHA-256 with hashlib's (OpenSSL's) code, 4–8× the interpreter's builtin on files: a moved
    block's search hashes up to 64 MiB. Imported here, when a file is hashed — not by every hook's start-up."""
    from hashlib import sha256

    return sha256(data).hexdigest()


STATUSES = ("verified", "unknown", "stale", "missing")  # best to worst
_RANK = {status: rank for rank, status in enumerate(STATUSES)}
GIT_TIMEOUT_SECONDS = 5.0
SEARCH_BUDGET_BYTES = 64 * 1024 * 1024  # most bytes hashed looking for a moved block, per anchor
# Compiled on first use (re caches them), not at import: the prime paths import this module; most brains have no
# anchors.
_RANGE = r"^(.*):([0-9-]+)$"
_SHA = r"^[0-9a-f]{64}$"
_COMMIT = r"^[0-9a-f]{40}([0-9a-f]{24})?$"


# ---------------------------------------------------------------------------------------------- writing


def parse_spec(spec: object) -> tuple[str, tuple[int, int] | None]:
    """``PATH[:START-END]`` (or ``PATH:LINE``) → (path, range or None). A range must be whole numbers."""
    if not isinstance(spec, str) or not spec.strip():
        raise InvalidInput("an anchor must be a file path, PATH[:START-END]")
    if "\x00" in spec:
        raise InvalidInput("an anchor must not contain NUL characters")
    match = re.match(_RANGE, spec, re.DOTALL)
    if match is None or not match.group(1):
        return spec, None
    path, text = match.group(1), match.group(2)
    numbers = re.fullmatch(r"([0-9]+)(?:-([0-9]+))?", text)
    if numbers is None:
        raise InvalidInput(f"anchor {quote(spec)}: the line range must be START-END (1-based), got {quote(text)}")
    start = int(numbers.group(1))
    end = int(numbers.group(2)) if numbers.group(2) is not None else start
    if start < 1:
        raise InvalidInput(f"anchor {quote(spec)}: lines are numbered from 1")
    if start > end:
        raise InvalidInput(f"anchor {quote(spec)}: START ({start}) is after END ({end})")
    return path, (start, end)


def check_ref(ref: object) -> str | None:
    """``--anchor-ref``: trimmed; empty is absent; one token of printable characters."""
    if ref is None:
        return None
    if not isinstance(ref, str):
        raise InvalidInput("the anchor ref must be text")
    ref = ref.strip()
    if not ref:
        return None
    if len(ref) > 256 or any(c.isspace() or not c.isprintable() for c in ref):
        raise InvalidInput(f"the anchor ref must be one git ref or commit (no spaces), got {quote(ref)}")
    return ref


def resolve(project: str | os.PathLike[str] | None, specs: Any, ref: object = None) -> list[dict[str, Any]]:  # noqa: ANN401 - validated here: text or a sequence of it, as a caller passed it
    """Check every anchor and build its record; raises InvalidInput (before anything is written) for a
    path that does not exist, is not a regular file, or lies outside the project, and for a bad range."""
    if isinstance(specs, str):
        specs = [specs]
    specs = list(specs or [])
    ref = check_ref(ref)
    if not specs:
        if ref is not None:
            raise InvalidInput("--anchor-ref needs at least one --anchor")
        return []
    if project is None:
        raise InvalidInput("anchors need a project directory: open the brain with Brain.for_project(dir)")
    root = os.path.realpath(os.fspath(project))
    if not os.path.isdir(root):
        raise InvalidInput(f"the project directory {quote(os.fspath(project))} does not exist")
    records = []
    for spec in specs:
        raw, lines = parse_spec(spec)
        real = os.path.realpath(os.path.join(root, os.path.expanduser(raw)))
        if not _inside(real, root):
            raise InvalidInput(f"anchor {quote(raw)} is outside the project {root}")
        try:
            info = os.stat(real)
        except OSError:
            raise InvalidInput(f"anchor {quote(raw)}: no such file in the project {root}") from None
        if stat.S_ISDIR(info.st_mode):
            raise InvalidInput(f"anchor {quote(raw)} is a directory; anchor a file")
        if not stat.S_ISREG(info.st_mode):
            raise InvalidInput(f"anchor {quote(raw)} is not a regular file")
        try:
            data = Path(real).read_bytes()
        except OSError as exc:
            raise InvalidInput(f"anchor {quote(raw)} cannot be read: {exc.strerror}") from None
        record: dict[str, Any] = {"path": Path(os.path.relpath(real, root)).as_posix()}
        if lines is None:
            record["sha256"] = _digest(data)
        else:
            text = data.splitlines()
            if lines[1] > len(text):
                raise InvalidInput(
                    f"anchor {quote(spec)}: line {lines[1]} is beyond the end of the file ({len(text)} lines)"
                )
            record["lines"] = [lines[0], lines[1]]
            record["sha256"] = _block_hash(text[lines[0] - 1 : lines[1]])
        records.append(record)
    commit = head_commit(root)
    for record in records:
        if commit:
            record["commit"] = commit
        if ref:
            record["ref"] = ref
    return records


def head_commit(directory: str) -> str | None:
    """``git rev-parse HEAD`` in ``directory`` (a subprocess with a timeout, never a shell); None when git
    is not installed, the directory is not in a repository, or it has no commit yet."""
    import subprocess

    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
    try:
        done = subprocess.run(  # noqa: S603 - a fixed program with an argument list, no shell
            ["git", "-C", directory, "rev-parse", "--verify", "--quiet", "HEAD"],  # noqa: S607 - git from PATH, as the user runs it
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=GIT_TIMEOUT_SECONDS,
            env=env,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.decode("ascii", "replace").strip()
    return commit if done.returncode == 0 and re.match(_COMMIT, commit) else None


def attach(metadata: dict[str, Any] | None, records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """``metadata`` with the anchors' records under ``anchors`` (refused if it already has that key)."""
    if not records:
        return metadata
    if metadata and METADATA_KEY in metadata:
        raise InvalidInput(f"metadata already has an {quote(METADATA_KEY)} key: give anchors with --anchor only")
    return {**(metadata or {}), METADATA_KEY: records}


# ---------------------------------------------------------------------------------------------- reading


def records_of(metadata: object) -> list[dict[str, Any]]:
    """The anchors a memory's metadata holds (ours and upstream's), as records; malformed entries skipped."""
    if not isinstance(metadata, dict):
        return []
    found: list[dict[str, Any]] = []
    ours = metadata.get(METADATA_KEY)
    for entry in ours if isinstance(ours, list) else []:
        record = _record(entry)
        if record is not None:
            found.append(record)
    upstream = _record(metadata.get(UPSTREAM_KEY)) if UPSTREAM_KEY in metadata else None
    if upstream is not None and upstream not in found:
        found.append(upstream)
    return found


def _record(entry: object) -> dict[str, Any] | None:
    if isinstance(entry, str):
        return {"path": entry} if entry.strip() and "\x00" not in entry else None
    if not isinstance(entry, dict):
        return None
    path = entry.get("path")
    if not isinstance(path, str) or not path.strip() or "\x00" in path:
        return None
    record: dict[str, Any] = {"path": path}
    digest = entry.get("sha256", entry.get("hash"))
    if isinstance(digest, str):
        digest = digest.strip().lower().removeprefix("sha256:")
        if re.match(_SHA, digest):
            record["sha256"] = digest
    lines = entry.get("lines")
    if (
        isinstance(lines, list)
        and len(lines) == 2
        and all(isinstance(n, int) and not isinstance(n, bool) for n in lines)
        and 1 <= lines[0] <= lines[1]
    ):
        record["lines"] = [lines[0], lines[1]]
    for key in ("commit", "ref"):
        if isinstance(entry.get(key), str) and entry[key]:
            record[key] = entry[key]
    return record


def worst(statuses: list[str]) -> str | None:
    return max(statuses, key=lambda s: _RANK.get(s, 1)) if statuses else None


class _File:
    """One file's bytes, read once; its hash and lines computed on demand."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._sha: str | None = None
        self._lines: list[bytes] | None = None

    @property
    def sha(self) -> str:
        if self._sha is None:
            self._sha = _digest(self.data)
        return self._sha

    @property
    def lines(self) -> list[bytes]:
        if self._lines is None:
            self._lines = self.data.splitlines()
        return self._lines


class Checker:
    """Anchor statuses for one command: ``root`` is the project directory (None: unknown). Each file is read
    and hashed at most once per Checker."""

    def __init__(self, root: str | os.PathLike[str] | None) -> None:
        self.root = os.path.realpath(os.fspath(root)) if root is not None else None
        self._files: dict[str, _File | str] = {}  # real path → the file, or "missing" / "unknown"

    def annotate(self, node: Node) -> Node:
        """``node`` with ``anchor_status`` and ``anchors`` filled (the node itself when it has no anchors)."""
        if node.anchor_status is not None:
            return node
        records = records_of(node.metadata)
        if not records:
            return node
        anchors = [self._check(record) for record in records]
        return replace(node, anchor_status=worst([a["status"] for a in anchors]), anchors=anchors)

    def _check(self, record: dict[str, Any]) -> dict[str, Any]:
        shown: dict[str, Any] = {
            "path": record["path"],
            "lines": record.get("lines"),
            "commit": record.get("commit"),
        }
        if "ref" in record:
            shown["ref"] = record["ref"]
        shown["status"] = self._status(record, shown)
        return shown

    def _status(self, record: dict[str, Any], shown: dict[str, Any]) -> str:
        found = self._file(record["path"])
        if isinstance(found, str):
            return found
        digest = record.get("sha256")
        if digest is None:
            return "unknown"  # a bare path (upstream's plain form): it exists, nothing to compare
        lines = record.get("lines")
        if lines is None:
            return "verified" if found.sha == digest else "stale"
        start, end = lines
        text = found.lines
        if end <= len(text) and _block_hash(text[start - 1 : end]) == digest:
            return "verified"
        moved = _find_block(text, end - start + 1, digest, start)
        if moved is None:
            return "stale"
        shown["moved_to"] = [moved, moved + end - start]
        return "verified"

    def _file(self, path: str) -> _File | str:
        if os.path.isabs(path):
            real = os.path.realpath(path)  # upstream may have stored an absolute path
        elif self.root is None:
            return "unknown"
        else:
            real = os.path.realpath(os.path.join(self.root, path))
            if not _inside(real, self.root):
                return "missing"  # it now leads out of the project: never read there
        cached = self._files.get(real)
        if cached is None:
            cached = self._files[real] = _load(real)
        return cached


def _load(real: str) -> _File | str:
    try:
        if not stat.S_ISREG(os.stat(real).st_mode):
            return "missing"  # a directory (or a device, a FIFO) where the file was
    except OSError:
        return "missing"
    try:
        return _File(Path(real).read_bytes())
    except OSError:
        return "unknown"  # there, but unreadable: no verdict


def _inside(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def _block_hash(lines: list[bytes]) -> str:
    return _digest(b"\n".join(lines))


def _find_block(lines: list[bytes], size: int, digest: str, near: int) -> int | None:
    """The 1-based first line of a run of ``size`` lines hashing to ``digest`` (the nearest to ``near``)."""
    if size > len(lines):
        return None
    joined = b"\n".join(lines)
    view = memoryview(joined)
    starts = []
    offset = 0
    for line in lines:
        starts.append(offset)
        offset += len(line) + 1
    best: int | None = None
    spent = 0
    for first in range(len(lines) - size + 1):
        last = first + size - 1
        stop = starts[last] + len(lines[last])
        spent += stop - starts[first]
        if spent > SEARCH_BUDGET_BYTES:
            break
        nearer = best is None or abs(first + 1 - near) < abs(best - near)
        if nearer and _digest(view[starts[first] : stop]) == digest:
            best = first + 1
    return best


# ---------------------------------------------------------------------------------------------- showing


def label(anchor: dict[str, Any]) -> str:
    lines = anchor.get("lines")
    return f"{anchor['path']}:{lines[0]}-{lines[1]}" if lines else anchor["path"]


def marker(node: object) -> str:
    """`` [stale: PATH changed]`` / `` [missing: PATH]`` for a heading line; empty when nothing is wrong."""
    status = getattr(node, "anchor_status", None)
    if status not in ("stale", "missing"):
        return ""
    bad = [a for a in getattr(node, "anchors", None) or [] if a["status"] == status]
    if not bad:
        return ""
    first = label(bad[0]) + (" changed" if status == "stale" else "")
    more = f", +{len(bad) - 1} more" if len(bad) > 1 else ""
    return f" [{status}: {first}{more}]"
