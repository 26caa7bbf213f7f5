"""ONNX models as protobuf bytes: the few fields cerebro writes (the integer scan, ADR 0040) and rewrites (the local
model's integer graph, ADR 0041), without the ``onnx`` package (~17 MB, protobuf's runtime) that cerebro does not
depend on.

A protobuf message is a sequence of fields, each a key (field number << 3 | wire type) and a value: a varint (type
0), 8 or 4 fixed bytes (types 1 and 5) or a length-delimited run of bytes (type 2: text, bytes, packed numbers or a
nested message). Reading keeps every field's exact bytes, so a rewrite re-emits the fields it does not change as
they were, and views into the model's buffer (``memoryview``) keep its 20 MB of weights from being copied.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# ONNX's TensorProto.DataType values
FLOAT, UINT8, INT8, INT32, INT64 = 1, 2, 3, 6, 7

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5


def varint(value: int) -> bytes:
    out = bytearray()
    value &= (1 << 64) - 1  # a negative int64 is written as its two's complement, ten bytes
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def field(number: int, payload: bytes | int | str) -> bytes:
    """One protobuf field: an integer as a varint, text and bytes length-delimited."""
    if isinstance(payload, int):
        return varint(number << 3) + varint(payload)
    data = payload.encode() if isinstance(payload, str) else payload
    return varint(number << 3 | LENGTH) + varint(len(data)) + data


def message(number: int, pieces: list[Any]) -> list[Any]:
    """A length-delimited field holding ``pieces`` (bytes-like), as pieces: large tensors are joined once, at the
    end, not copied at every level of nesting."""
    return [varint(number << 3 | LENGTH) + varint(sum(len(piece) for piece in pieces)), *pieces]


def value_info(name: str, element: int, shape: tuple[int, ...]) -> bytes:
    """A ValueInfoProto: ``name``, a tensor of ``element`` with this fixed shape (a graph's input or output)."""
    dims = b"".join(field(1, field(1, size)) for size in shape)  # TensorShapeProto.dim { dim_value }
    return field(1, name) + field(2, field(1, field(1, element) + field(2, dims)))


def tensor(name: str, data_type: int, dims: tuple[int, ...] | list[int], data: bytes | memoryview) -> list[Any]:
    """A TensorProto with its values as raw little-endian bytes, as pieces (see :func:`message`): a graph's initializer
    is ``message(5, tensor(…))``."""
    head = b"".join(field(1, size) for size in dims) + field(2, data_type) + field(8, name)
    return [head, *message(9, [data])]


_ATTRIBUTE_INT, _ATTRIBUTE_INTS = 2, 7  # AttributeProto.type


def node(op: str, inputs: list[str], outputs: list[str], domain: str = "", **attributes: int | list[int]) -> bytes:
    """A NodeProto (a graph's node is ``field(1, node(…))``), with integer or integer-list attributes."""
    body = b"".join(field(1, name) for name in inputs) + b"".join(field(2, name) for name in outputs)
    body += field(4, op) + (field(7, domain) if domain else b"")
    for name, value in attributes.items():
        if isinstance(value, list):
            attribute = field(1, name) + b"".join(field(8, v) for v in value) + field(20, _ATTRIBUTE_INTS)
        else:
            attribute = field(1, name) + field(3, value) + field(20, _ATTRIBUTE_INT)
        body += field(5, attribute)
    return body


class MalformedModel(ValueError):
    """The bytes are not the protobuf they should be."""


@dataclass(frozen=True)
class Field:
    number: int
    kind: int  # the wire type
    value: Any  # an int (varint), or a memoryview (length-delimited and fixed)
    raw: memoryview  # the whole field as it was read, key included

    def text(self) -> str:
        if self.kind != LENGTH:
            raise MalformedModel(f"field {self.number} should be text")
        try:
            return bytes(self.value).decode()
        except UnicodeDecodeError:
            raise MalformedModel(f"field {self.number} is not UTF-8 text") from None

    def integer(self) -> int:
        if self.kind != VARINT:
            raise MalformedModel(f"field {self.number} should be an integer")
        return int(self.value)


def _read_varint(data: memoryview, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise MalformedModel("a varint runs past its message")
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if not byte & 0x80:
            return value & ((1 << 64) - 1), at


def fields(data: bytes | memoryview) -> list[Field]:
    """The fields of one message, in order."""
    view = memoryview(data)
    if view.format != "B" or view.ndim != 1:
        view = view.cast("B")  # bytes, whatever the buffer's own element type
    out: list[Field] = []
    at = 0
    while at < len(view):
        start = at
        key, at = _read_varint(view, at)
        number, kind = key >> 3, key & 7
        value: Any
        if kind == VARINT:
            value, at = _read_varint(view, at)
        elif kind == LENGTH:
            size, at = _read_varint(view, at)
            value, at = view[at : at + size], at + size
        elif kind in (FIXED64, FIXED32):
            size = 8 if kind == FIXED64 else 4
            value, at = view[at : at + size], at + size
        else:
            raise MalformedModel(f"wire type {kind} (groups) is not used by ONNX")
        if at > len(view):
            raise MalformedModel("a field runs past its message")
        out.append(Field(number, kind, value, view[start:at]))
    return out


def last(items: list[Field], number: int) -> Field | None:
    """A singular field's value: protobuf keeps the last of several."""
    return next((item for item in reversed(items) if item.number == number), None)


def text_field(items: list[Field], number: int) -> str:
    """A singular text field, "" when absent."""
    item = last(items, number)
    return item.text() if item is not None else ""


def repeated_ints(items: list[Field], number: int) -> list[int]:
    """A repeated integer field, written packed (one length-delimited field) or one varint a value."""
    out: list[int] = []
    for item in items:
        if item.number != number:
            continue
        if item.kind == VARINT:
            out.append(item.value)
            continue
        at = 0
        while at < len(item.value):
            value, at = _read_varint(item.value, at)
            out.append(value)
    return [value - (1 << 64) if value >> 63 else value for value in out]  # int64: two's complement


@dataclass
class GraphNode:
    """A graph's NodeProto as read: the fields a rewrite matches on, and its exact bytes to copy it unchanged."""

    inputs: list[str]
    outputs: list[str]
    op_type: str
    domain: str
    attributes: list[Field]
    raw: memoryview  # the whole GraphProto.node field

    @classmethod
    def read(cls, item: Field) -> GraphNode:
        parts = fields(item.value)
        return cls(
            inputs=[f.text() for f in parts if f.number == 1],
            outputs=[f.text() for f in parts if f.number == 2],
            op_type=text_field(parts, 4),
            domain=text_field(parts, 7),
            attributes=[f for f in parts if f.number == 5],
            raw=item.raw,
        )

    def int_attribute(self, name: str) -> int | None:
        for attribute in self.attributes:
            parts = fields(attribute.value)
            if text_field(parts, 1) == name:
                value = last(parts, 3)
                return value.integer() if value is not None else None
        return None


@dataclass
class Initializer:
    """A graph's TensorProto as read (raw data only: the values a rewrite needs are stored raw)."""

    name: str
    data_type: int
    dims: list[int]
    raw_data: memoryview | None

    @classmethod
    def read(cls, item: Field) -> Initializer:
        parts = fields(item.value)
        data_type, raw = last(parts, 2), last(parts, 9)
        if raw is not None and raw.kind != LENGTH:
            raise MalformedModel("a tensor's raw data should be bytes")
        return cls(
            name=text_field(parts, 8),
            data_type=data_type.integer() if data_type is not None else 0,
            dims=repeated_ints(parts, 1),
            raw_data=raw.value if raw is not None else None,
        )


def graph_initializer(name: str, data_type: int, dims: list[int], raw: bytes | memoryview) -> bytes:
    """A GraphProto.initializer field."""
    return field(5, b"".join(tensor(name, data_type, dims, raw)))


def graph_node(
    op: str, inputs: list[str], outputs: list[str], domain: str = "", **attributes: int | list[int]
) -> bytes:
    """A GraphProto.node field."""
    return field(1, node(op, inputs, outputs, domain, **attributes))
