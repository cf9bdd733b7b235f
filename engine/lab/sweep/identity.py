"""What a sweep's run was made with, beyond its key (pure: no I/O).

A run's **key** names what the run is (world, settings, seed, turns:
``engine.lab.sweep.plan``); its **fingerprint** names everything else that changes its
result: the LLM it is served by (each endpoint's URL, secrets removed, and kind), the
models its agents think with, the probe's settings, the mudsim version and the code it
ran (the git commit, and a hash of the changes when the tree was dirty:
``engine.provenance``). Both are in
the run's ``result.json``. A sweep started again keeps a finished run only when both
match: one made with another LLM, probe, version or commit is never silently reused
(``engine.lab.sweep.store.scan`` refuses, or with ``--rerun-changed`` runs it again).

The LLM and models are resolved as ``mudsim run`` resolves them (``--llm`` >
``MUDSIM_LLM_URL`` > the sweep's ``endpoints`` > the default URL; ``--model`` >
``MUDSIM_MODEL`` > the character's > the profile's), without asking any server.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from engine.config import LLMConfig
from engine.lab.sweep.plan import canonical_json
from engine.lab.sweep.settings import split, vault_settings
from engine.llm.connect import choose_llm, choose_model
from engine.llm.model_identity import FAKE_MODEL
from engine.world.loader import parse_world

if TYPE_CHECKING:
    from engine.lab.sweep.file import Sweep

PASSED_ENVIRONMENT: Final = ("MUDSIM_LLM_URL", "MUDSIM_MODEL")
"""What of the sweep's environment each run sees."""
REDACTED: Final = "REDACTED"
SECRET_NAMES: Final = re.compile(
    r"(token|key|secret|passw|pwd|auth|sig|credential|session|cookie)", re.IGNORECASE
)
"""Query parameters whose values are taken for secrets (``?api_key=...``, ``?token=``)."""
FINGERPRINT_PARTS: Final = ("llm", "models", "digests", "probe", "mudsim", "code")
SHOWN_CHANGES: Final = 3
"""The runs and the changes a refusal names (then "and N more")."""


def redact_url(url: str) -> str:
    """``url`` with no secret in it: no ``user:password@``, a secret-looking query
    parameter's value replaced by ``REDACTED``, no fragment. ``local``, ``fake:...``
    and anything that is not an http(s) URL are returned as they are."""
    if not url.startswith(("http://", "https://")):
        return url
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    query = [(name, REDACTED if SECRET_NAMES.search(name) else value)
             for name, value in parse_qsl(parts.query, keep_blank_values=True)]  # fmt: skip
    return urlunsplit((parts.scheme, host, parts.path, urlencode(query), ""))


def llm_fingerprint(flag: str | None, model: str | None, environ: Mapping[str, str],
                    config: LLMConfig, character_models: Sequence[str | None]) -> dict[str, Any]:  # fmt: skip
    """The LLM a run is served by and its agents' models: ``{"llm": [{url, kind}],
    "models": [...]}`` (``flag``: the run's ``--llm``; ``model``: its ``--model``;
    ``character_models``: the world's agents' own ``model``, None where unset)."""
    choice = choose_llm(flag, environ, config)
    endpoints = [{"url": redact_url(e.url), "kind": e.kind} for e in choice.endpoints]
    if choice.local:
        models = [choice.embedded_model]
    elif choice.fake:
        models = [FAKE_MODEL]  # a script, whatever the rows name
    else:
        models = sorted({choose_model(model, environ, config, character_model=m)
                         for m in (character_models or [None])})  # fmt: skip
    return {"llm": endpoints, "models": models}


def fingerprint(llm: Mapping[str, Any], probe: Mapping[str, Any] | None,
                version: str, code: str = "") -> dict[str, Any]:  # fmt: skip
    """A run's fingerprint: its ``llm_fingerprint``, the probe's settings (None: no
    probe), the mudsim version and its code (``CodeIdentity.code``)."""
    return {"llm": llm["llm"], "models": llm["models"],
            "probe": dict(probe) if probe is not None else None, "mudsim": version,
            "code": code}  # fmt: skip


