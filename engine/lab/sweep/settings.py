"""What a sweep's setting is, and what it changes in a run (pure: no I/O).

A setting of a sweep file (``grid``, ``runs``) is one of:

- a **character setting** of the world file (``recent_window``, ``immediate_window``,
  ``think_interval``, ``occupation``, ``goal``, ``tags``, ``prioritize_recent``,
  ``profile``, ``description``, ``role``): given to every agent of the world, in a
  derived world file written into the run's folder (players keep their own);
- ``model``: the model of every call (``mudsim run --model``, which wins over the
  characters' and the profiles' models);
- ``llm``: the server of the run (``mudsim run --llm``: a URL, ``local`` or ``fake:...``);
- a **switch**, ``on`` or ``off``: ``knowledge`` (knowledge passes; off: none, so no
  handbook is written either), ``retrieval`` (what an agent brings to mind after its
  memories: off is the actor's ``knowledge_tokens: 0``) and ``handbook`` (off: the actor's
  ``handbook_tokens: 0``, so no prompt carries it, and ``handbook: rules``, so no model
  call is spent writing one nobody reads; the rules still write its files);
- a **vault setting**, ``section.key`` (``memory_compaction.consolidate_every``,
  ``llm.profiles.actor.options.num_ctx``): written into the run's ``config/*.md``, and
  checked as those files are (an unknown key is refused); the model options mudsim
  reads are also checked for range (``OPTION_RANGES``: a negative ``num_ctx`` is refused
  when the sweep is planned, not found when its runs fail).

Every value is checked and made canonical here (``on``/``off`` for a switch, the world
file's own types for a character setting), so two spellings of one value give one run key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import yaml
from pydantic import ValidationError

from engine.config import LLMConfig, Settings
from engine.errors import MudsimError
from engine.llm.connect import choose_llm
from engine.world.loader import parse_world
from engine.world.safe_yaml import load_yaml
from engine.world.schema import CharacterSpec

SWITCHES: Final = ("knowledge", "retrieval", "handbook")
RUN_OPTIONS: Final = ("model", "llm")
NOT_SWEPT: Final = frozenset({"name", "type", "location", "id", "aliases", "model"})
"""Character fields that say who and where a character is (``model`` is a run option)."""
CHARACTER_SETTINGS: Final = tuple(
    name for name in CharacterSpec.model_fields if name not in NOT_SWEPT
)
OPTION_RANGES: Final[dict[str, tuple[float, float | None, str]]] = {
    "num_ctx": (1, None, "a whole number of at least 1"),
    "num_predict": (-2, None, "a whole number of at least -2 (-1: no limit, -2: fill the context)"),
    "top_k": (0, None, "a whole number of at least 0"),
    "temperature": (0, None, "a number of at least 0"),
    "top_p": (0, 1, "a number from 0 to 1"),
    "min_p": (0, 1, "a number from 0 to 1"),
    "repeat_penalty": (0, None, "a number of at least 0"),
}
"""Model options mudsim reads: (lowest, highest or None, what is allowed). Their types
are checked by the vault's settings; their ranges here."""
ON: Final = "on"
OFF: Final = "off"


class SettingError(ValueError):
    """A setting's name or value is refused; ``str()`` says why, in one line."""


def kind_of(name: str) -> str:
    """``character``, ``run``, ``switch`` or ``vault``; an unknown name is refused."""
    if name in CHARACTER_SETTINGS:
        return "character"
    if name in RUN_OPTIONS:
        return "run"
    if name in SWITCHES:
        return "switch"
    if "." in name and all(part.strip() for part in name.split(".")):
        return "vault"
    raise SettingError(
        f"unknown setting {name!r} (check its spelling): a setting is a character setting "
        f"of the world file ({', '.join(CHARACTER_SETTINGS)}), model, llm, "
        f"{', '.join(SWITCHES)} (on/off), or a vault setting section.key "
        "(e.g. memory_compaction.consolidate_every)"
    )


def canonical(name: str, value: Any) -> Any:
    """``value`` checked for the setting ``name`` and in its canonical form."""
    kind = kind_of(name)
    if kind == "switch":
        return _switch(name, value)
    if kind == "character":
        return _character_value(name, value)
    if kind == "run":
        return _run_option(name, value)
    try:
        vault_settings({name: value})  # refused here when the vault's files would refuse it
    except SettingError as exc:
        raise SettingError(str(exc).removeprefix(f"{name}: ")) from exc
    return value


