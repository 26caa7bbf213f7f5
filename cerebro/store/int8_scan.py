"""Exact products of a query with a brain's int8 vectors, on ONNX Runtime's integer kernels (ADR 0040).

A warm index over int8 storage (ADR 0029) ranked every row by a float32 product: 15 MB read a query at 10,000
memories (~0.55 ms, one core's memory bandwidth) and 154 MB at 100,000 (~10 ms: why ADR 0032 shortlists rows by
their sign bits there, which can miss a rare neighbour). The stored rows are small integers: ONNX Runtime's
MatMulInteger multiplies them as they are, from a copy it packs once for its integer instructions (VNNI, AMX or
AVX2), in 0.15 ms at 10k and 1.4 ms at 100k, and an integer product is exact. So the scan is exact at every size.

The graph is one MatMulInteger node: two uint8 query rows (ONNX Runtime's fast kernels take an unsigned left side)
times the rows as a constant int8 matrix. The rows are the query's positive and negative parts, each within 0…127,
and the product is the first result minus the second: kernels without VNNI (plain AVX2) add pairs of 8-bit products
in 16 bits, and 127 × 127 × 2 cannot saturate there, where a query shifted to 0…255 would. The model is written here
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


def model(rows: Any, extra: Any = None) -> bytes:  # noqa: ANN401 - NumPy int8 matrices (rows × dims)
    """The ONNX model: y[2, n] = MatMulInteger(q[2, dims] uint8, W[dims, n] int8), W = ``rows`` (then ``extra``)
    transposed."""
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
        field(11, value_info("q", UINT8, (2, dims))),
        field(12, value_info("y", INT32, (2, count))),
    ]
    opset = field(1, "") + field(2, 13)
    return b"".join([field(1, 8), field(8, opset), *message(7, graph)])  # ir_version 8, opset 13, the graph


class Int8Scan:
    """The products of one matrix of int8 rows with any int8 query, exact, and the cosines they give."""

    def __init__(self, session: Any, rows: Any) -> None:  # noqa: ANN401 - an onnxruntime session, NumPy rows
        import numpy as np

        self._session, self._count = session, len(rows)  # the session's first rows: the brain's, then probe rows
        norms = np.sqrt(np.einsum("ij,ij->i", rows, rows, dtype=np.int32).astype(np.float64))
        self._inverse_norms = (1.0 / np.clip(norms, 1e-12, None)).astype(np.float32)

    def every_product(self, query: Any) -> Any:  # noqa: ANN401 - NumPy int vectors
        """Each of the session's rows · ``query`` (integers within ±127), as int32 — the probe rows included."""
        import numpy as np

        signed = np.asarray(query, dtype=np.int16)
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
        session = onnxruntime.InferenceSession(
            model(rows, extremes), sess_options=options, providers=["CPUExecutionProvider"]
        )
        scan = Int8Scan(session, rows)
        sample = np.random.default_rng(0).choice(len(rows), size=min(PROBE_ROWS, len(rows)), replace=False)
        probe = np.concatenate([sample, [len(rows), len(rows) + 1]])
        checked = np.concatenate([rows[sample], extremes]).astype(np.int64)
        queries = [np.full(dims, 127), np.full(dims, -127), np.where(np.arange(dims) % 2, 127, -127)]
        queries.append(np.random.default_rng(1).integers(-127, 128, dims))
        for query in queries:
            if not np.array_equal(scan.every_product(query)[probe], checked @ query):
                _not_used("a product differs from NumPy's")
                return None
        return scan
    except Exception as exc:  # noqa: BLE001 - no integer scan: the float32 product serves, as before
        _not_used(" ".join(str(exc).split()) or type(exc).__name__)
        return None


def _not_used(reason: str) -> None:
    from cerebro import logs

    logs.info("int8_scan_not_used", reason=reason)  # a diagnostic: shown under CEREBRO_LOG=info (ADR 0024)
