"""JSON Schema pieces the tools' input and output schemas are built from (:mod:`cerebro.mcp.catalogue`)."""

from __future__ import annotations

from typing import Any

from cerebro.values import NODE_TYPES


def object_schema(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    return schema


def described(base: dict[str, Any], description: str) -> dict[str, Any]:
    return {**base, "description": description}


CONTENT = {"type": "string", "minLength": 1, "maxLength": 100_000}
ID = {
    "type": "string",
    "minLength": 4,
    "maxLength": 64,
    "description": "A memory id; a unique prefix of 4+ characters is enough",
}
TYPE = {
    "type": "string",
    "enum": list(NODE_TYPES),
    "description": "episode: what happened (fades within days) · concept: a fact or decision · procedure: how to "
    "do something · reflection: a lesson learned",
}
SUBTYPE = {"type": "string", "maxLength": 100, "description": "A free-form kind, e.g. decision, bug, preference"}
IMPORTANCE = {
    "type": "number",
    "minimum": 0,
    "maximum": 1,
    "description": "0 to 1, default 0.5; 0.8 or more for what must not be forgotten",
}
METADATA = {"type": "object", "description": "A JSON object stored with the memory"}
ANCHORS = {
    "type": "array",
    "items": {"type": "string", "minLength": 1, "maxLength": 1000},
    "maxItems": 20,
    "description": "Code this memory is about: PATH or PATH:START-END, relative to the project root. Later "
    "reads report whether that code changed (verified, stale, missing)",
}
ANCHOR_REF = {
    "type": "string",
    "maxLength": 200,
    "description": "A git ref recorded with the anchors (HEAD is recorded anyway)",
}
INSTANT = {
    "type": "string",
    "minLength": 1,
    "maxLength": 64,
    "description": "RFC 3339 (2026-03-11T10:00:00Z) or YYYY-MM-DD",
}
NOTICES = {"type": "array", "items": {"type": "string"}}
NODE: dict[str, Any] = {
    "type": "object",
    "required": ["id", "type", "content", "status", "importance"],
    "properties": {
        "id": {"type": "string"},
        "type": {"type": "string"},
        "subtype": {"type": ["string", "null"]},
        "content": {"type": "string"},
        "status": {"type": "string"},
        "importance": {"type": "number"},
        "score": {"type": "number"},
        "similarity": {"type": "number"},
        "anchor_status": {"type": ["string", "null"]},  # null where the tool did not check the anchors
    },
}
ID_RESULT = {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}, "notices": NOTICES}}


def output_schema(properties: dict[str, Any], required: tuple[str, ...]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": list(required),
        # note: framing.DATA_NOTE, present when the result holds memory content (see the server)
        "properties": {"note": {"type": "string"}, **properties, "notices": NOTICES},
    }