def llm_url(found: Mapping[str, Any]) -> str:
    """A fingerprint's endpoints as one cell (``http://gpu1:11434, http://gpu2:11434``)."""
    return ", ".join(str(e.get("url")) for e in found.get("llm") or [] if isinstance(e, dict))


def llm_models(found: Mapping[str, Any]) -> str:
    return ", ".join(str(m) for m in found.get("models") or [])


def _shown(part: str, value: Any) -> str:
    if value is None:
        return "none" if part == "probe" else "(not recorded)"
    if part == "llm" and isinstance(value, list):
        return llm_url({"llm": value}) or "(none)"
    if part == "models" and isinstance(value, list):
        return llm_models({"models": value}) or "(none)"
    if part == "digests" and isinstance(value, dict):
        return ", ".join(f"{m} {d}" for m, d in sorted(value.items())) or "(none)"
    if part == "probe" and isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "defaults"
    return str(value)


def differences(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> list[str]:
    """What changed from the fingerprint ``old`` (None: a run made before fingerprints
    were recorded) to ``new``, one phrase each: ``llm fake:look -> fake:say``."""
    if old is None:
        return ["made before mudsim recorded a run's LLM, probe and version"]
    names = {
        "llm": "llm",
        "models": "model",
        "digests": "model digest",
        "probe": "probe",
        "mudsim": "mudsim version",
        "code": "commit",
    }
    return [f"{names[part]} {_shown(part, old.get(part))} -> {_shown(part, new.get(part))}"
            for part in FINGERPRINT_PARTS if old.get(part) != new.get(part)]  # fmt: skip


def refusal(out: str, changed: Sequence[tuple[str, list[str]]]) -> str:
    """The one line that refuses to reuse ``changed`` (run key, its differences)."""
    phrases = list(dict.fromkeys(p for _key, found in changed for p in found))
    keys = [key for key, _found in changed]

    def first(items: Sequence[str]) -> str:
        more = len(items) - SHOWN_CHANGES
        return ", ".join(items[:SHOWN_CHANGES]) + (f" (and {more} more)" if more > 0 else "")

    runs = "1 finished run" if len(keys) == 1 else f"{len(keys)} finished runs"
    return (f"{runs} in {out} {'was' if len(keys) == 1 else 'were'} made otherwise than the "
            f"sweep file now says ({'; '.join(phrases[:SHOWN_CHANGES])}"
            f"{'; ...' if len(phrases) > SHOWN_CHANGES else ''}): {first(keys)}. Give "
            "--rerun-changed to run them again as the file says, or another --out")  # fmt: skip


def passed_environment(environ: Mapping[str, str], *, endpoints_given: bool) -> dict[str, str]:
    """What of ``environ`` a run sees: ``MUDSIM_LLM_URL`` (not when the sweep file names
    its ``endpoints``: they win) and ``MUDSIM_MODEL``."""
    passed = {name: environ[name] for name in PASSED_ENVIRONMENT if environ.get(name)}
    if endpoints_given:
        passed.pop("MUDSIM_LLM_URL", None)
    return passed


def run_fingerprints(
    sweep: Sweep, environ: Mapping[str, str], version: str, code: str = ""
) -> dict[str, dict[str, Any]]:
    """Run key -> its fingerprint, for every run of ``sweep`` (each distinct world and
    settings resolved once)."""
    passed = passed_environment(environ, endpoints_given=sweep.spec.endpoints is not None)
    probe = sweep.spec.probe.model_dump() if sweep.spec.probe is not None else None
    agents: dict[str, list[str | None]] = {}
    resolved: dict[str, dict[str, Any]] = {}
    found = {}
    for run in sweep.runs:
        marker = canonical_json([run.world, dict(run.settings)])
        if marker not in resolved:
            if run.world not in agents:
                world = parse_world(sweep.world_texts[run.world], source=run.world)
                agents[run.world] = [c.model for c in world.characters.values()
                                     if c.type == "agent"]  # fmt: skip
            options = split(run.settings)["run"]
            config = vault_settings(run.settings, sweep.endpoints).llm
            resolved[marker] = llm_fingerprint(options.get("llm") or sweep.spec.llm,
                                               options.get("model"), passed, config,
                                               agents[run.world])  # fmt: skip
        found[run.key] = fingerprint(resolved[marker], probe, version, code)
    return found
