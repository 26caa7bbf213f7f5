"""The local model's integer rewrite (ADR 0041) on small models built here: what ONNX Runtime computes from the
rewritten graph is exactly the arithmetic the module promises (checked against NumPy), every quantised value stays
within 0…127, a token's result never depends on its batch, and a model the rewrite does not recognise is refused."""

from __future__ import annotations

import struct

import numpy as np
import onnxruntime
import pytest

from cerebro import onnx_wire
from cerebro.embed import integer_graph
from cerebro.embed.integer_graph import LEVELS
from cerebro.onnx_wire import FLOAT, INT8, MalformedModel, field, graph_initializer, graph_node, value_info

K, N = 24, 10


def _weights(seed: int, rows: int = K, columns: int = N) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    weights = rng.integers(-127, 128, size=(rows, columns), dtype=np.int8)
    weights[0, :] = -127  # the extremes, side by side: the pairs a 16-bit sum would overflow on
    weights[1, :] = -127
    scales = rng.uniform(0.001, 0.01, size=(1, columns)).astype(np.float32)
    return weights, scales


def _dequantised(name: str, weights: np.ndarray, scales: np.ndarray) -> list[bytes]:
    """Initializers and nodes of the shipped model's shape: ``{name} = Cast(int8) * column scales``."""
    return [
        graph_initializer(f"{name}_q", INT8, list(weights.shape), weights.tobytes()),
        graph_initializer(f"{name}_scale", FLOAT, list(scales.shape), scales.tobytes()),
        graph_node("Cast", [f"{name}_q"], [f"{name}_f"], to=FLOAT),
        graph_node("Mul", [f"{name}_f", f"{name}_scale"], [name]),
    ]


def _model(body: list[bytes], outputs: list[str], opset: int = 17) -> bytes:
    graph = b"".join(body) + field(2, "g") + field(11, value_info("x", FLOAT, (2, 5, K)))
    graph += b"".join(field(12, field(1, name) + field(2, field(1, field(1, FLOAT)))) for name in outputs)
    return field(1, 8) + field(8, field(1, "") + field(2, opset)) + field(7, graph)


def _two_products() -> tuple[bytes, dict[str, tuple[np.ndarray, np.ndarray]]]:
    """y = x @ A, z = x @ B + 1 (two products of one input, as the attention's projections are)."""
    a, b = _weights(1), _weights(2)
    body = [*_dequantised("A", *a), *_dequantised("B", *b)]
    body += [graph_node("MatMul", ["x", "A"], ["y"]), graph_node("MatMul", ["x", "B"], ["zb"])]
    body += [graph_initializer("one_", FLOAT, [], struct.pack("<f", 1.0)), graph_node("Add", ["zb", "one_"], ["z"])]
    return _model(body, ["y", "z"]), {"A": a, "B": b}


def _run(model: bytes, x: np.ndarray) -> list[np.ndarray]:
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])
    return session.run(["y", "z"], {"x": x})


