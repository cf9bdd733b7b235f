"""The OpenAI-compatible backend: ``POST /v1/completions`` (vLLM, llama.cpp's server,
Ollama's ``/v1``), streamed as server-sent events or not.

Completions are raw by nature (no chat template). Our Ollama-style options map onto
the OpenAI fields: ``num_predict`` -> ``max_tokens`` (always sent: the OpenAI default
is 16), ``stop``, ``temperature``, ``top_p``, ``seed``; ``num_ctx`` is the server's
business (fixed when it starts) and is not sent. A request that says ``constrain=True``
carries its JSON schema as ``response_format`` (OpenAI), ``guided_json`` (vLLM) and
``json_schema`` (llama.cpp's server). Usage comes back in ``usage`` (when
streaming, from the last chunk, asked for with ``stream_options.include_usage``).
"""

from __future__ import annotations

import json
import time
from typing import Any

from engine.errors import LLMResponseError
from engine.llm.http import HttpBackend, check_status, decode_object, once_started
from engine.llm.request import Generation, LLMRequest

PASSED_THROUGH = ("stop", "temperature", "top_p", "seed", "top_k", "min_p", "presence_penalty",
                  "frequency_penalty")  # fmt: skip


class OpenAIBackend(HttpBackend):
    def __init__(self, base_url: str, **settings: Any) -> None:
        """``base_url`` is the server (``http://gpu1:8000``) or its ``/v1`` root."""
        root = base_url.rstrip("/")
        super().__init__(root[: -len("/v1")] if root.endswith("/v1") else root, **settings)

    def body(self, request: LLMRequest) -> dict[str, Any]:
        options = request.options
        body: dict[str, Any] = {
            "model": request.model,
            "prompt": request.prompt(),
            "max_tokens": int(options.get("num_predict", 256)),
            "stream": self.stream,
        }
        body.update({key: options[key] for key in PASSED_THROUGH if key in options})
        if request.constrain is True and request.constraint is not None:
            # Only when asked outright (a knowledge pass, a profile's constrain: true):
            # the field names differ by server, and each ignores the others'.
            schema = dict(request.constraint().json_schema)
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": schema},
            }
            body["guided_json"] = schema  # vLLM
            body["json_schema"] = schema  # llama.cpp's server
        if self.stream:
            body["stream_options"] = {"include_usage": True}
        return body

    async def generate(self, request: LLMRequest) -> Generation:
        started = time.perf_counter()
        body = self.body(request)
        with self.reaching():
            if self.stream:
                text, finish, usage = await self._streamed(body)
            else:
                text, finish, usage = await self._whole(body)
        return Generation(
            text=text,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            latency=time.perf_counter() - started,
            done_reason=finish,
        )

    async def _whole(self, body: dict[str, Any]) -> tuple[str, str | None, dict[str, Any]]:
        response = await self._client.post("/v1/completions", json=body)
        check_status(response)
        data = decode_object(response.text)
        choice = _first_choice(data)
        return str(choice.get("text", "")), choice.get("finish_reason"), data.get("usage") or {}

    async def _streamed(self, body: dict[str, Any]) -> tuple[str, str | None, dict[str, Any]]:
        parts: list[str] = []
        finish: str | None = None
        usage: dict[str, Any] = {}
        done = False
        async with self._client.stream("POST", "/v1/completions", json=body) as response:
            if response.status_code != 200:
                await response.aread()
                check_status(response)
            with once_started(parts, self.base_url):
                async for line in response.aiter_lines():  # read to the end: the pool keeps it
                    if done or not line.startswith("data:"):
                        continue  # blank separators and ": ping" comments
                    payload = line[len("data:") :].strip()
                    if payload == "[DONE]":
                        done = True
                        continue
                    chunk = decode_object(payload)
                    if chunk.get("usage"):
                        usage = chunk["usage"]
                    choices = chunk.get("choices") or []
                    if choices:
                        parts.append(str(choices[0].get("text") or ""))
                        finish = choices[0].get("finish_reason") or finish
        if not done:
            raise LLMResponseError(f"{self.base_url}: the stream ended before [DONE]")
        return "".join(parts), finish, usage

    async def models(self) -> list[str]:
        """Model ids the server offers (``GET /v1/models``)."""
        data = (await self.get_json("/v1/models")).get("data") or []
        return [str(m.get("id", "")) for m in data if isinstance(m, dict)]


def _first_choice(data: dict[str, Any]) -> dict[str, Any]:
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise LLMResponseError(f"no choices in the reply: {json.dumps(data)[:120]}")
    return choices[0]
