"""A long-lived server's helpers around one open brain: the embedder that embeds a ``remember`` once, and the
warm vector index kept current in the background (ADR 0020). :class:`cerebro.mcp.host.Slot` holds one of each."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cerebro.db.session import data_version  # raw PRAGMA: no ORM import

if TYPE_CHECKING:
    from cerebro.db.types import Connection
    from cerebro.embed.base import Embedder
    from cerebro.store.warm import WarmVectors

    Written = dict[str, Sequence[float] | None]  # vectors a commit wrote (None: deleted), by memory id


class MemoEmbedder:
    """The brain's embedder, plus one vector held for the next ``embed([text])`` of the same text, so
    ``remember`` embeds its content once for both the near-duplicate search and the write."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self._held: tuple[str, list[float]] | None = None

    def hold(self, text: str, vector: list[float]) -> None:
        self._held = (text, vector)

    def embed(self, texts: list[str]) -> list[list[float]]:
        held, self._held = self._held, None
        if held is not None and len(texts) == 1 and texts[0] == held[0]:
            return [held[1]]
        return self.inner.embed(texts)

    def __getattr__(self, name: str) -> Any:  # noqa: ANN401 - proxies any attribute of whichever provider it wraps
        return getattr(self.inner, name)


class BackgroundWarm:
    """The warm vector index (:class:`cerebro.store.warm.WarmVectors`) for a server, kept current without
    reloading after the server's own writes and rebuilt off the brain thread after other processes' commits.

    - **Own writes** arrive through :meth:`apply` (the brain's ``on_vectors_written``, after each commit):
      the server's ORM shares its read connection (:meth:`Slot._open`), so they leave ``PRAGMA
      data_version`` alone, and the copy takes the new vectors in place — a ``remember`` costs no reload.
    - **Other processes' commits** change ``data_version``: the copy is dropped and rebuilt on a thread of its
      own, on its own connection (tens of ms at 10k memories, seconds at 100k), while recall uses sqlite-vec's
      exact scan (the same answer, a few ms slower). A build is adopted only at the ``data_version`` it started
      at — a foreign commit during the build makes it stale — and with the own writes committed since it
      started applied on top (applying one it already loaded is harmless)."""

    MAX_LOG = 5_000  # own writes remembered for a build under way; beyond, that build is thrown away

    def __init__(self, path: Path) -> None:
        import threading

        self._path = path
        self._lock = threading.Lock()
        self._copy: WarmVectors | None = None
        self._version: int | None = None
        self._building = False
        self._built: tuple[int, int, WarmVectors] | None = None  # (data_version, write sequence at its start, copy)
        self._sequence = 0  # own write batches so far
        self._log: list[tuple[int, Written]] = []  # own writes not yet in a loaded copy
        self._lost_before = 0  # builds started before this sequence missed writes the log dropped
        self.builds = 0

    def ready(self, conn: Connection) -> bool:
        version = data_version(conn)
        if self._copy is not None and self._version == version:
            return True
        with self._lock:
            built, self._built = self._built, None
            if built is not None and built[0] == version and built[1] >= self._lost_before:
                _, started, copy = built
                for sequence, written in self._log:
                    if sequence > started:
                        copy.apply(written)
                self._log = []
                self._version, self._copy = version, copy
                return True
        self._copy = None
        self.start(version)
        return False

    def apply(self, written: Written) -> None:
        """The server's own commit wrote or deleted these vectors."""
        with self._lock:
            self._sequence += 1
            if self._copy is None or self._building:  # a build under way may not have read them
                self._log.append((self._sequence, dict(written)))
                if len(self._log) > self.MAX_LOG:
                    self._log, self._lost_before = [], self._sequence + 1
        if self._copy is not None:
            self._copy.apply(written)

    def start(self, version: int) -> None:
        import threading

        with self._lock:
            if self._building:
                return  # one build at a time; a stale one is replaced at the next ready()
            self._building = True
            started = self._sequence
        threading.Thread(target=self._build, args=(version, started), name="cerebro-warm", daemon=True).start()

    def _build(self, version: int, started: int) -> None:
        from cerebro.db.engine import connect_raw
        from cerebro.db.session import raw_read
        from cerebro.store.warm import WarmVectors

        copy = WarmVectors()
        loaded = False
        try:
            conn = connect_raw(self._path, wal=False, create=False)  # a brain purged meanwhile is not made again
            try:
                with raw_read(conn):
                    loaded = copy.load(conn)
            finally:
                conn.close()
            if loaded:
                copy.prepare_scan()  # here, off the serving thread: a server's load serves many queries (ADR 0040)
        except Exception:  # noqa: BLE001 - recall keeps using sqlite-vec
            loaded = False
        with self._lock:
            self._building = False
            self.builds += 1
            self._built = (version, started, copy) if loaded else None

    # Recall asks these only after ready() said True, on the same (brain) thread: the copy is loaded.

    def _loaded(self) -> WarmVectors:
        if self._copy is None:
            raise RuntimeError("the warm vector index is not loaded: ask ready() first")
        return self._copy

    def __len__(self) -> int:
        copy = self._copy
        return len(copy) if copy is not None else 0

    def knn(self, vector: Sequence[float], k: int) -> list[tuple[str, float]]:
        return self._loaded().knn(vector, k)

    def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        return self._loaded().vectors(ids)

    def gather(self, ids: Sequence[str]) -> Any:  # noqa: ANN401 - a cerebro.store.warm.Gathered
        return self._loaded().gather(ids)

    def pair_dots(self, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], float]:
        return self._loaded().pair_dots(pairs)
