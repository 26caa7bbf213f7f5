"""The float fusions applied to the local model after its integer rewrite (ADR 0057), on small models built here and
on the shipped model: a fused GELU computes the GELU, a dropped Softmax guard could never have fired, and a pattern
that differs in any way (another constant, an intermediate read elsewhere, an infinite mask) is left as it was."""

from __future__ import annotations

import math
import struct
from collections import Counter

import numpy as np
import onnxruntime
import pytest

from cerebro import onnx_wire
from cerebro.embed import local
from cerebro.embed.graph_fusions import fuse
from cerebro.embed.integer_graph import rewrite
from cerebro.onnx_wire import FLOAT, GraphNode, Initializer, field, fields, graph_initializer, graph_node, value_info

BOOL = 9
WIDTH = 8


def _scalar(name: str, value: float) -> bytes:
    return graph_initializer(name, FLOAT, [], struct.pack("<f", value))


def _model(body: list[bytes], inputs: list[tuple[str, int, tuple[int, ...]]], outputs: list[str]) -> bytes:
    graph = b"".join(body) + field(2, "g") + b"".join(field(11, value_info(*spec)) for spec in inputs)
    graph += b"".join(field(12, field(1, name) + field(2, field(1, field(1, FLOAT)))) for name in outputs)
    return field(1, 8) + field(8, field(1, "") + field(2, 17)) + field(7, graph)


def _gelu_model(
    *,
    sqrt2: float = math.sqrt(2),
    half: float = 0.5,
    half_first: bool = True,
    extra_outputs: tuple[str, ...] = (),
    scalar_bias: list[int] | None = None,
    plus: float = 1.0,
    times: str = "h",
    half_dims: list[int] | None = None,
    constants_fed: bool = False,
    plus_domain: str = "",
) -> bytes:
    """y = GELU(x + b), exported as the model exports it: h / √2 → Erf → + 1 → × 0.5 → × h (or × h, then × 0.5)."""
    bias = np.linspace(-1, 1, WIDTH, dtype=np.float32)
    if scalar_bias is not None:  # one value, as a scalar ([]) or a vector of one ([1]): broadcast, not a bias vector
        body = [graph_initializer("b", FLOAT, scalar_bias, struct.pack("<f", 0.25))]
    else:
        body = [graph_initializer("b", FLOAT, [WIDTH], bias.tobytes())]
    body += [_scalar("sqrt2", sqrt2), _scalar("one", plus)]
    body += [graph_initializer("half", FLOAT, half_dims or [], struct.pack("<f", half))]  # one value, of any rank
    body += [graph_node("Add", ["x", "b"], ["h"]), graph_node("Div", ["h", "sqrt2"], ["scaled"])]
    body += [graph_node("Erf", ["scaled"], ["erf"]), graph_node("Add", ["erf", "one"], ["erf1"], plus_domain)]
    if half_first:
        body += [graph_node("Mul", ["half", "erf1"], ["halved"]), graph_node("Mul", [times, "halved"], ["y"])]
    else:
        body += [graph_node("Mul", [times, "erf1"], ["halved"]), graph_node("Mul", ["halved", "half"], ["y"])]
    inputs = [("x", FLOAT, (2, 5, WIDTH)), ("other", FLOAT, (2, 5, WIDTH))]
    inputs += [("half", FLOAT, ())] if constants_fed else []  # an initializer a caller may feed: not a constant
    return _model(body, inputs, ["y", *extra_outputs])


def _guard_model(
    lowest: float = float(np.finfo(np.float32).min),
    extra_outputs: tuple[str, ...] = (),
    *,
    guard: tuple[str, str, str] = ("nan", "zero", "p"),
    scores: str = "Add",
    softmax: str = "Softmax",
) -> bytes:
    """y = 2 × Where(IsNaN(p), 0, p) for p = Softmax(s + mask), mask = Where(keep, 0, lowest): the attention's shape."""
    body = [_scalar("zero", 0.0), _scalar("lowest", lowest), _scalar("two", 2.0), _scalar("half", 0.5)]
    body += [graph_node("Where", ["keep", "zero", "lowest"], ["mask"]), graph_node(scores, ["s", "mask"], ["scores"])]
    body += [graph_node(softmax, ["scores"], ["p"], axis=-1), graph_node("IsNaN", ["p"], ["nan"])]
    body += [graph_node("Where", list(guard), ["guarded"]), graph_node("Mul", ["guarded", "two"], ["y"])]
    return _model(body, [("s", FLOAT, (2, 3, 4)), ("keep", BOOL, (2, 1, 4))], ["y", *extra_outputs])