def _switch(name: str, value: Any) -> str:
    if value is True or value == ON:
        return ON
    if value is False or value == OFF:
        return OFF
    raise SettingError(f"{name} is on or off, not {value!r}")


def _character_value(name: str, value: Any) -> Any:
    probe = {
        "name": "Sweep",
        "type": "agent",
        "location": "here",
        "profile": "Someone.",
        name: value,
    }
    try:
        spec = CharacterSpec.model_validate(probe)
    except ValidationError as exc:
        raise SettingError(f"{name} cannot be {value!r}: {exc.errors()[0]['msg']}") from exc
    return spec.model_dump(mode="json")[name]


def _run_option(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SettingError(f"{name} is a non-empty text, not {value!r}")
    if name == "llm":
        try:
            choose_llm(value, {}, LLMConfig())
        except MudsimError as exc:
            raise SettingError(str(exc).removeprefix("--llm: ")) from exc
    return value.strip()


def split(settings: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The settings of one run by kind: ``character``, ``run``, ``switch``, ``vault``."""
    parts: dict[str, dict[str, Any]] = {"character": {}, "run": {}, "switch": {}, "vault": {}}
    for name, value in settings.items():
        parts[kind_of(name)][name] = value
    return parts


def vault_settings(
    settings: Mapping[str, Any], endpoints: list[dict[str, Any]] | None = None
) -> Settings:
    """The vault settings of a run: the defaults, its ``endpoints``, its switches, then
    its ``section.key`` settings; always recorded (the sweep reads the run's record)."""
    data = Settings().model_dump(mode="json")
    if endpoints is not None:
        data["llm"]["endpoints"] = endpoints
    actor = data["llm"]["profiles"]["actor"]
    for name, value in settings.items():
        if name == "knowledge":
            data["memory_compaction"]["knowledge"] = value == ON
        elif name == "retrieval" and value == OFF:
            actor["knowledge_tokens"] = 0
        elif name == "handbook" and value == OFF:
            actor["handbook_tokens"] = 0
            data["memory_compaction"]["handbook"] = "rules"
    for name, value in settings.items():
        if kind_of(name) == "vault":
            _put(data, name, value)
    if data.get("record", {}).get("record") is False:
        raise SettingError("record.record cannot be false: a sweep reads each run's record")
    try:
        made = Settings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        message = ("no such setting (check its spelling)" if first["type"] == "extra_forbidden"
                   else first["msg"])  # fmt: skip
        raise SettingError(f"{where}: {message}") from exc
    for role, profile in made.llm.profiles.items():
        check_options(f"llm.profiles.{role}.options", profile.options)
    return made


def check_options(where: str, options: Mapping[str, Any]) -> None:
    """Each model option of ``OPTION_RANGES`` in its range (a ``SettingError`` if not)."""
    for name, (low, high, allowed) in OPTION_RANGES.items():
        value = options.get(name)
        if not isinstance(value, int | float) or isinstance(value, bool):
            continue  # unset (a wrong type is refused by the vault's settings)
        if value < low or (high is not None and value > high):
            raise SettingError(f"{where}.{name}: {name} is {allowed}, not {value!r}")


def _put(data: dict[str, Any], dotted: str, value: Any) -> None:
    """Set ``data[a][b][c] = value`` for ``a.b.c``; a missing step is a new mapping (the
    model then refuses a key it does not know)."""
    *path, last = dotted.split(".")
    node = data
    for step in path:
        if step not in node:
            node[step] = {}
        child = node[step]
        if not isinstance(child, dict):
            raise SettingError(f"{dotted}: {step!r} is a value, not a section")
        node = child
    node[last] = value


class _NoAliases(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def derive_world(world_text: str, settings: Mapping[str, Any], *, source: str) -> str:
    """The world file ``world_text`` with each character setting of ``settings`` given to
    every agent, as YAML; checked as a world file (a ``WorldFileError`` naming
    ``source``). Without character settings the text is returned as it is."""
    character = split(settings)["character"]
    if not character:
        parse_world(world_text, source=source)
        return world_text
    data = load_yaml(world_text)
    if isinstance(data, dict) and isinstance(data.get("characters"), list):
        data["characters"] = [
            {**c, **character} if isinstance(c, dict) and c.get("type") == "agent" else c
            for c in data["characters"]
        ]
    text = yaml.dump(data, Dumper=_NoAliases, sort_keys=False, allow_unicode=True)
    parse_world(text, source=source)
    return text
