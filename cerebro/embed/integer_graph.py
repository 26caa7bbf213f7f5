"""The local model's matrix products on the CPU's integer units: its int8 weights times 7-bit activations (ADR 0041).

The shipped model stores each weight matrix as int8 with one float scale per output column, turned into float32 by a
Cast and a Mul in front of every MatMul — ONNX Runtime folds them once and multiplies in float32 (~1 GFLOP a
48-token window, 8 ms on one core at its peak). This rewrite keeps the weights as the integers they are and
quantises each matrix product's input at run time instead:

- each row of the input (a token) is quantised on its own range, ``q = round(x / scale) + zero`` within 0…127;
- ``MatMulIntegerToFloat`` (ONNX Runtime's kernel: MatMulInteger, then the column scales, in one pass) multiplies
  ``q`` by the int8 weights exactly, in int32; the row's zero point times each column's sum is taken off after, and
  the row's scale applied.

Why a scale and a zero point per row: a token's vector then depends on that token only, never on the texts batched
with it (ONNX Runtime's stock dynamic quantisation takes one range for the whole batch), and follows each token's
own range: cosine to the float32 vectors 0.996 on average (0.992 for the stock one). Why 7 bits: values within 0…127
make every product exact on every CPU. Kernels without VNNI (plain AVX2, AVX-512 before Cascade Lake, AMD before Zen
4) add pairs of u8 × s8 products in 16 bits: 255 × 127 × 2 overflows there (0.4 % of a layer's outputs moved, by up
to a third of the row's largest — measured), 127 × 128 × 2 cannot. So two machines give the same integers for the
same text, whichever instructions they have; only the float parts differ in their last bits, as the float32 graph's
do.

The rewrite reads and writes the model's protobuf with ``cerebro.onnx_wire``; every node and tensor it does not
change is copied as it was. It refuses (``MalformedModel``) a model it does not recognise rather than guess.
"""

from __future__ import annotations

import struct
from collections import Counter
from dataclasses import dataclass

from cerebro.onnx_wire import (
    FLOAT,
    INT8,
    INT64,
    UINT8,
    GraphNode,
    Initializer,
    MalformedModel,
    field,
    fields,
    graph_initializer,
    graph_node,
    last,
    text_field,
)

# A row's range spans LEVELS steps; rounding the zero point and the values apart can add one: 0…127 in all, and with
# int8 weights (|w| ≤ 128) a pair of products, 2 × 127 × 128, fits in int16.
LEVELS = 126
PREFIX = "cerebro_q/"  # the names this rewrite adds
# A change to this rewrite bumps cerebro.embed.local.REWRITE_VERSION (in the graph cache's name): it is built afresh,
# not read from an older cache. A change to what the graph computes needs a new model id as well (ADR 0011), not only
# that; float rounding alone (an optimisation level, an onnxruntime version) does not (ADR 0049).
MICROSOFT = "com.microsoft"  # the domain of ONNX Runtime's own operators (MatMulIntegerToFloat)


_CONSTANTS: dict[str, tuple[int, list[int], list[float] | list[int]]] = {  # name → (type, dims, values)
    "zero": (FLOAT, [], [0.0]),
    "one": (FLOAT, [], [1.0]),
    "tiny": (FLOAT, [], [1e-12]),
    "levels": (FLOAT, [], [float(LEVELS)]),
    "flat": (INT64, [1], [-1]),
    "first": (INT64, [1], [0]),
    "last": (INT64, [1], [-1]),
}


def _constant(name: str) -> bytes:
    data_type, dims, values = _CONSTANTS[name]
    raw = struct.pack(f"<{len(values)}{'f' if data_type == FLOAT else 'q'}", *values)
    return graph_initializer(PREFIX + name, data_type, dims, raw)


@dataclass(frozen=True)
class _Weights:
    """One ``MatMul(x, Mul(Cast(int8 W), column scales))`` found in the model."""

    matmul: GraphNode
    cast: GraphNode
    mul: GraphNode
    weights: Initializer
    scales: Initializer


def _find(nodes: list[GraphNode], tensors: dict[str, Initializer], uses: Counter[str]) -> list[_Weights]:
    producer = {name: node for node in nodes for name in node.outputs}
    found = []
    for node in nodes:
        if node.op_type != "MatMul" or node.domain or len(node.inputs) != 2:
            continue
        mul = producer.get(node.inputs[1])
        if mul is None or mul.op_type != "Mul" or mul.domain or uses[mul.outputs[0]] != 1:
            continue
        cast = next((producer[name] for name in mul.inputs if name in producer), None)
        scale_name = next((name for name in mul.inputs if name in tensors), None)
        if cast is None or scale_name is None or cast.op_type != "Cast" or uses[cast.outputs[0]] != 1:
            continue
        weights, scales = tensors.get(cast.inputs[0]), tensors[scale_name]
        if weights is None or weights.data_type != INT8 or len(weights.dims) != 2 or cast.int_attribute("to") != FLOAT:
            continue
        columns = weights.dims[1]
        if scales.data_type != FLOAT or scales.raw_data is None or scales.dims not in ([columns], [1, columns]):
            continue
        found.append(_Weights(node, cast, mul, weights, scales))
    return found