def _in_order(model: bytes) -> bool:
    """Whether every node reads only names computed before it (or given: inputs, initializers), as ONNX asks."""
    (graph,) = [item for item in fields(model) if item.number == 7]
    parts = fields(graph.value)
    known = {f.text() for item in parts if item.number == 11 for f in fields(item.value) if f.number == 1}
    known |= {Initializer.read(item).name for item in parts if item.number == 5} | {""}
    for item in parts:
        if item.number == 1:
            node = GraphNode.read(item)
            if not set(node.inputs) <= known:
                return False
            known.update(node.outputs)
    return True


def _ops(model: bytes) -> Counter[str]:
    (graph,) = [item for item in fields(model) if item.number == 7]
    return Counter(GraphNode.read(item).op_type for item in fields(graph.value) if item.number == 1)


def _run(model: bytes, feeds: dict[str, np.ndarray], outputs: list[str] | None = None) -> list[np.ndarray]:
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
    session = onnxruntime.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])
    return session.run(outputs, feeds)


def _x() -> np.ndarray:
    return np.random.default_rng(3).normal(0, 2, size=(2, 5, WIDTH)).astype(np.float32)


def _gelu(h: np.ndarray) -> np.ndarray:
    return 0.5 * h * (1 + np.vectorize(math.erf)(h / math.sqrt(2)))


@pytest.mark.parametrize("half_first", [True, False])
def test_a_gelu_after_a_bias_becomes_one_bias_gelu_with_the_same_values(half_first: bool) -> None:
    model = _gelu_model(half_first=half_first)
    fused = fuse(model)
    assert _ops(fused) == Counter({"BiasGelu": 1})  # the bias's Add and the five GELU operators, in one
    assert _in_order(fused)  # where the last product was: after everything it reads
    x = _x()
    (expected,) = _run(model, {"x": x, "other": x})
    (got,) = _run(fused, {"x": x, "other": x})
    bias = np.linspace(-1, 1, WIDTH, dtype=np.float32)
    assert np.allclose(got, _gelu(x + bias), atol=1e-5)
    assert np.abs(got - expected).max() <= 1e-5


@pytest.mark.parametrize(
    ("model", "outputs"),
    [
        (_gelu_model(extra_outputs=("h",)), ["y", "h"]),
        (_gelu_model(scalar_bias=[]), ["y"]),
        (_gelu_model(scalar_bias=[1]), ["y"]),
    ],
    ids=["input-read-elsewhere", "scalar-added", "one-value-vector-added"],
)
def test_a_gelu_whose_input_is_not_a_bias_add_of_its_own_keeps_the_add(model: bytes, outputs: list[str]) -> None:
    fused = fuse(model)
    assert _ops(fused) == Counter({"Add": 1, "Gelu": 1})
    x = _x()
    expected = _run(model, {"x": x, "other": x}, outputs)
    got = _run(fused, {"x": x, "other": x}, outputs)
    assert all(np.abs(g - e).max() <= 1e-5 for g, e in zip(got, expected, strict=True))


@pytest.mark.parametrize(
    "model",
    [
        _gelu_model(half=0.4),  # not a GELU
        _gelu_model(sqrt2=1.5),
        _gelu_model(extra_outputs=("erf",)),  # an intermediate the graph gives out
        _gelu_model(extra_outputs=("halved",)),
        _gelu_model(extra_outputs=("scaled",)),
        _gelu_model(plus=2.0),
        _gelu_model(times="other"),  # the erf of one tensor times another
        _gelu_model(half_dims=[1, 1]),  # a half of rank 2 would broadcast y to rank 4: not a drop-in constant
        _gelu_model(constants_fed=True),
        _gelu_model(plus_domain="com.example"),  # another domain's Add: not ONNX's
        _guard_model(extra_outputs=("guarded",)),  # a guard the graph gives out keeps its name
        _guard_model(guard=("nan", "p", "zero")),  # not the guard: zeros where p is a number
        _guard_model(guard=("nan", "half", "p")),
        _guard_model(guard=("nan", "zero", "s")),  # the scores, not the softmax, where p is a number
        _guard_model(scores="Sub"),  # scores minus the mask: not the attention's shape
        _guard_model(softmax="LogSoftmax"),
    ],
    ids=[
        "another-half",
        "another-root",
        "erf-read-elsewhere",
        "product-read-elsewhere",
        "quotient-read-elsewhere",
        "plus-two",
        "times-another-tensor",
        "half-of-rank-two",
        "constant-a-caller-feeds",
        "another-domains-add",
        "guard-given-out",
        "guard-swapped",
        "guard-to-a-half",
        "guard-passing-the-scores",
        "scores-minus-mask",
        "not-a-softmax",
    ],
)
def test_a_pattern_that_differs_in_any_way_is_left_as_it_was(model: bytes) -> None:
    assert fuse(model) == model


