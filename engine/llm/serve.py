"""``mudsim serve-llm``: the embedded model as an Ollama-compatible server.

    mudsim serve-llm --port 11435
    mudsim run worlds/pocket.yaml --llm http://127.0.0.1:11435 --model smollm2:135m

It answers every route of ``OllamaCompatibleServer`` on 127.0.0.1 only: generate and
chat (streaming and not), show, ps, tags, version, embed, and the OpenAI-style
``/v1/completions``, ``/v1/chat/completions`` and ``/v1/models``. Prompts are completed
as given (as with Ollama's ``raw: true``); chat messages go through the GGUF's chat
template first. A JSON-schema ``format`` (or ``"json"``) constrains decoding the way
Ollama does, so a profile's ``constrain`` works against it (and is on by default: the
model is under a billion parameters, which ``/api/show`` says). Generations are served
one at a time (the model has one lock); embeddings come from a second, embedding-mode
load of the model, made on the first ``/api/embed`` (``local_serving``).

A sequence of turns costs what it costs in-process (``scripts/bench.py local``:
``serve_llm_ratio``):

- Prefix cache. A request carries no role, so every prompt's evaluated state goes into
  the prefix cache (in-process only turns' and warms' do); the cache is keyed by tokens
  and a prompt reuses the state that shares the longest beginning with it, so an
  agent's next turn evaluates only what changed, whatever came in between. The cache
  drops its least recently used states past 256 MiB (about ten 1,000-token prompts), so
  one-off prompts (summaries, knowledge passes) can push an agent's state out only when
  it is that full. ``prompt_eval_count`` counts the tokens evaluated, as Ollama's does
  (OpenAI's ``usage`` has them in ``prompt_tokens_details.cached_tokens``); the states
  are saved at Ctrl-C and loaded at the next start, as the embedded backend's.
- mudsim's command schema (``{"command": "..."}``) is decoded as the command itself,
  then wrapped (``Decoding``): the same tokens as in-process, none for the envelope.
"""

from __future__ import annotations

import asyncio
import json
import math
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from engine.errors import LLMError, LLMResponseError, MudsimError
from engine.llm.local import DESCRIPTION, MODEL_NAME, LocalBackend
from engine.llm.local_model import DEFAULT_CTX
from engine.llm.local_serving import LocalEmbedder, LocalFacts, facts_of, render_chat
from engine.llm.model_identity import file_digest
from engine.llm.ollama_server import (
    Completion,
    Embeddings,
    MidStreamError,
    OllamaCompatibleServer,
    Refusal,
)
from engine.llm.ollama_wire import ModelInfo


