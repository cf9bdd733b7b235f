"""Which backend and model a run uses, in words: ``embedded SmolLM2-135M``,
``fake (scripted)``, ``http://host:11434 qwen3:4b``.

The TUI's LLM panel and the first headless line say it. A pure function of the
dispatcher's endpoint names and the models the run asks for:

    backend_label([e.name for e in dispatcher.endpoints], models.values())
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from pathlib import PurePath

from engine.llm.local import KNOWN_MODELS, known_model

FAKE = "fake:"
LOCAL = "local"
LOCAL_PREFIX = "local:"
URLS_SHOWN = 2
"""Endpoints named in full; more are ``+N more``."""
FAKE_LABEL = "fake (scripted)"


def backend_label(endpoints: Iterable[str], models: Iterable[str] = ()) -> str:
    """The backend and model in one short line.

    ``endpoints``: the dispatcher's endpoint names (``Endpoint.name``: a URL, ``local``,
    ``local:<model or .gguf path>`` or ``fake:``; an ``LLMChoice``'s URLs read the same).
    ``models``: the model of each agent (repeats and any order are fine); the embedded
    and the scripted backends ignore them, as they do when they run."""
    names = [name.strip() for name in endpoints if name.strip()]
    if not names:
        return "none"
    if any(name.startswith(FAKE) for name in names):
        return FAKE_LABEL
    embedded = _unique(embedded_model(name) for name in names if _is_local(name))
    urls = _unique(name for name in names if not _is_local(name))
    parts = []
    if urls:
        shown = ", ".join(urls[:URLS_SHOWN])
        if len(urls) > URLS_SHOWN:
            shown += f" +{len(urls) - URLS_SHOWN} more"
        served = _models_text(models)
        parts.append(f"{shown} {served}" if served else shown)
    if embedded:
        parts.append("embedded " + ", ".join(embedded))
    return " + ".join(parts)


def embedded_model(endpoint: str) -> str:
    """``SmolLM2-135M`` for ``local``, ``Gemma 3 270M`` for ``local:gemma3``, a file's
    stem for ``local:/models/x.gguf``."""
    spec = endpoint[len(LOCAL_PREFIX) :].strip() if endpoint.startswith(LOCAL_PREFIX) else ""
    if not spec:
        return short_description(KNOWN_MODELS[0].description)
    known = known_model(spec)
    if known is not None:
        return short_description(known.description)
    return PurePath(spec).stem if spec.lower().endswith(".gguf") else spec


def short_description(description: str) -> str:
    """``SmolLM2-135M-Instruct`` -> ``SmolLM2-135M``; ``Gemma 3 270M (Q4_K_M)`` ->
    ``Gemma 3 270M``: the model, without its variant."""
    text = re.sub(r"\s*\([^)]*\)\s*$", "", description.strip())
    return re.sub(r"-Instruct$", "", text, flags=re.IGNORECASE) or description


def _models_text(models: Iterable[str]) -> str:
    """The most used model (ties: A-Z), and how many others: ``qwen3:4b +1 model``."""
    counts = Counter(model.strip() for model in models if model.strip())
    if not counts:
        return ""
    ranked = sorted(counts, key=lambda model: (-counts[model], model))
    others = len(ranked) - 1
    if not others:
        return ranked[0]
    return f"{ranked[0]} +{others} model{'s' if others > 1 else ''}"


def _is_local(name: str) -> bool:
    return name == LOCAL or name.startswith(LOCAL_PREFIX)


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
