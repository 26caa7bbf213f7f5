"""The brain's mean vector that recall centres queries on (ADR 0010): its arithmetic over the first stored vectors,
and the file that keeps it between one-shot processes (ADR 0055).

A long-lived process keeps the mean in memory, re-read at most once a minute after commits (``Handle.brain_mean``).
A one-shot ``cerebro recall "…"`` computed it every time: 256 int8 rows normalised and summed in Python, ~6 ms of a
~225 ms process here (the one-shot path imports no NumPy, ADR 0052). Those rows seldom change once a brain holds more
than 256 memories, so a one-shot process keeps the mean in a small file per brain file under
``CEREBRO_HOME/cache/centering`` with a digest of the rows it came from: it still reads the rows (~3 ms) and digests
them (~0.2 ms), and computes the mean again only when they differ. The file holds the float64 values as computed, so
the mean read back is the same list of floats and recall ranks as it would without the file.
"""

from __future__ import annotations

import os
import sys
from array import array
from operator import add
from typing import TYPE_CHECKING

from cerebro import paths

if TYPE_CHECKING:
    from pathlib import Path

_DIGEST_BYTES = 32
# In every digest: a file written by another layout or arithmetic (another release sharing this CEREBRO_HOME) is not
# this one's. Bump it when either changes.
_FORMAT = b"cerebro-centering-mean/2"
_STALE_TMP_SECONDS = 600  # a half-written file this old was left by a killed process
KEPT_FILES = 64  # files kept in the folder: a write beyond this many removes the least recently written (throwaway
# brains — `eval locomo`'s, tests' — leave theirs behind)


def mean(blobs: list[bytes], kind: str, cache: Path | None = None) -> list[float]:
    """The mean of these stored vectors (``kind``: how they are stored, ``vec.INT8`` or ``vec.FLOAT``), each int8
    one normalised first (the mean of the unit vectors cosine compares). ``cache``: the brain's file of
    :func:`file_for`, read when it holds the mean of these rows, written when it does not."""
    if cache is None:
        return _arithmetic(blobs, kind)
    from cerebro.store.vec import INT8

    digest = sample_digest(kind, blobs)
    kept = load(cache, digest, len(blobs[0]) if kind == INT8 else len(blobs[0]) // 4)
    if kept is not None:
        return kept
    computed = _arithmetic(blobs, kind)
    keep(cache, digest, computed)
    return computed


def file_for(brain: Path) -> Path:
    """The cache file of the brain file at ``brain`` (one a brain, named by a digest of its absolute path)."""
    name = paths.sha256(os.fsencode(os.path.abspath(brain))).hexdigest()[:32]
    return paths.home() / "cache" / "centering" / f"{name}.mean"


def sample_digest(kind: str, blobs: list[bytes]) -> bytes:
    """A digest of the rows a mean is computed from, and of how they are stored."""
    digest = paths.sha256(_FORMAT + kind.encode())
    for blob in blobs:
        digest.update(blob)
    return digest.digest()


def load(file: Path, digest: bytes, dims: int) -> list[float] | None:
    """The mean of ``dims`` values kept for rows of this ``digest``, or None (no file, another sample, a file of
    another length — one cut short by a crash included — or values that are not the ones written: the file ends with a
    digest of the sample's digest and the values)."""
    try:
        data = file.read_bytes()
    except OSError:
        return None
    values, check = data[_DIGEST_BYTES:-_DIGEST_BYTES], data[-_DIGEST_BYTES:]
    if data[:_DIGEST_BYTES] != digest or len(values) != 8 * dims or _check(digest, values) != check:
        return None
    kept = array("d")
    kept.frombytes(values)
    return kept.tolist()


def keep(file: Path, digest: bytes, values: list[float]) -> None:
    """Keep ``values`` as the mean of rows of this ``digest`` (replacing the brain's previous one); best effort: a
    home that cannot be written only costs the arithmetic next time."""
    tmp = file.with_name(f"{file.name}.{os.getpid()}.tmp")
    data = array("d", values).tobytes()
    try:
        paths.ensure_private_dir(file.parent)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), paths.FILE_MODE)
        with os.fdopen(fd, "wb") as out:
            out.write(digest + data + _check(digest, data))
        os.replace(tmp, file)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return
    _prune(file.parent)


def _check(digest: bytes, values: bytes) -> bytes:
    """What a kept file ends with: its values damaged (a disk, a hand, a crash before the data reached the disk) no
    longer match it."""
    return paths.sha256(digest + values).digest()


def _prune(folder: Path) -> None:
    """At most KEPT_FILES means in ``folder``: the least recently written go; so do half-written files a killed process
    left (best effort)."""
    import time

    try:
        entries = [(entry.stat().st_mtime_ns, entry.name, entry.path) for entry in os.scandir(folder)]
    except OSError:
        return
    kept = [(written, path) for written, name, path in entries if name.endswith(".mean")]
    stale = time.time_ns() - _STALE_TMP_SECONDS * 10**9
    left = [(written, path) for written, name, path in entries if name.endswith(".tmp") and written < stale]
    for _, path in [*sorted(kept)[: max(0, len(kept) - KEPT_FILES)], *left]:
        try:
            os.unlink(path)
        except OSError:
            pass


def _arithmetic(blobs: list[bytes], kind: str) -> list[float]:
    """The mean, in NumPy where the process has loaded it already (the local model's, the warm index's): over 256 ×
    384 values ~12 ms of Python on a slow machine, ~1 ms in NumPy; a process without it does not import it for this."""
    from cerebro.store.vec import INT8, from_blob

    if "numpy" in sys.modules:
        return _in_numpy(blobs, kind == INT8)
    count = len(blobs)
    if kind == INT8:
        rows = [array("f", from_blob(blob, INT8)) for blob in blobs]
    else:
        values = array("f", b"".join(blobs))  # float32, little-endian on disk
        if sys.byteorder != "little":
            values.byteswap()
        dims = len(values) // count
        rows = [values[i * dims : (i + 1) * dims] for i in range(count)]
    total = [0.0] * len(rows[0])
    for row in rows:  # row by row, each column in float64: NumPy's sum along the rows, in C-level loops (~3× the
        total = list(map(add, total, row))  # column slices' speed)
    return [column / count for column in total]


def _in_numpy(blobs: list[bytes], int8: bool) -> list[float]:
    """The arithmetic in NumPy: int8 rows normalised in float64 then held as float32, as the list path's
    ``array("f")`` holds them; float32 rows as stored; the columns summed in float64."""
    import numpy as np

    if int8:
        rows = np.frombuffer(b"".join(blobs), dtype=np.int8).reshape(len(blobs), -1).astype(np.float64)
        norms = np.sqrt((rows * rows).sum(axis=1, keepdims=True))
        rows = np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0).astype(np.float32)
    else:
        rows = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), -1)
    values: list[float] = (rows.astype(np.float64).sum(axis=0) / len(blobs)).tolist()
    return values