class EmbeddedSource:
    """Answers Ollama- and OpenAI-style bodies with the embedded model."""

    version = "mudsim-serve-llm"

    def __init__(self, backend: LocalBackend) -> None:
        self.backend = backend
        self._facts: LocalFacts | None = None
        self._embedder: LocalEmbedder | None = None
        self._lock = threading.Lock()

    def models(self) -> list[str]:
        return [MODEL_NAME]

    def info(self, model: str) -> ModelInfo:
        with self._lock:
            if self._facts is None:
                self._facts = facts_of(self.backend.model(DEFAULT_CTX))
            facts = self._facts
        return ModelInfo(
            facts.parameter_count, facts.context_length, family=facts.family,
            quantization=facts.quantization, template=facts.chat_template, size=facts.size,
            embedding_length=facts.embedding_length, loaded_context=DEFAULT_CTX,
            extra=_model_info(facts),
            digest=file_digest(Path(self.backend.path)).removeprefix("sha256:"),
        )  # fmt: skip

    def chat_prompt(self, model: str, messages: list[dict[str, str]]) -> str:
        return render_chat(self.backend.model(DEFAULT_CTX), messages)

    def embed(self, model: str, texts: list[str], *, truncate: bool) -> Embeddings | Refusal:
        try:
            with self._lock:  # loaded on the first call
                if self._embedder is None:
                    self._embedder = LocalEmbedder(self.backend.path)
                embedder = self._embedder
            vectors, tokens = embedder.embed(texts, truncate=truncate)
        except LLMError as exc:
            return Refusal(400 if isinstance(exc, LLMResponseError) else 500, str(exc))
        return Embeddings(vectors, prompt_tokens=tokens)

    def answer(self, body: dict[str, Any]) -> Completion | Refusal:
        options = _options(body)
        prompt = str(body.get("prompt", ""))
        try:
            decoding = format_decoding(body.get("format"))
            model = self.backend.model(int(options.get("num_ctx", DEFAULT_CTX)))
            prompt_tokens = model.count_tokens(prompt)
        except (LLMError, ValueError) as exc:
            return Refusal(400, str(exc))
        if prompt_tokens >= model.n_ctx:
            return Refusal(
                400, f"the prompt is {prompt_tokens} tokens; the context holds {model.n_ctx}"
            )
        completion = Completion(iter(()), prompt_tokens=prompt_tokens)
        limit = int(options.get("num_predict", 64))

        def reused(tokens: int) -> None:
            completion.cached_tokens = tokens

        def pieces() -> Iterator[str]:
            try:
                decoded = model.stream(prompt, options, decoding.gbnf, reused=reused)
                for piece in decoding.wrapped(decoded):
                    if piece:  # the last chunk is empty: it only carries the finish reason
                        yield piece
            except LLMError as exc:
                raise MidStreamError(str(exc)) from exc
            completion.completion_tokens = decoding.tokens
            if 0 < limit <= completion.completion_tokens:
                completion.done_reason = "length"

        completion.pieces = pieces()
        return completion


def _model_info(facts: LocalFacts) -> dict[str, Any]:
    """The GGUF's ``general.*`` and architecture keys (not the tokenizer's), as numbers
    where they are numbers, as Ollama's ``model_info`` has them."""
    kept = {k: v for k, v in facts.metadata.items() if k.split(".")[0] in ("general", facts.family)}
    return {key: _number(value) for key, value in kept.items()}


def _number(text: str) -> int | float | str:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return text
    return number if math.isfinite(number) else text


def _options(body: Mapping[str, Any]) -> dict[str, Any]:
    """Ollama ``options``, or the OpenAI fields mapped onto them."""
    options = dict(body.get("options") or {})
    for theirs, ours in (("max_tokens", "num_predict"), ("temperature", "temperature"),
                         ("top_p", "top_p"), ("stop", "stop"), ("seed", "seed")):  # fmt: skip
        if body.get(theirs) is not None:
            options[ours] = body[theirs]
    return options


class Decoding:
    """How one request is decoded: under ``gbnf`` (None: freely), its pieces counted.

    ``key`` set: the request's ``format`` is an object of one required string with a
    ``pattern`` (mudsim's command schema ``{"command": "look"}``). The model then decodes
    the string itself, under the pattern's grammar, from the prompt as given, exactly as
    the embedded backend decodes a turn under the command grammar (the same language, so
    the same tokens are allowed at each step); the reply is that text wrapped as the
    object (``{"command": "look"}``), escaped as JSON. Decoding the envelope instead
    costs some ten tokens a turn (``{ "command" : "`` ... ``"} ``, whitespace where JSON
    allows it) out of two to twenty, and changes what a small model writes after it.
    """

    def __init__(self, gbnf: str | None, key: str | None = None) -> None:
        self.gbnf, self.key = gbnf, key
        self.tokens = 0
        """Pieces decoded by the model (the envelope is not)."""

    def wrapped(self, decoded: Iterator[str]) -> Iterator[str]:
        if self.key is not None:
            yield "{" + json.dumps(self.key, ensure_ascii=False) + ': "'
        for piece in decoded:
            if piece:
                self.tokens += 1
                yield piece if self.key is None else json.dumps(piece, ensure_ascii=False)[1:-1]
        if self.key is not None:
            yield '"}'