def rewrite(model: bytes | memoryview) -> bytes:
    """The model with every int8-weight MatMul run on integer kernels (see the module's docstring); MalformedModel
    for anything it does not recognise."""
    try:
        return _rewrite(model)
    except MalformedModel:
        raise
    except (TypeError, ValueError, IndexError, KeyError) as exc:  # a field of the wrong type or shape
        raise MalformedModel(f"the model is not an ONNX model this rewrite knows: {exc}") from None


def _rewrite(model: bytes | memoryview) -> bytes:
    top = fields(model)
    graphs = [item for item in top if item.number == 7]
    if len(graphs) != 1:
        raise MalformedModel("an ONNX model has one graph")
    opsets = {}
    for item in top:
        if item.number == 8:
            parts = fields(item.value)
            version = last(parts, 2)
            opsets[text_field(parts, 1)] = version.integer() if version is not None else 0
    if not 13 <= opsets.get("", 0) <= 17:  # QuantizeLinear's axis from 13; Reduce* take axes as inputs from 18
        raise MalformedModel(f"the integer rewrite expects ONNX opset 13 to 17, not {opsets.get('', 0)}")
    graph = fields(graphs[0].value)
    nodes = [GraphNode.read(item) for item in graph if item.number == 1]
    tensors = {t.name: t for t in (Initializer.read(item) for item in graph if item.number == 5)}
    if any(name.startswith(PREFIX) for node in nodes for name in node.outputs) or any(
        name.startswith(PREFIX) for name in tensors
    ):
        raise MalformedModel(f"the model already has names starting with {PREFIX!r}")
    if any(f.number in (6, 11) for node in nodes for a in node.attributes for f in fields(a.value)):
        raise MalformedModel("the integer rewrite does not look inside subgraphs (If, Loop, Scan)")
    uses: Counter[str] = Counter(name for node in nodes for name in node.inputs)
    for item in graph:
        if item.number in (11, 12):  # the graph's inputs (an initializer may be one) and outputs
            uses.update(f.text() for f in fields(item.value) if f.number == 1)
    found = _find(nodes, tensors, uses)
    if not found:
        raise MalformedModel("no MatMul with int8 weights and column scales to rewrite")
    replaced = {id(w.matmul): w for w in found}
    dropped = {id(node) for w in found for node in (w.cast, w.mul)}
    quantised: dict[tuple[str, int], str] = {}  # (input, its width) → the prefix of its quantisation's outputs
    body: list[bytes | memoryview] = []
    for node in nodes:
        if id(node) in dropped:
            continue
        weights = replaced.get(id(node))
        if weights is None:
            body.append(node.raw)
            continue
        x, width = node.inputs[0], weights.weights.dims[0]
        if (x, width) not in quantised:  # the query, key and value products share one quantised input
            quantised[x, width] = f"{PREFIX}{len(quantised)}/"
            body += _quantise(x, width, quantised[x, width])
        body += _product(weights, quantised[x, width], node.outputs[0])
    body += [_constant(name) for name in _CONSTANTS]
    widths = {k[1] for k in quantised}
    body += [graph_initializer(f"{PREFIX}rows_of_{w}", INT64, [2], struct.pack("<2q", -1, w)) for w in widths]
    for weights in {_constants_name(w): w for w in found}.values():
        body += _weight_constants(weights)
    # The scales' 2-D originals go when only the removed Mul nodes read them; the int8 weights stay (read above).
    read_by_removed: Counter[str] = Counter(w.scales.name for w in found)
    unused = {name for name, count in read_by_removed.items() if uses[name] == count}
    kept_graph = [
        item.raw
        for item in graph
        if item.number != 1 and not (item.number == 5 and Initializer.read(item).name in unused)
    ]
    graph_bytes = b"".join([*body, *kept_graph])
    out: list[bytes | memoryview] = [item.raw for item in top if item.number != 7]
    if MICROSOFT not in opsets:
        out.append(field(8, field(1, MICROSOFT) + field(2, 1)))
    out.append(field(7, graph_bytes))
    return b"".join(out)


