"""What a fork changes at its branch point, and what a replay of the fork changes again
at the same place (``engine.lab.fork`` goes live there; ``engine.lab.replay`` follows a
fork's record through it).

The change is named in the fork's ``run.json`` (``Branch.meta``): the ``--set`` items,
the ``--model``, and whether a window's ``--set`` applies to characters whose world file
sets their own (``--override-characters``). Applying it is the same code in both, so a
fork's record replays byte for byte.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import ValidationError

from engine.config import Settings
from engine.errors import UsageError
from engine.memory.secrets import redact, redact_value
from engine.sim.scheduler import Scheduler
from engine.sim.simulation import Simulation

WINDOWS = ("immediate_window", "recent_window")
"""The ``memory_compaction`` keys a character of the world file may set for itself."""
OVERRIDE_FLAG = "--override-characters"


@dataclass(frozen=True)
class Branch:
    """A fork's change at its branch point."""

    at: int
    """The committed turn it branches after."""
    sets: tuple[str, ...] = ()
    model: str | None = None
    override_characters: bool = False
    """A ``--set`` of a window applies to characters that set their own too."""

    def meta(self) -> dict[str, Any]:
        return {"branch_at": self.at, "sets": list(self.sets), "model": self.model,
                "override_characters": self.override_characters}  # fmt: skip

    @classmethod
    def of(cls, meta: Mapping[str, Any]) -> Branch:
        """The branch a fork's ``run.json`` names."""
        model = meta.get("model")
        return cls(int(meta.get("branch_at") or 0), tuple(str(s) for s in meta.get("sets") or ()),
                   model if isinstance(model, str) else None,
                   meta.get("override_characters") is True)  # fmt: skip


def settings_with(settings: Settings, sets: tuple[str, ...]) -> Settings:
    """``settings`` with each ``section.key=value`` of ``sets``, checked as the config
    file's would be (a bad one is a ``UsageError``)."""
    data = settings.model_dump(mode="json")
    for item in sets:
        path, sep, raw = item.partition("=")
        parts = path.strip().split(".")
        if not sep or len(parts) != 2 or parts[0] not in data or parts[1] not in data[parts[0]]:
            raise UsageError(f"--set {item!r}: expected section.key=value, e.g. "
                             "memory_compaction.recent_window=32")  # fmt: skip
        data[parts[0]][parts[1]] = yaml.safe_load(raw) if raw.strip() else raw
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise UsageError(f"--set {where}: {first['msg']}") from exc


def set_windows(sets: tuple[str, ...]) -> list[str]:
    """The window keys (``WINDOWS``) that ``sets`` sets, in order."""
    found: list[str] = []
    for item in sets:
        section, _, key = item.partition("=")[0].strip().partition(".")
        if section == "memory_compaction" and key in WINDOWS and key not in found:
            found.append(key)
    return found


def kept_windows(sim: Simulation, sets: tuple[str, ...]) -> dict[str, dict[str, int]]:
    """Window key -> character name -> its own value from the world file, for each window
    ``sets`` sets that some characters set themselves (they keep it unless overridden)."""
    found: dict[str, dict[str, int]] = {}
    for key in set_windows(sets):
        own = {c.name: value for c in sim.world.characters.values()
               if c.type == "agent" and (value := getattr(c, key)) is not None}  # fmt: skip
        if own:
            found[key] = own
    return found


def kept_notice(kept: Mapping[str, Mapping[str, int]], settings: Settings) -> str:
    """One line saying which characters keep their own window despite ``--set``."""
    parts = []
    for key, own in kept.items():
        names = ", ".join(f"{name} ({value})" for name, value in own.items())
        parts.append(f"--set memory_compaction.{key}={getattr(settings.memory_compaction, key)} "
                     f"does not apply to {names}: their world file sets their own")  # fmt: skip
    return "; ".join(parts) + f" ({OVERRIDE_FLAG} applies it to them too)"


def apply_settings(sim: Simulation, settings: Settings) -> None:
    """A fork's settings from its branch point on: the memory windows, how often
    knowledge passes run, dreams, the handbook's method, training capture, and whatever
    is read as it is used (the retrieval budget, the profiles' options)."""
    sim.settings = settings
    sim.actor_options = settings.llm.options_for("actor")
    memory = settings.memory_compaction
    for mind in sim.minds.values():
        mind.windows = sim.windows_for(mind.character)
    sim.knowledge.every = memory.consolidate_every
    sim.knowledge.enabled = memory.knowledge
    sim.dreams.interval = memory.dream_interval
    if sim.knowledge.handbook is not None:
        sim.knowledge.handbook.method = memory.handbook
    if sim.recorder is not None:
        sim.recorder.training = settings.record.training


def go_live(sim: Simulation, scheduler: Scheduler | None, branch: Branch,
            settings: Settings) -> None:  # fmt: skip
    """Make the fork's change (``settings``: the parent's with ``branch.sets``): the
    settings, the windows of characters that set their own (with ``override_characters``),
    the model. The caller writes the ``branch`` event first."""
    if branch.override_characters:
        for key in set_windows(branch.sets):
            value = getattr(settings.memory_compaction, key)
            for character in sim.world.characters.values():
                if getattr(character, key) is not None:
                    setattr(character, key, value)
    apply_settings(sim, settings)
    if branch.model is not None and scheduler is not None:
        for thinker in scheduler.thinkers.values():
            thinker.model = branch.model
        sim.compactor.models = dict.fromkeys(sim.compactor.models, branch.model)
        sim.knowledge.models = dict.fromkeys(sim.knowledge.models, branch.model)
    if sim.recorder is not None:
        sim.recorder.prices = prices(settings)


def prices(settings: Settings) -> dict[str, tuple[float, float]]:
    """Endpoint URL (as the record names it) -> price per million tokens in, out."""
    return {redact(e.url): (e.price_in, e.price_out) for e in settings.llm.endpoints}


def settings_meta(settings: Settings) -> dict[str, Any]:
    """The settings as ``run.json`` holds them (secrets redacted)."""
    value = redact_value(settings.model_dump(mode="json"))
    assert isinstance(value, dict)
    return value