def format_decoding(format_: object) -> Decoding:
    """How to decode a request with Ollama's ``format`` (``ValueError`` when refused)."""
    lone = _lone_pattern(format_)
    if lone is not None:
        from llama_cpp import llama_grammar

        # raw_pattern: the pattern's language itself, without the JSON string's quotes
        converter: Any = llama_grammar.SchemaConverter
        raw = converter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=True)
        raw.visit({"type": "string", "pattern": lone[1]}, "")
        return Decoding(_bounded(str(raw.format_grammar())), key=lone[0])
    return Decoding(format_grammar(format_))


_SCHEMA_NOTES = frozenset({"title", "description"})


def _lone_pattern(format_: object) -> tuple[str, str] | None:
    """(key, pattern) of an object schema whose one property, required, is a string with
    an anchored ``pattern`` and nothing else; None for any other ``format``."""
    if not isinstance(format_, dict) or format_.get("type") != "object":
        return None
    properties = format_.get("properties")
    if set(format_) - {"type", "properties", "required", "additionalProperties", *_SCHEMA_NOTES}:
        return None
    if not isinstance(properties, dict) or len(properties) != 1:
        return None
    ((key, value),) = properties.items()
    if format_.get("required") != [key]:
        return None
    if not isinstance(value, dict) or set(value) - {"type", "pattern", *_SCHEMA_NOTES}:
        return None
    pattern = value.get("pattern")
    if value.get("type") != "string" or not isinstance(pattern, str):
        return None
    # a quote would end the converter's literal (it writes none in raw mode)
    if not (pattern.startswith("^") and pattern.endswith("$")) or '"' in pattern:
        return None
    return str(key), pattern


def format_grammar(format_: object) -> str | None:
    """Ollama's ``format`` (a JSON schema, or ``"json"``) as a llama.cpp grammar."""
    if not format_:
        return None
    if format_ != "json" and not isinstance(format_, dict):
        raise ValueError('format must be "json" or a JSON schema object')
    if isinstance(format_, dict):
        _check_bounds(format_)
    from llama_cpp.llama_grammar import JSON_GBNF, json_schema_to_gbnf

    if format_ == "json":
        return str(JSON_GBNF)
    return _bounded(str(json_schema_to_gbnf(json.dumps(format_))))


def _bounded(grammar: str) -> str:
    if len(grammar) > GRAMMAR_MAX_CHARS:
        raise ValueError(f"the format's JSON schema makes a grammar of {len(grammar):,} "
                         f"characters; at most {GRAMMAR_MAX_CHARS:,} are served")  # fmt: skip
    return grammar


SCHEMA_BOUND_MAX = 4_096
"""The largest ``maxLength``/``minLength``/``maxItems``/``minItems`` a ``format`` may use:
the grammar converter unrolls each into as many nested rules, and a few tens of
thousands of them crash llama.cpp's grammar parser (the whole server)."""
GRAMMAR_MAX_CHARS = 200_000
_BOUNDS = ("maxLength", "minLength", "maxItems", "minItems")


def _check_bounds(schema: dict[str, Any]) -> None:
    """``ValueError`` for a bound over ``SCHEMA_BOUND_MAX`` anywhere in ``schema``."""
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key in _BOUNDS:
                value = node.get(key)
                if isinstance(value, int) and value > SCHEMA_BOUND_MAX:
                    raise ValueError(f"the format's JSON schema asks for {key} {value}; "
                                     f"at most {SCHEMA_BOUND_MAX} is served")  # fmt: skip
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def serve(port: int) -> None:
    """Serve until Ctrl-C (the CLI's ``serve-llm``)."""
    backend = LocalBackend()
    backend.model(DEFAULT_CTX)  # load now: a broken install is found before listening
    try:
        server = OllamaCompatibleServer(EmbeddedSource(backend), port=port).start()
    except OSError as exc:
        raise MudsimError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from exc
    print(
        f"serving the embedded model ({DESCRIPTION}) as {MODEL_NAME!r} at {server.url}\n"
        f"try: mudsim run worlds/pocket.yaml --llm {server.url} --model {MODEL_NAME}\n"
        "Ctrl-C stops it.",
        flush=True,
    )
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        asyncio.run(backend.aclose())  # the newest prompt states, for the next start
