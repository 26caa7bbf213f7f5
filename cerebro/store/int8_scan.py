"""Exact products of a query with a brain's int8 vectors, on ONNX Runtime's integer kernels (ADR 0040).

A warm index over int8 storage (ADR 0029) ranked every row by a float32 product: 15 MB read a query at 10,000
memories (~0.55 ms, one core's memory bandwidth) and 154 MB at 100,000 (~10 ms: why ADR 0032 shortlists rows by
their sign bits there, which can miss a rare neighbour). The stored rows are small integers: ONNX Runtime's
MatMulInteger multiplies them as they are, from a copy it packs once for its integer instructions (VNNI, AMX or
AVX2), in 0.15 ms at 10k and 1.4 ms at 100k, and an integer product is exact. So the scan is exact at every size.

The graph is one MatMulInteger node: uint8 query rows (ONNX Runtime's fast kernels take an unsigned left side) times
the rows as a constant int8 matrix. With VNNI (or AMX), whose instructions add 8-bit products in 32 bits, it is one
row — the query shifted to 0…255 — and the product is that result less 128 × the row's sum: ~20 % less CPU a scan at
100,000 memories than two rows. Kernels without VNNI (plain AVX2) add pairs of 8-bit products in 16 bits, where
255 × 127 × 2 saturates: there the rows are the query's positive and negative parts, each within 0…127 (127 × 127 × 2
cannot saturate), and the product is the first result minus the second. The one-row form is tried only on a CPU that
says it has VNNI, and either form is used only after the probe below. The model is written here
as ONNX's protobuf bytes (a dozen fields) rather than through the ``onnx`` package, which cerebro does not depend
on. Before it is used, the scan is checked against NumPy on rows and queries of extreme values and a sample of the
brain's rows; it is not used if any product differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cerebro.onnx_wire import INT8, INT32, UINT8, field, message, node, tensor, value_info

SCAN_FROM = 5_000  # rows; below this the float32 product is already ~0.3 ms or less, and a session costs ~1.5 ms a 1k
PROBE_ROWS = 512  # rows of the brain's checked against NumPy when the scan is built (a random sample)
MAX_MODEL_BYTES = 2**31 - 2**20  # protobuf's limit on one message, less room for the rest of the model
# The k nearest are found among the rows whose product clears a bound taken from a strided sample of about this many
# rows' cosines (see Int8Scan.nearest), expected to hold SAMPLE_MARGIN × k rows: cosines and a partition of every row
# cost ~0.35 ms a query at 100k memories, the sample and one comparison of every product ~0.05 ms.
SAMPLE_ROWS = 2048
SAMPLE_MARGIN = 3
_NEVER = -(2**31)  # a removed row's product: below every bound


def model(rows: Any, extra: Any = None, query_rows: int = 2) -> bytes:  # noqa: ANN401 - NumPy int8 matrices
    """The ONNX model: y[m, n] = MatMulInteger(q[m, dims] uint8, W[dims, n] int8), W = ``rows`` (then ``extra``)
    transposed, m = ``query_rows``."""
    import numpy as np

    extra = np.zeros((0, rows.shape[1]), dtype=np.int8) if extra is None else extra
    count, dims = len(rows) + len(extra), rows.shape[1]
    weights = np.empty((dims, count), dtype=np.int8)  # the transpose, written once
    for start in range(0, len(rows), 2048):  # by blocks: one strided copy of it all took 6x longer (cache misses)
        end = min(start + 2048, len(rows))
        weights[:, start:end] = rows[start:end].T
    weights[:, len(rows) :] = extra.T
    graph = [
        field(1, node("MatMulInteger", ["q", "W"], ["y"])),
        field(2, "cerebro_int8_scan"),
        *message(5, tensor("W", INT8, (dims, count), weights.data.cast("B"))),
        field(11, value_info("q", UINT8, (query_rows, dims))),
        field(12, value_info("y", INT32, (query_rows, count))),
    ]
    opset = field(1, "") + field(2, 13)
    return b"".join([field(1, 8), field(8, opset), *message(7, graph)])  # ir_version 8, opset 13, the graph


class Int8Scan:
    """The products of one matrix of int8 rows with any int8 query, exact, and the cosines they give."""

    def __init__(self, session: Any, rows: Any, sums: Any = None) -> None:  # noqa: ANN401 - a session, NumPy rows
        """``sums``: each of the session's rows' sum (int32), for a one-row session (the query shifted by 128)."""
        import numpy as np

        self._session, self._count = session, len(rows)  # the session's first rows: the brain's, then probe rows
        self._shift = None if sums is None else np.multiply(sums, 128, dtype=np.int32)  # 128 × each row's sum
        norms = np.sqrt(np.einsum("ij,ij->i", rows, rows, dtype=np.int32).astype(np.float64))
        self._inverse_norms = (1.0 / np.clip(norms, 1e-12, None)).astype(np.float32)

    def every_product(self, query: Any) -> Any:  # noqa: ANN401 - NumPy int vectors
        """Each of the session's rows · ``query`` (integers within ±127), as int32 — the probe rows included."""
        import numpy as np

        signed = np.asarray(query, dtype=np.int16)
        if self._shift is not None:  # (q + 128) · x − 128 · Σx
            (out,) = self._session.run(["y"], {"q": (signed + 128).astype(np.uint8)[None, :]})
            return np.subtract(out[0], self._shift, out=out[0])
        parts = np.stack([np.maximum(signed, 0), np.maximum(-signed, 0)]).astype(np.uint8)  # each within 0…127
        (out,) = self._session.run(["y"], {"q": parts})
        return np.subtract(out[0], out[1], out=out[0])  # in place: no second array as long as the brain

    def products(self, query: Any) -> Any:  # noqa: ANN401 - NumPy int vectors
        """Each row · ``query`` (integers within ±127), as int32."""
        return self.every_product(query)[: self._count]

    def cosines(self, vector: Any) -> Any:  # noqa: ANN401 - a vector in, NumPy float32 cosines out
        """Each row's cosine to ``vector`` after sqlite-vec's int8 rule (``vec.int8_values``): the cosine the float32
        product of the normalised rows gave, from exact products."""
        products, scale = self._query(vector)
        return self._cosines(products, self._inverse_norms, scale)

    def nearest(self, vector: Any, k: int, removed: Sequence[int] = ()) -> tuple[Any, Any]:  # noqa: ANN401 - NumPy
        """(rows, cosines): row numbers (ascending) holding the ``k`` rows nearest ``vector`` but the ``removed`` ones,
        with every row tied with the k-th (so a choice by cosine, then row, is the one over all rows), and their
        cosines as :meth:`cosines` gives them; or (None, every row's cosine, the removed ones -inf).

        A cosine is the float32 product row · query × the row's inverse norm (``scaled``), × the query's. A value that
        SAMPLE_MARGIN × k rows are expected to reach (one of a strided sample's) is a bar: the rows at or above it are
        the only ones whose cosine can be among the k — if k reach it after all; else every row is scored."""
        import numpy as np

        products, scale = self._query(vector)
        count = len(products)
        if removed:
            products[list(removed)] = _NEVER
        scaled = np.multiply(products, self._inverse_norms, dtype=np.float32, casting="unsafe")  # as _cosines
        stride = count // SAMPLE_ROWS
        place = count // max(stride, 1) - (SAMPLE_MARGIN * k) // max(stride, 1) - 2  # the expected rows, and two more
        if stride > 1 and k > 0 and place >= 0:
            bar = np.partition(scaled[::stride], place)[place]
            if bar > 0:
                # Below the bar by a millionth: a row under it whose cosine rounds to the bar's is in too (a tie).
                rows = np.flatnonzero(scaled >= bar * np.float32(1.0 - 1e-6))
                near = scaled[rows]
                if np.count_nonzero(near >= bar) >= k:
                    near *= scale
                    return rows, near
        scaled *= scale
        if removed:
            scaled[list(removed)] = -np.inf
        return None, scaled

    def _query(self, vector: Any) -> tuple[Any, Any]:  # noqa: ANN401 - NumPy
        """The products of every row with ``vector`` rounded by sqlite-vec's int8 rule, and 1 / its norm (float32)."""
        import numpy as np

        from cerebro.store.vec import int8_values

        query = int8_values(vector)
        norm = max(float(np.linalg.norm(query.astype(np.float64))), 1e-12)
        return self.products(query), np.float32(1.0 / norm)

    @staticmethod
    def _cosines(products: Any, inverse_norms: Any, scale: Any) -> Any:  # noqa: ANN401 - NumPy
        import numpy as np

        # int32 → float32 (exact below 2^24: 1,024 dims × 127²) and × the inverse norms in one pass, as astype then *=
        cosines = np.multiply(products, inverse_norms, dtype=np.float32, casting="unsafe")
        cosines *= scale
        return cosines