def _promised(x: np.ndarray, weights: np.ndarray, scales: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The module's arithmetic in NumPy: each row on its own range, integer products, then the scales."""
    rows = x.reshape(-1, x.shape[-1]).astype(np.float32)
    low = np.minimum(rows.min(axis=1, keepdims=True), 0)
    high = np.maximum(rows.max(axis=1, keepdims=True), 0)
    scale = np.maximum(high - low, np.float32(1e-12)) / np.float32(LEVELS)
    zero = np.round(-(low / scale))
    q = np.clip(np.round(rows / scale) + zero, 0, 255)
    products = (q.astype(np.int64) - zero.astype(np.int64)) @ weights.astype(np.int64)
    return (products * scale * scales).reshape(*x.shape[:-1], -1), q


def _hard_inputs() -> np.ndarray:
    rng = np.random.default_rng(7)
    x = rng.normal(size=(2, 5, K)).astype(np.float32)
    x[0, 0] = np.abs(x[0, 0]) + 0.5  # no negative value
    x[0, 1] = -np.abs(x[0, 1]) - 0.5  # no positive value
    x[0, 2] = 0.0  # a row of zeros
    x[0, 3, :2] = [40.0, 40.0]  # an outlier pair on the -127 weights' rows
    x[0, 4] = np.linspace(-1.5, 1.5, K)  # values on half steps
    x[1, 0] = 1e-30  # tiny: the scale's floor
    return x


def test_the_rewritten_graph_computes_exactly_the_promised_integer_arithmetic() -> None:
    model, weights = _two_products()
    x = _hard_inputs()
    y, z = _run(integer_graph.rewrite(model), x)
    expected_y, q = _promised(x, *weights["A"])
    expected_z, _ = _promised(x, *weights["B"])
    assert q.min() >= 0 and q.max() <= 127  # every CPU's integer kernel multiplies these exactly
    np.testing.assert_allclose(y, expected_y, rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(z, expected_z + 1, rtol=2e-5, atol=1e-6)
    float_y, _ = _run(model, x)  # and it is the float product, to the quantisation's precision
    assert np.abs(y - float_y).max() <= 0.02 * np.abs(float_y).max()


def test_a_row_gives_the_same_result_alone_and_in_any_batch() -> None:
    model = integer_graph.rewrite(_two_products()[0])
    x = _hard_inputs()
    together, _ = _run(model, x)
    for b in range(2):
        for t in range(5):
            alone = np.zeros_like(x)  # the row among zero rows: another batch, other ranges
            alone[1 - b, 4 - t] = x[b, t]
            single, _ = _run(model, alone)
            np.testing.assert_allclose(single[1 - b, 4 - t], together[b, t], rtol=1e-6, atol=1e-7)


def test_the_rewrite_adds_one_quantisation_an_input_and_drops_the_float_weights() -> None:
    rewritten = integer_graph.rewrite(_two_products()[0])
    graph = onnx_wire.fields(next(f for f in onnx_wire.fields(rewritten) if f.number == 7).value)
    ops = [next(p.text() for p in onnx_wire.fields(f.value) if p.number == 4) for f in graph if f.number == 1]
    assert ops.count("QuantizeLinear") == 1 and ops.count("MatMulIntegerToFloat") == 2
    assert "Cast" in ops and "MatMul" not in ops  # the weights' Cast is gone; the quantisation's own Cast stays
    names = [next(p.text() for p in onnx_wire.fields(f.value) if p.number == 8) for f in graph if f.number == 5]
    assert "A_q" in names and "A_scale" not in names  # the int8 weights are read as they are


def test_a_product_whose_weights_are_read_elsewhere_stays_float() -> None:
    a, b = _weights(1), _weights(2)
    body = [*_dequantised("A", *a), *_dequantised("B", *b)]
    body += [graph_node("MatMul", ["x", "A"], ["y"]), graph_node("MatMul", ["x", "B"], ["z"])]
    shared = _model([*body, graph_node("Identity", ["B"], ["B_too"])], ["y", "z", "B_too"])
    original_z = _run(shared, _hard_inputs())[1]
    y, z = _run(integer_graph.rewrite(shared), _hard_inputs())
    np.testing.assert_allclose(y, _promised(_hard_inputs(), *a)[0], rtol=2e-5, atol=1e-6)
    np.testing.assert_array_equal(z, original_z)  # untouched


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (b"\xff\xff\xff", "varint"),
        (_model([graph_node("Identity", ["x"], ["y"]), graph_node("Identity", ["x"], ["z"])], ["y", "z"]), "no MatMul"),
        (_model([], ["y"], opset=18), "opset 13 to 17"),
        (_model([], ["y"], opset=12), "opset 13 to 17"),
        (_model([*_dequantised("cerebro_q/A", *_weights(1))], ["y"]), "already has names"),
    ],
    ids=["not protobuf", "nothing to rewrite", "a later opset", "an earlier opset", "names of ours"],
)
def test_a_model_the_rewrite_does_not_recognise_is_refused(model: bytes, message: str) -> None:
    with pytest.raises(MalformedModel, match=message):
        integer_graph.rewrite(model)


