"""The shapes of the Ollama-compatible server's bodies (pure: no I/O, no threads).

Requests are read here (``chat_messages``, ``embed_inputs``, ``openai_chat_body``),
raising ``WireError`` (an HTTP 400) with one clear line; answers are built here
(``show_payload``, ``ps_entry``, the OpenAI envelopes), with the fields the official
``ollama`` and ``openai`` Python clients read.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from engine.llm.model_facts import human_number

NEVER = "9999-12-31T23:59:59Z"
"""When a model served here unloads (``/api/ps``'s ``expires_at``): it stays loaded."""


class WireError(ValueError):
    """A request the server cannot read: answered 400 with this message."""


@dataclass(frozen=True)
class ModelInfo:
    """What ``/api/show``, ``/api/tags`` and ``/api/ps`` say about one model."""

    parameter_count: int
    context_length: int
    """The context the model was trained for."""
    family: str = "llama"
    quantization: str = "unknown"
    template: str = ""
    """The chat template ``/api/chat`` renders messages through."""
    size: int = 0
    """Bytes of the model file."""
    embedding_length: int = 0
    loaded_context: int | None = None
    """The context it is loaded with (``/api/ps``); None: ``context_length``."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """More ``model_info`` keys (a GGUF's metadata)."""
    digest: str = ""
    """The model's sha256 (hex, as Ollama's ``/api/tags`` gives it; empty: unknown)."""


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def details(info: ModelInfo) -> dict[str, Any]:
    return {
        "parent_model": "",
        "format": "gguf",
        "family": info.family,
        "families": [info.family],
        "parameter_size": human_number(info.parameter_count),
        "quantization_level": info.quantization,
    }


def show_payload(name: str, info: ModelInfo) -> dict[str, Any]:
    """``POST /api/show``, as Ollama answers it."""
    arch = info.family
    model_info: dict[str, Any] = {
        **info.extra,
        "general.architecture": arch,
        "general.parameter_count": info.parameter_count,
        f"{arch}.context_length": info.context_length,
    }
    if info.embedding_length:
        model_info[f"{arch}.embedding_length"] = info.embedding_length
    return {
        "license": "",
        "modelfile": f"# served by mudsim\nFROM {name}\n",
        "parameters": "",
        "template": info.template,
        "details": details(info),
        "model_info": model_info,
        "capabilities": ["completion", "embedding"],
        "modified_at": now(),
    }


def tags_entry(name: str, info: ModelInfo) -> dict[str, Any]:
    """One model of ``GET /api/tags``."""
    return {"name": name, "model": name, "modified_at": now(), "size": info.size,
            "digest": info.digest, "details": details(info)}  # fmt: skip


def ps_entry(name: str, info: ModelInfo) -> dict[str, Any]:
    """One loaded model of ``GET /api/ps`` (on the CPU: no VRAM)."""
    return {
        **tags_entry(name, info),
        "expires_at": NEVER,
        "size_vram": 0,
        "context_length": info.loaded_context or info.context_length,
    }


def chat_messages(raw: object) -> list[dict[str, str]]:
    """``messages`` as ``[{"role", "content"}]``; OpenAI content parts are joined."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise WireError("messages must be a list of {role, content} objects")
    messages = []
    for number, message in enumerate(raw, 1):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise WireError(f"message {number} has no role")
        messages.append({"role": message["role"], "content": _content(message, number)})
    return messages


def _content(message: Mapping[str, Any], number: int) -> str:
    content = message.get("content")
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):  # OpenAI's [{"type": "text", "text": ...}]
        texts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        if len(texts) == len(content) and all(isinstance(t, str) for t in texts):
            return "".join(str(t) for t in texts)
    raise WireError(f"message {number}: only text content is supported")


def embed_inputs(raw: object) -> list[str]:
    """``input``: a text or a list of texts. None, ``""`` and ``[]`` embed nothing (as
    Ollama, which answers them with no embeddings); an empty text in a list is refused."""
    if raw is None or raw == "":
        return []
    texts = [raw] if isinstance(raw, str) else raw
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise WireError("invalid input type: input must be a text or a list of texts")
    for number, text in enumerate(texts, 1):
        if not text:
            raise WireError(f"input {number} is empty")
    return texts


def shortened(vectors: Sequence[Sequence[float]], dimensions: object) -> list[list[float]]:
    """Ollama's ``dimensions``: the first n components, normalised again."""
    if dimensions is None:
        return [list(v) for v in vectors]
    if isinstance(dimensions, bool) or not isinstance(dimensions, int) or dimensions < 1:
        raise WireError("dimensions must be a positive whole number")
    cut = [list(v[:dimensions]) for v in vectors]
    return [normalised(v) for v in cut]


def normalised(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm > 0 else list(vector)


def openai_chat_body(body: Mapping[str, Any]) -> dict[str, Any]:
    """A ``/v1/chat/completions`` body with ``response_format`` as Ollama's ``format``."""
    converted = dict(body)
    response_format = body.get("response_format")
    if isinstance(response_format, dict):
        kind = response_format.get("type")
        if kind == "json_object":
            converted["format"] = "json"
        elif kind == "json_schema":
            schema = (response_format.get("json_schema") or {}).get("schema")
            if not isinstance(schema, dict):
                raise WireError("response_format.json_schema.schema must be a JSON schema")
            converted["format"] = schema
        elif kind not in (None, "text"):
            raise WireError(f"response_format type {kind!r} is not supported")
    if "max_completion_tokens" in body and "max_tokens" not in body:
        converted["max_tokens"] = body["max_completion_tokens"]
    return converted


def openai_envelope(kind: str, model: str) -> dict[str, Any]:
    """The fields every OpenAI-style answer and chunk carries."""
    return {"id": f"mudsim-{time.time_ns():x}", "object": kind, "created": int(time.time()),
            "model": model}  # fmt: skip


def text_choice(text: str, finish: str | None) -> dict[str, Any]:
    """``/v1/completions``: the whole text, or a piece (``finish`` None)."""
    return {"choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": finish}]}


def text_delta(text: str, first: bool) -> dict[str, Any]:
    return text_choice(text, None)


def chat_choice(text: str, finish: str | None) -> dict[str, Any]:
    """``/v1/chat/completions``: the whole reply."""
    message = {"role": "assistant", "content": text}
    return {"choices": [{"index": 0, "message": message, "finish_reason": finish}]}


def chat_delta(text: str, first: bool) -> dict[str, Any]:
    """A piece of a streamed chat reply (the first says whose it is)."""
    change = {"role": "assistant", "content": text} if first else {"content": text}
    return {"choices": [{"index": 0, "delta": change, "finish_reason": None}]}


def openai_error(message: str, status: int) -> dict[str, Any]:
    kind = {400: "invalid_request_error", 404: "not_found_error"}.get(status, "api_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def ndjson(data: dict[str, Any]) -> bytes:
    return json.dumps(data).encode() + b"\n"


def event(data: dict[str, Any]) -> bytes:
    """One server-sent event."""
    return b"data: " + json.dumps(data).encode() + b"\n\n"
