"""Each run's models as the servers name them now (``model_digests`` of ``run.json``),
for the run's fingerprint: a model pulled again under the same name is another model,
and a sweep never reuses runs made with the old one without saying so.

Asked once per distinct LLM at a sweep's start (Ollama's ``/api/tags``, with a short
timeout); the embedded model's file and a script are hashed here. A server that does
not answer gives ``unknown``, which never counts as a change (``known_digests``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any, Final

import httpx

from engine.config import LLMConfig
from engine.errors import LLMError
from engine.lab.sweep.file import Sweep
from engine.lab.sweep.plan import canonical_json
from engine.lab.sweep.settings import split
from engine.llm.connect import PROBE_TIMEOUT, build_dispatcher, choose_llm
from engine.llm.dispatcher import Endpoint
from engine.llm.model_identity import UNKNOWN, model_digests
from engine.llm.ollama import OllamaBackend

DIGESTS: Final = "digests"
"""The fingerprint's part: model -> digest."""


async def digests_now(sweep: Sweep, environ: Mapping[str, str],
                      fingerprints: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, str]]:  # fmt: skip
    """Run key -> {model: digest} of the models its fingerprint names."""
    config = LLMConfig.model_validate({"endpoints": sweep.endpoints or []})
    asked: dict[str, dict[str, str]] = {}
    found = {}
    for run in sweep.runs:
        flag = split(run.settings)["run"].get("llm") or sweep.spec.llm
        env = environ if sweep.spec.endpoints is None else {}
        models = [str(m) for m in fingerprints[run.key].get("models") or []]
        marker = canonical_json([flag, sorted(env.items()), models])
        if marker not in asked:
            asked[marker] = await _digests(flag, env, config, models)
        found[run.key] = asked[marker]
    return found


async def _digests(flag: str | None, environ: Mapping[str, str], config: LLMConfig,
                   models: list[str]) -> dict[str, str]:  # fmt: skip
    dispatcher = build_dispatcher(choose_llm(flag, environ, config))
    try:
        asked = []
        for endpoint in dispatcher.endpoints:
            if isinstance(endpoint.backend, OllamaBackend):  # asked quickly, on its own
                quick = OllamaBackend(endpoint.name, timeout=httpx.Timeout(PROBE_TIMEOUT))
                with contextlib.suppress(LLMError):  # unknown: never a change
                    await quick.models()  # fills its digests
                await quick.aclose()
                endpoint = Endpoint(endpoint.name, quick)
            asked.append(endpoint)
        return model_digests(asked, models)
    finally:
        await dispatcher.aclose()


def known_digests(wanted: Mapping[str, Any], made: Mapping[str, Any] | None) -> dict[str, Any]:
    """``wanted`` (a fingerprint now) with each digest that cannot be told now
    (``unknown``) taken from ``made`` (the fingerprint a run was made with): only a
    digest known both then and now can differ."""
    now = dict(wanted.get(DIGESTS) or {})
    then = dict((made or {}).get(DIGESTS) or {})
    for model, digest in now.items():
        if UNKNOWN in digest.split(",") and model in then:
            now[model] = then[model]
    return {**wanted, DIGESTS: now}