def test_protobuf_fields_read_back_as_written() -> None:
    message = field(1, 300) + field(2, "name") + field(3, -1) + field(4, onnx_wire.varint(5) + onnx_wire.varint(2**40))
    items = onnx_wire.fields(message)
    assert [(f.number, f.kind) for f in items] == [(1, 0), (2, 2), (3, 0), (4, 2)]
    assert items[0].value == 300 and items[1].text() == "name"
    assert onnx_wire.repeated_ints(items, 3) == [-1]  # int64's two's complement, ten bytes
    assert onnx_wire.repeated_ints(items, 4) == [5, 2**40]  # packed
    assert b"".join(bytes(f.raw) for f in items) == message


def test_one_matrix_read_with_two_sets_of_scales_keeps_both() -> None:
    """Constants are made per (weights, scales): shared by name alone, the second product took the first's scales."""
    weights, scales = _weights(1)
    other = (scales * 3.5).astype(np.float32)
    body = [*_dequantised("A", weights, scales)]
    body += [graph_initializer("B_scale", FLOAT, list(other.shape), other.tobytes())]
    body += [graph_node("Cast", ["A_q"], ["B_f"], to=FLOAT), graph_node("Mul", ["B_f", "B_scale"], ["B"])]
    body += [graph_node("MatMul", ["x", "A"], ["y"]), graph_node("MatMul", ["x", "B"], ["z"])]
    y, z = _run(integer_graph.rewrite(_model(body, ["y", "z"])), _hard_inputs())
    np.testing.assert_allclose(y, _promised(_hard_inputs(), weights, scales)[0], rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(z, _promised(_hard_inputs(), weights, other)[0], rtol=2e-5, atol=1e-6)


def test_scales_read_elsewhere_or_named_as_inputs_are_kept_and_our_names_never_collide() -> None:
    a, b = _weights(1), _weights(2)
    body = [*_dequantised("A", *a), *_dequantised("B", *b)]
    body += [graph_node("MatMul", ["x", "A"], ["y0"]), graph_node("Identity", ["y0"], ["y0/int"])]  # a name like ours
    body += [graph_node("Identity", ["y0/int"], ["y"])]
    body += [graph_node("MatMul", ["x", "B"], ["z"]), graph_node("Identity", ["A_scale"], ["scales_too"])]
    model = _model(body, ["y", "z", "scales_too"])
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(
        integer_graph.rewrite(model), sess_options=options, providers=["CPUExecutionProvider"]
    )
    y, z, kept = session.run(["y", "z", "scales_too"], {"x": _hard_inputs()})
    np.testing.assert_allclose(y, _promised(_hard_inputs(), *a)[0], rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(z, _promised(_hard_inputs(), *b)[0], rtol=2e-5, atol=1e-6)
    np.testing.assert_array_equal(kept, a[1])  # the 2-D scales are still there for the node that reads them


def test_a_damaged_model_is_refused_with_one_error_never_another() -> None:
    """Random bytes changed in a model: the rewrite either works or says MalformedModel — no decoding error of
    another kind, no hang (the length and varint checks)."""
    model, _ = _two_products()
    rng = np.random.default_rng(41)
    outcomes = {"refused": 0, "rewritten": 0}
    for _ in range(400):
        damaged = bytearray(model)
        for at in rng.integers(0, len(damaged), size=int(rng.integers(1, 4))):
            damaged[at] = int(rng.integers(0, 256))
        try:
            integer_graph.rewrite(bytes(damaged))
            outcomes["rewritten"] += 1
        except MalformedModel:
            outcomes["refused"] += 1
    assert outcomes["refused"] > 0 and outcomes["rewritten"] > 0