def _quantise(x: str, width: int, p: str) -> list[bytes]:
    """Nodes that quantise ``x`` (…, width) to ``{p}q`` (rows, width) uint8 within 0…127: each row ``r`` on its own
    range, ``q = round(x / scale_r) + zero_r``, with ``{p}scale`` and ``{p}zero`` (rows, 1) float, and the shape of
    a product's output ``{p}shape``."""
    c = PREFIX
    return [
        graph_node("Reshape", [x, f"{c}rows_of_{width}"], [f"{p}x"]),
        graph_node("ReduceMin", [f"{p}x"], [f"{p}min"], axes=[-1], keepdims=1),
        graph_node("Min", [f"{p}min", f"{c}zero"], [f"{p}low"]),  # the range always holds 0: zero stays exact
        graph_node("ReduceMax", [f"{p}x"], [f"{p}max"], axes=[-1], keepdims=1),
        graph_node("Max", [f"{p}max", f"{c}zero"], [f"{p}high"]),
        graph_node("Sub", [f"{p}high", f"{p}low"], [f"{p}span0"]),
        graph_node("Max", [f"{p}span0", f"{c}tiny"], [f"{p}span"]),  # a row of zeros: any scale, every value 0
        graph_node("Div", [f"{p}span", f"{c}levels"], [f"{p}scale"]),
        graph_node("Div", [f"{p}low", f"{p}scale"], [f"{p}low_steps"]),
        graph_node("Neg", [f"{p}low_steps"], [f"{p}zero0"]),
        graph_node("Round", [f"{p}zero0"], [f"{p}zero"]),
        graph_node("Reshape", [f"{p}scale", f"{c}flat"], [f"{p}row_scales"]),
        graph_node("Reshape", [f"{p}zero", f"{c}flat"], [f"{p}row_zeros0"]),
        graph_node("Cast", [f"{p}row_zeros0"], [f"{p}row_zeros"], to=UINT8),
        graph_node("QuantizeLinear", [f"{p}x", f"{p}row_scales", f"{p}row_zeros"], [f"{p}q"], axis=0),
        graph_node("Shape", [x], [f"{p}x_shape"]),
        graph_node("Slice", [f"{p}x_shape", f"{c}first", f"{c}last"], [f"{p}leading"]),
        graph_node("Concat", [f"{p}leading", f"{c}flat"], [f"{p}shape"], axis=0),
    ]


def _product(weights: _Weights, p: str, y: str) -> list[bytes]:
    """Nodes for ``y = x @ (W × column scales)`` from ``x``'s quantisation ``p``: ``(q @ W) × column scales`` on the
    integer kernel, less each row's zero point times the columns' sums (``{W}/sums``), times the row's scale."""
    constants, out = _constants_name(weights), f"{PREFIX}{y}"
    inputs = [f"{p}q", weights.weights.name, f"{PREFIX}one", f"{constants}/scales"]
    return [
        graph_node("MatMulIntegerToFloat", inputs, [f"{out}/int"], domain=MICROSOFT),
        graph_node("Mul", [f"{p}zero", f"{constants}/sums"], [f"{out}/offset"]),
        graph_node("Sub", [f"{out}/int", f"{out}/offset"], [f"{out}/centred"]),
        graph_node("Mul", [f"{out}/centred", f"{p}scale"], [f"{out}/rows"]),
        graph_node("Reshape", [f"{out}/rows", f"{p}shape"], [y]),
    ]


def _constants_name(weights: _Weights) -> str:
    """The prefix of one weight matrix's constants, with the scales it is read with: a matrix read twice with
    different scales gets both."""
    return f"{PREFIX}{weights.weights.name}*{weights.scales.name}"


def _weight_constants(weights: _Weights) -> list[bytes]:
    """The column scales as the 1-D tensor MatMulIntegerToFloat takes, and each column's sum times its scale."""
    import numpy as np

    rows, columns = weights.weights.dims
    if weights.weights.raw_data is None or len(weights.weights.raw_data) != rows * columns:
        raise MalformedModel(f"weights {weights.weights.name!r} are not stored as raw int8 bytes")
    scales = np.frombuffer(weights.scales.raw_data or b"", dtype="<f4")
    sums = np.frombuffer(weights.weights.raw_data, dtype=np.int8).reshape(rows, columns).sum(axis=0, dtype=np.int64)
    name = _constants_name(weights)
    return [
        graph_initializer(f"{name}/scales", FLOAT, [columns], scales.astype("<f4").tobytes()),
        graph_initializer(f"{name}/sums", FLOAT, [columns], (sums * scales.astype(np.float64)).astype("<f4").tobytes()),
    ]
