"""Two rewrites of the local model's float operators that ONNX Runtime's basic level leaves alone (ADR 0057).

After the integer products (``integer_graph``), a 47-token window still spends ~37 % of its CPU outside them, in some
850 small operators, each a pass over its tensor and a dispatch. Two of their patterns cost more than they need to:

- **GELU** is exported as five element-wise operators, ``x * 0.5 * (1 + erf(x / √2))``, after the Add of the
  dense layer's bias: six passes over a 1,536-wide activation. ONNX Runtime's ``BiasGelu`` (its own domain) does
  the bias and the GELU in one pass, with the same formula; its erf differs from the plain operator's in the last
  bits. Most vectors come out identical, but a last-bit change that moves an activation across a 7-bit step of the
  products' quantisation (ADR 0041) grows through the later layers, as any change of float rounding does.
- **A guard after each Softmax**, ``Where(IsNaN(p), 0, p)``, maps a row of NaNs to zeros. A softmax row is NaN only
  when its input holds an infinity or a NaN. The guard is dropped only where its Softmax reads scores plus a mask
  chosen between finite constants (the model's: 0 and the float's lowest, not -inf), and so on the premise that the
  scores themselves are finite and far from the float's range (they are products of layer-normed activations, a few
  tens at most): a fully masked row is then uniform, not NaN.

The extended level has fusions of its own, but its SkipLayerNormalization costs more than the plain operators here
(ADR 0049) and its GELU fusion does not match this export; so the basic level stays, after these two.

Each pattern is matched strictly — constants by value (initializers a caller cannot feed), every intermediate read
once, graph outputs kept — and anything else is left as it was; a model with subgraphs (If, Loop, Scan), whose
bodies may read any name, is left whole.
"""

from __future__ import annotations

import math
import struct
from collections import Counter

from cerebro.onnx_wire import (
    FLOAT,
    Field,
    GraphNode,
    Initializer,
    MalformedModel,
    field,
    fields,
    graph_node,
    text_field,
)

MICROSOFT = "com.microsoft"


def fuse(model: bytes | memoryview) -> bytes:
    """``model`` with its GELUs fused and its dead Softmax guards removed (see the module's docstring)."""
    top = fields(model)
    graphs = [item for item in top if item.number == 7]
    if len(graphs) != 1:
        raise MalformedModel("an ONNX model has one graph")
    graph = fields(graphs[0].value)
    nodes = [GraphNode.read(item) for item in graph if item.number == 1]
    if any(f.number in (6, 11) for node in nodes for a in node.attributes for f in fields(a.value)):
        return bytes(model)  # a subgraph attribute (AttributeProto.g or .graphs)
    inputs, outputs = (
        {f.text() for item in graph if item.number == n for f in fields(item.value) if f.number == 1} for n in (11, 12)
    )
    tensors = [t for t in (Initializer.read(item) for item in graph if item.number == 5) if t.name not in inputs]
    scalars = {t.name: value for t in tensors if (value := _scalar(t)) is not None}
    biases = {t.name for t in tensors if _is_bias(t)}
    matcher = _Matcher(nodes, scalars, biases, outputs)
    replaced: dict[int, bytes | None] = {}  # id(node) → its new bytes, or None to drop it
    renamed: dict[str, str] = {}  # an input name → the name its readers read instead
    for node in nodes:
        if node.op_type == "Erf" and not node.domain:
            matcher.fuse_gelu(node, replaced)
        elif node.op_type == "IsNaN" and not node.domain:
            matcher.drop_softmax_guard(node, replaced, renamed)
    if not replaced:
        return bytes(model)
    body: list[bytes | memoryview] = []
    for node in nodes:
        new = replaced.get(id(node), node.raw)
        if new is not None:
            body.append(_with_inputs_renamed(new, renamed) if renamed else new)
    body += [item.raw for item in graph if item.number != 1]
    out: list[bytes | memoryview] = [item.raw for item in top if item.number != 7]
    if not any(item.number == 8 and text_field(fields(item.value), 1) == MICROSOFT for item in top):
        out.append(field(8, field(1, MICROSOFT) + field(2, 1)))
    out.append(field(7, b"".join(body)))
    return b"".join(out)