def build(rows: Any) -> Int8Scan | None:  # noqa: ANN401 - a NumPy int8 matrix
    """The scan over ``rows``, or None: ONNX Runtime missing or failing, or a product that differs from NumPy's."""
    import numpy as np

    try:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1  # a scan is a few hundred microseconds: a second thread only waits
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # Two rows of extreme values ride along (their products are ignored): with the probe queries below they are
        # where a kernel that adds pairs of 8-bit products in 16 bits would saturate first. A sample of the brain's too.
        dims = rows.shape[1]
        if (len(rows) + 2) * dims >= MAX_MODEL_BYTES:
            _not_used(f"{len(rows)} rows are more than one ONNX model holds")
            return None
        extremes = np.stack([np.full(dims, 127), np.where(np.arange(dims) % 2, -127, 127)]).astype(np.int8)
        sample = np.random.default_rng(0).choice(len(rows), size=min(PROBE_ROWS, len(rows)), replace=False)
        probe = np.concatenate([sample, [len(rows), len(rows) + 1]])
        checked = np.concatenate([rows[sample], extremes]).astype(np.int64)
        queries = [np.full(dims, 127), np.full(dims, -127), np.where(np.arange(dims) % 2, 127, -127)]
        queries.append(np.random.default_rng(1).integers(-127, 128, dims))
        for query_rows in (1, 2) if has_vnni() else (2,):
            session = onnxruntime.InferenceSession(
                model(rows, extremes, query_rows), sess_options=options, providers=["CPUExecutionProvider"]
            )
            sums = None
            if query_rows == 1:
                sums = np.concatenate([rows.sum(axis=1, dtype=np.int32), extremes.sum(axis=1, dtype=np.int32)])
            scan = Int8Scan(session, rows, sums)
            if all(np.array_equal(scan.every_product(query)[probe], checked @ query) for query in queries):
                return scan
        _not_used("a product differs from NumPy's")
        return None
    except Exception as exc:  # noqa: BLE001 - no integer scan: the float32 product serves, as before
        _not_used(" ".join(str(exc).split()) or type(exc).__name__)
        return None


def has_vnni() -> bool:
    """Whether the CPU says it adds 8-bit products in 32 bits (AVX-512 VNNI, AVX-VNNI or AMX); Linux's word only."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            flags = next((line for line in info if line.startswith("flags")), "").split()
    except OSError:
        return False
    return bool({"avx512_vnni", "avx_vnni", "amx_int8"} & set(flags))


def _not_used(reason: str) -> None:
    from cerebro import logs

    logs.info("int8_scan_not_used", reason=reason)  # a diagnostic: shown under CEREBRO_LOG=info (ADR 0024)
