"""Settings read from the vault's ``config/*.md`` front matter (pydantic models).

Each file's front matter holds the settings and its body explains them; a new vault
gets the defaults written out. Unknown keys are errors, so a typo is caught.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

DEFAULT_MODEL = "gemma3:4b"
DEFAULT_LLM_URL = "http://localhost:11434"


class _Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class EndpointConfig(_Settings):
    """One inference server: ``{url: http://gpu1:11434, kind: ollama, slots: 2}``."""

    url: str
    kind: Literal["ollama", "openai", "local"] = "ollama"
    model: str | None = None
    slots: int = Field(default=1, ge=1)
    """Requests this server runs at once (Ollama's OLLAMA_NUM_PARALLEL)."""
    price_in: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    """Money per million prompt tokens (``mudsim cost`` turns tokens into money)."""
    price_out: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    """Money per million completion tokens."""


_OPTION_TYPES: dict[str, tuple[type, ...]] = {
    "stop": (str, list),
    "num_ctx": (int,),
    "num_predict": (int,),
    "seed": (int,),
    "top_k": (int,),
    "temperature": (int, float),
    "top_p": (int, float),
    "min_p": (int, float),
    "repeat_penalty": (int, float),
}
"""Options mudsim itself reads, and the types they must have (others pass through)."""


class RoleProfile(_Settings):
    model: str | None = None
    options: dict[str, Any] = {}
    constrain: bool | None = None
    """Actor only: decode only valid commands (a grammar for the embedded model, Ollama's
    ``format`` with a JSON schema). Unset: on for the embedded model and for a model an
    Ollama server reports as under a billion parameters, off otherwise."""
    notes_tokens: int = Field(default=150, ge=0)
    """Actor only: the most tokens of ``knowledge_tokens`` the relevant notes may take
    (0: no limit of their own)."""
    summary_tokens: int = Field(default=300, ge=0)
    """Actor only: the most tokens each of the two summaries may take in the prompt
    (the newest part is kept; 0: no limit but the context)."""
    handbook_tokens: int = Field(default=300, ge=0)
    """Actor only: the most tokens the prompt gives the handbook's profile and first
    tips (0: no handbook in the prompt)."""
    knowledge_tokens: int | None = Field(default=None, ge=0)
    """Actor only: the most tokens a turn's prompt gives what the agent brings to mind
    after its memories (prior knowledge, relevant notes, past experiences; 0: none).
    Unset: 400 for the embedded model, 2,000 otherwise."""

    @field_validator("options")
    @classmethod
    def _known_options_have_their_types(cls, options: dict[str, Any]) -> dict[str, Any]:
        for name, types in _OPTION_TYPES.items():
            value = options.get(name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, types):
                raise ValueError(f"options.{name} cannot be {value!r}")
            if isinstance(value, list) and not all(isinstance(s, str) for s in value):
                raise ValueError(f"options.stop must be a text or a list of texts, not {value!r}")
        return options


RoleName = Literal["actor", "summarizer", "consolidator", "embedder"]
"""``embedder``: only its ``model`` is read; set, retrieval adds a semantic score."""


def _default_profiles() -> dict[RoleName, RoleProfile]:
    return {
        "actor": RoleProfile(
            options={"temperature": 0.9, "num_predict": 64, "num_ctx": 8192, "stop": ["\n"]}
        ),
        "summarizer": RoleProfile(
            options={"temperature": 0.5, "num_predict": 400, "num_ctx": 8192, "stop": ["\n\n"]}
        ),
        "consolidator": RoleProfile(
            options={"temperature": 0.3, "num_predict": 1200, "num_ctx": 8192}
        ),
    }


class LLMConfig(_Settings):
    endpoints: list[EndpointConfig] = []
    profiles: dict[RoleName, RoleProfile] = Field(default_factory=_default_profiles)
    bypass_limit: int = Field(default=4, ge=1)
    """Turn calls a waiting summary (or consolidation) lets go first before it goes first."""
    timeout: float = Field(default=300.0, gt=0, allow_inf_nan=False)
    """Seconds one attempt of an LLM call may take in all (then it is retried)."""

    def options_for(self, role: RoleName) -> dict[str, Any]:
        """The role's options over the defaults, so ``num_ctx`` and ``num_predict`` are
        always sent; an actor always stops at a newline (its reply is one command)."""
        options = {**_default_profiles()[role].options}
        profile = self.profiles.get(role)
        if profile is not None:
            options.update(profile.options)
        if role == "actor":
            stop = options.get("stop") or []
            stop = [stop] if isinstance(stop, str) else list(stop)
            options["stop"] = stop if "\n" in stop else [*stop, "\n"]
        return options


class MemoryCompactionConfig(_Settings):
    immediate_window: int = Field(default=64, ge=1)
    recent_window: int = Field(default=64, ge=1)
    consolidate_every: int = Field(default=256, ge=1)
    """Memories between an agent's automatic knowledge passes."""
    knowledge: bool = True
    """Run knowledge passes (False: none is started, automatically or by ``@consolidate``,
    so the bank and the handbook stay as they are)."""
    knowledge_context: int | None = Field(default=None, ge=1)
    """The consolidating model's window in tokens, for the bank's capacity tier (unset:
    the consolidator profile's ``num_ctx``)."""
    dream_interval: int = Field(default=1440, ge=0)
    """Minutes of world time an agent waits between two dreams (0: no wait)."""
    handbook: Literal["llm", "rules", "auto"] = "auto"
    """Who writes the handbook after a knowledge pass: the consolidator (``llm``), the
    rules (no model), or ``auto``: the rules when the agents think with the embedded
    model, the consolidator otherwise."""
    players: Literal["extractive", "llm"] | None = None
    """How players' summaries are made: ``llm`` by the summarizer (as agents'), or
    ``extractive`` at once with no model call. Unset: extractive in a served world
    (``mudsim serve``: connected players cost no model calls), by the model elsewhere."""
    fiction_secrets: bool = False
    """Keep the secrets a story tells in prose ("the code to the safe is 4512", "my PIN
    is 7731") in what a knowledge pass reads and in the bank and handbook it writes
    (False: they are redacted). Credential shapes (API keys, tokens, private keys, JWTs,
    ``password=...``) are redacted whatever this says."""


class AIDefaultsConfig(_Settings):
    think_interval: float = Field(default=6.0, gt=0, allow_inf_nan=False)


class LimitsConfig(_Settings):
    max_command_chars: int = Field(default=4_000, ge=1)
    """A command line longer than this is refused, and nothing of it is remembered."""
    max_note_bytes: int = Field(default=65_536, ge=1)
    """A note that would grow past this (UTF-8 bytes) is refused."""


class RecordConfig(_Settings):
    record: bool = True
    """Keep every run's record in ``vault/runs/`` (calls, events, draws, its start and end)."""
    record_prompts: bool = True
    """Keep the prompts' text in the calls tape (False: metadata only; no exact replay
    check of prompts)."""
    training: bool = True
    """Capture each agent turn as a training pair (``@training-toggle`` for this run)."""


class Settings(_Settings):
    llm: LLMConfig = LLMConfig()
    memory_compaction: MemoryCompactionConfig = MemoryCompactionConfig()
    ai_defaults: AIDefaultsConfig = AIDefaultsConfig()
    limits: LimitsConfig = LimitsConfig()
    record: RecordConfig = RecordConfig()


def embedder_model(settings: Settings) -> str | None:
    """The ``embedder`` profile's model: retrieval then adds a semantic score."""
    profile = settings.llm.profiles.get("embedder")
    return profile.model if profile is not None else None