class _Matcher:
    """The graph's names: who computes and who reads each, and the constants the patterns are matched against."""

    def __init__(self, nodes: list[GraphNode], scalars: dict[str, float], biases: set[str], outputs: set[str]) -> None:
        self.scalars, self.biases = scalars, biases
        self.producer = {name: node for node in nodes for name in node.outputs}
        self.readers: dict[str, list[GraphNode]] = {}
        for node in nodes:
            for name in node.inputs:
                self.readers.setdefault(name, []).append(node)
        self.outputs = outputs
        self.uses = Counter({name: len(readers) for name, readers in self.readers.items()})
        self.uses.update(outputs)  # a graph output is read from outside: never an intermediate to drop

    def _only_reader(self, name: str, op: str) -> GraphNode | None:
        readers = self.readers.get(name, [])
        if self.uses[name] != 1 or readers[0].op_type != op or readers[0].domain:
            return None
        return readers[0]

    def _other(self, node: GraphNode, name: str) -> str | None:
        """The other input of a two-input node that reads ``name``."""
        if len(node.inputs) != 2 or name not in node.inputs:
            return None
        return node.inputs[1] if node.inputs[0] == name else node.inputs[0]

    def _is(self, name: str | None, value: float) -> bool:
        return name is not None and math.isclose(self.scalars.get(name, math.nan), value, rel_tol=1e-6)

    def fuse_gelu(self, erf: GraphNode, replaced: dict[int, bytes | None]) -> None:
        """``x * 0.5 * (1 + erf(x / √2))`` (either order of the two products) → ``Gelu(x)``, or ``BiasGelu(h, b)``
        when ``x = h + b`` for a constant vector ``b`` and nothing but the GELU reads ``x``. (BiasGelu takes ``b`` as
        long as ``h``'s last dimension; an ``h`` of last dimension 1 broadcast against ``b`` would fail at the first
        run, loudly — no exported dense layer is shaped so.)"""
        div = self.producer.get(erf.inputs[0]) if erf.inputs else None
        if div is None or div.op_type != "Div" or div.domain or len(div.inputs) != 2 or self.uses[div.outputs[0]] != 1:
            return
        x = div.inputs[0]
        if not self._is(div.inputs[1], math.sqrt(2)):
            return
        add = self._only_reader(erf.outputs[0], "Add")
        if add is None or not self._is(self._other(add, erf.outputs[0]), 1.0):
            return
        first = self._only_reader(add.outputs[0], "Mul")
        second = self._only_reader(first.outputs[0], "Mul") if first is not None else None
        if first is None or second is None:
            return
        factors = {self._other(first, add.outputs[0]), self._other(second, first.outputs[0])}
        half = next((name for name in factors if name != x), None)
        if x not in factors or not self._is(half, 0.5):
            return
        chain = [div, erf, add, first, second]
        bias_add = self.producer.get(x)
        if (
            self.uses[x] == 2  # read by the Div and one product only: the bias's Add can go
            and bias_add is not None
            and bias_add.op_type == "Add"
            and not bias_add.domain
            and len(bias_add.inputs) == 2
            and bias_add.inputs[1] in self.biases
        ):
            fused = graph_node("BiasGelu", bias_add.inputs, second.outputs, MICROSOFT)
            chain.append(bias_add)
        else:
            fused = graph_node("Gelu", [x], second.outputs, MICROSOFT)
        if any(id(node) in replaced for node in chain):
            return
        for node in chain:
            replaced[id(node)] = None
        replaced[id(second)] = fused  # where the last product was: every input is computed by then

    def drop_softmax_guard(self, isnan: GraphNode, replaced: dict[int, bytes | None], renamed: dict[str, str]) -> None:
        """``Where(IsNaN(p), 0, p)`` → ``p`` when ``p = Softmax(scores + mask)`` and the mask is a Where between
        finite constants: with finite scores (the premise, see the module's docstring) no infinity or NaN enters that
        softmax, so none leaves it."""
        if len(isnan.inputs) != 1:
            return
        probabilities = isnan.inputs[0]
        softmax = self.producer.get(probabilities)
        where = self._only_reader(isnan.outputs[0], "Where")
        if softmax is None or softmax.op_type != "Softmax" or softmax.domain or where is None:
            return
        if (
            where.inputs[0] != isnan.outputs[0]
            or where.inputs[2:] != [probabilities]
            or not self._is(where.inputs[1], 0)
        ):
            return
        if where.outputs[0] in self.outputs:
            return  # a graph output: its name must stay
        scores = self.producer.get(softmax.inputs[0]) if softmax.inputs else None
        if (
            scores is None
            or scores.op_type != "Add"
            or scores.domain
            or not any(self._finite_mask(name) for name in scores.inputs)
        ):
            return
        replaced[id(isnan)] = replaced[id(where)] = None
        renamed[where.outputs[0]] = probabilities

    def _finite_mask(self, name: str) -> bool:
        where = self.producer.get(name)
        if where is None or where.op_type != "Where" or where.domain or len(where.inputs) != 3:
            return False
        return all(math.isfinite(self.scalars.get(value, math.inf)) for value in where.inputs[1:])


def _scalar(tensor: Initializer) -> float | None:
    """A float initializer's value when it holds one value (stored raw), else None."""
    if (
        tensor.data_type != FLOAT
        or tensor.raw_data is None
        or len(tensor.raw_data) != 4
        or tensor.dims not in ([], [1])
    ):
        return None  # a value of rank 2 or more would broadcast the result to its rank: not a drop-in constant
    (value,) = struct.unpack("<f", tensor.raw_data)
    return float(value)


def _is_bias(tensor: Initializer) -> bool:
    return tensor.data_type == FLOAT and len(tensor.dims) == 1 and tensor.dims[0] > 1


def _with_inputs_renamed(node: bytes | memoryview, renamed: dict[str, str]) -> bytes:
    """A GraphProto.node field with the inputs in ``renamed`` read under their new names; every other field as it
    was."""
    (item,) = fields(node)
    parts: list[Field] = fields(item.value)
    if not any(part.number == 1 and part.text() in renamed for part in parts):
        return bytes(node)
    body = b"".join(
        field(1, renamed[part.text()]) if part.number == 1 and part.text() in renamed else bytes(part.raw)
        for part in parts
    )
    return field(1, body)