def test_a_softmax_guard_behind_a_finite_mask_is_dropped_and_its_readers_read_the_softmax() -> None:
    model = _guard_model()
    fused = fuse(model)
    assert _ops(model) - _ops(fused) == Counter({"IsNaN": 1, "Where": 1})  # the mask's Where stays
    s = np.random.default_rng(4).normal(0, 3, size=(2, 3, 4)).astype(np.float32)
    keep = np.ones((2, 1, 4), dtype=bool)
    keep[0, 0, 1:] = keep[1, 0, :] = False  # a row with one key, a row with none: the softmax is uniform, not NaN
    (expected,) = _run(model, {"s": s, "keep": keep})
    (got,) = _run(fused, {"s": s, "keep": keep})
    assert np.array_equal(got, expected) and not np.isnan(got).any()


def test_a_softmax_guard_behind_an_infinite_mask_stays() -> None:
    """Masking every key of a row with -inf makes it NaN: there the guard does its work."""
    model = _guard_model(lowest=float("-inf"))
    assert fuse(model) == model


def test_a_model_with_subgraphs_is_left_whole() -> None:
    """A body of an If may read any name of the graph; this module does not look inside them."""
    then = field(1, graph_node("Identity", ["x"], ["t"])) + field(2, "then")
    attribute = field(1, "then_branch") + field(6, then) + field(20, 5)  # AttributeProto: name, g, type GRAPH
    branch = field(1, onnx_wire.node("If", ["cond"], ["branch"]) + field(5, attribute))
    model = _gelu_model()
    top = fields(model)
    (graph,) = [item for item in top if item.number == 7]
    with_if = b"".join(item.raw for item in top if item.number != 7) + field(7, bytes(graph.value) + branch)
    assert fuse(with_if) == with_if
    assert fuse(model) != model  # the same model without the If is fused


SENTENCES = [
    "The build broke after the Node upgrade; pinning npm to 10.2 fixed it.",
    "Use the staging database for migrations, never production.",
    "ok",  # two tokens with [CLS] and [SEP]: a row mostly padding
]


def test_the_shipped_model_has_every_gelu_fused_and_every_guard_dropped_with_the_same_vectors() -> None:
    """On real sentences in one padded batch, compared through the vectors they pool to, as recall sees them. Most come
    out identical, but float rounding may move an activation across a 7-bit step of the integer products'
    quantisation, which then grows through the later layers (the worst of 240 bench sentences: cosine 0.9962) — so
    the bar is the quantisation's agreement, as between the integer and float32 models, not bit for bit; a wrong
    fusion (another formula, a lost bias) scatters the vectors far below it."""
    from cerebro.embed.wordpiece import AsciiWordPiece

    rewritten = rewrite(local.model_path().read_bytes())
    fused = fuse(rewritten)
    before, after = _ops(rewritten), _ops(fused)
    assert after["BiasGelu"] == 6 and after["Erf"] == after["IsNaN"] == 0
    assert before - after == Counter({"Erf": 6, "IsNaN": 6, "Div": 6, "Add": 12, "Mul": 12, "Where": 6})
    assert _in_order(fused)
    wordpiece = AsciiWordPiece.load()
    windows = [
        [wordpiece.token_id("[CLS]"), *(wordpiece.encode(s) or []), wordpiece.token_id("[SEP]")] for s in SENTENCES
    ]
    ids = np.zeros((len(windows), max(map(len, windows))), dtype=np.int64)
    mask = np.zeros_like(ids)
    for row, window in enumerate(windows):
        ids[row, : len(window)], mask[row, : len(window)] = window, 1
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    pooled = []
    for model in (rewritten, fused):
        (hidden,) = _run(model, feeds)
        vectors = (hidden * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        pooled.append(vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
    assert (pooled[0] * pooled[1]).sum(axis=1).min() >= 0.99
