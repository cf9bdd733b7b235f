"""Gathering what an agent's prompt shows from the running simulation.

The shape itself is ``engine.agents.prompt`` (pure); this module only reads the
world, the agent's memory and notes, and fits the prompt to the actor profile's
``num_ctx`` less its ``num_predict``, in tokens as the agents' model counts them
(``Simulation.token_counter``: the embedded model's tokenizer, or the estimate for a
server). A turn's prompt (``turn_prompt``) records on the agent's memory what it left
out to fit (memories, parts cut short or dropped), for ``@memory-status``;
``build_prompt`` only shows.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

from engine.agents.command_grammar import CommandGrammar, RoomView, command_shapes, help_topics
from engine.agents.examples import Situation, example_turns
from engine.agents.prompt import FittedPrompt, PromptParts, fit_prompt
from engine.agents.reply import RECENT_COMMANDS, repeat_key
from engine.commands.registry import Command
from engine.config import RoleProfile, Settings
from engine.memory.constraint import Constraint
from engine.memory.handbook import prompt_excerpt
from engine.memory.tokens import ESTIMATE, TokenCounter, chars_per_token, prompt_room
from engine.memory.waterfall import verbatim_count
from engine.world.model import Character

if TYPE_CHECKING:
    from engine.agents.memory import MemoryStream
    from engine.sim.simulation import Simulation

CHARS_PER_TOKEN = 3.5
"""How the actor profile's ``summary_tokens`` becomes a summary's characters (the
compactor's limit; the prompt itself is fitted in tokens)."""


TURN_REPLY = 64
"""The reply a turn's prompt leaves room for when the actor's ``num_predict`` sets no
limit (a command is short; the embedded model's grammar bounds it)."""
SUMMARY_SHARE = 4
"""A summary takes at most this part of the actor's context (less its reply), so the two
summaries, shown whole, leave the memories and the situation room."""


def summary_chars(settings: Settings, counter: TokenCounter = ESTIMATE) -> int | None:
    """The most characters a summary may have: the actor profile's ``summary_tokens``
    (0: no limit of its own), and at most a ``SUMMARY_SHARE``-th of the turn prompt's
    room, in characters as ``counter`` (the one turn prompts are fitted with) counts a
    summary's kind of text. The prompt cuts a summary longer than that share
    (``engine.agents.prompt_fit``), so the compactor keeps them within this
    (``engine.agents.summary_steps``) and the prompt shows them whole."""
    profile = settings.llm.profiles.get("actor") or RoleProfile()
    room = prompt_room(settings.llm.options_for("actor"), default_reply=TURN_REPLY)
    limits = [profile.summary_tokens * CHARS_PER_TOKEN] if profile.summary_tokens else []
    if room is not None:
        limits.append(room // SUMMARY_SHARE * chars_per_token(counter))
    return int(min(limits)) if limits else None


def prompt_parts(
    sim: Simulation, character: Character, mind: MemoryStream | None = None,
    *, scores: bool = False, count: bool = False,
) -> PromptParts:  # fmt: skip
    """What ``character``'s prompt shows now; ``mind`` in place of its memory stream
    (a view of it after a commit: prompt warming); ``scores``: retrieval's scores beside
    what it brought to mind (not for a model); ``count``: the entries it shows count as
    accessed (a turn's prompt)."""
    world = sim.world
    room = world.rooms[character.location]
    present = world.characters_in(room.id, besides=character)
    others = [world.seen_name(c) for c in present]
    awake = [c.name for c in present if c.id not in world.asleep]
    mind = mind or sim.minds[character.id]
    shown = verbatim_count(mind.count, mind.boundary, mind.windows)
    summaries = mind.summaries
    profile = sim.settings.llm.profiles.get("actor") or RoleProfile()
    handbook_tokens = profile.handbook_tokens
    handbook = sim.vault.handbook(character.folder).summary_text() if handbook_tokens else None
    things = [t.name for t in world.things_in(room.id)]
    situation = Situation(room.name, list(room.exits), things, awake,
                          frozenset(recent_commands(sim, character, RECENT_COMMANDS)))  # fmt: skip
    return PromptParts(
        name=character.name,
        profile=character.profile,
        room_name=room.name,
        room_description=room.description,
        exits=list(room.exits),
        also_here=others,
        memories=[memory.text for memory in mind.tail[len(mind.tail) - shown :]],
        recent_summary=summaries.recent.text if summaries.recent else "",
        longterm_summary=summaries.longterm.text if summaries.longterm else "",
        backlog=len(mind.tail) - shown,
        knowledge=sim.recollection.section(character, scores=scores, count=count),
        examples=example_turns(situation, mind.count),
        handbook=prompt_excerpt(
            handbook, handbook_tokens, own=character.profile, counter=sim.token_counter
        )
        if handbook
        else "",
    )


def fitted_prompt(
    sim: Simulation, character: Character, mind: MemoryStream | None = None,
    *, scores: bool = False, count: bool = False,
) -> FittedPrompt:  # fmt: skip
    """The exact prompt ``character`` would be sent now, fitted to the actor's ``num_ctx``
    less its ``num_predict`` (``prompt_room``), counted as its model counts."""
    parts = prompt_parts(sim, character, mind, scores=scores, count=count)
    room = prompt_room(sim.actor_options, default_reply=TURN_REPLY)
    return fit_prompt(parts, room, sim.token_counter)


def build_prompt(
    sim: Simulation, character: Character, mind: MemoryStream | None = None,
    *, scores: bool = False,
) -> str:  # fmt: skip
    """The exact prompt ``character`` would be sent now (nothing recorded); ``scores``:
    with retrieval's scores beside what it brought to mind (for people, not models)."""
    return fitted_prompt(sim, character, mind, scores=scores).text


def turn_prompt(sim: Simulation, character: Character) -> str:
    """The prompt sent for ``character``'s turn; its memory records what it left out, and
    the knowledge entries it shows count as accessed."""
    fitted = fitted_prompt(sim, character, count=True)
    mind = sim.minds[character.id]
    mind.hidden_in_last_prompt = fitted.hidden
    mind.cut_in_last_prompt, mind.dropped_from_last_prompt = fitted.cut, fitted.dropped
    return fitted.text


NOTE_REST = 8
"""An agent writes at most one note in this many commands."""
THINK_REST = 2
"""... and thinks at most once in this many."""
NOT_FOR_AGENTS = frozenset({"help", "time"})
"""Left out of an agent's grammar: the prompt already lists the commands, and looking
at the clock moves nothing in the story."""
_TITLE_WORD = re.compile(r"[^\W\d_]{3,}")
_TITLE_STOPWORDS = frozenset(
    {"the", "and", "for", "with", "from", "into", "some", "this", "that", "there", "here",
     "your", "its"}
)  # fmt: skip


def recent_commands(sim: Simulation, character: Character, count: int) -> list[str]:
    """The repeat keys of the character's last ``count`` commands, oldest first."""
    keys: list[str] = []
    if count <= 0:
        return keys
    for memory in reversed(sim.minds[character.id].tail):
        if memory.command:
            keys.append(repeat_key(memory.command))
            if len(keys) == count:
                break
    return keys[::-1]


def situation_words(texts: Iterable[str], limit: int = 32) -> tuple[str, ...]:
    """Distinct words of three letters or more from ``texts``, in order, for note titles."""
    words = dict.fromkeys(
        word
        for text in texts
        for word in _TITLE_WORD.findall(text)
        if word.lower() not in _TITLE_STOPWORDS
    )
    return tuple(words)[:limit]


def command_grammar(sim: Simulation, character: Character) -> CommandGrammar:
    """What ``character`` can validly type where it stands now.

    Its last ``RECENT_COMMANDS`` commands are not offered again where they are names to choose
    (``go east``, ``look``), ``note`` and ``think`` rest after use, ``help`` is left out
    (and ``recall`` while the agent has no notes),
    note titles are words of the situation, and no ``| reason`` is written."""
    world = sim.world
    room = world.rooms[character.location]
    things = [t.name for t in world.things_in(room.id)]
    people = [c.name for c in world.characters_in(room.id, besides=character)]
    commands = tuple(sim.registry.allowed(character.role))
    recent = recent_commands(sim, character, NOTE_REST)
    rest = set(NOT_FOR_AGENTS)
    memories = sim.recollection.topics(character)
    if not memories:
        rest.add("recall")  # nothing it could name to recall yet: it could only fail
    if not sim.dreams.can_dream(sim.minds[character.id]):
        rest.add("dream")  # it dreamt lately, or is dreaming
    if any(key.split(" ", 1)[0] == "note" for key in recent):
        rest.add("note")
    if any(key.split(" ", 1)[0] == "think" for key in recent[-THINK_REST:]):
        rest.add("think")
    view = RoomView(
        exits=tuple(room.exits),
        things=(*things, *people),
        topics=help_topics(commands),
        avoid=frozenset(recent[-RECENT_COMMANDS:]),
        rest=frozenset(rest),
        title_words=situation_words([*people, room.name, *things, *room.exits, room.description]),
        memories=memories,
    )
    return _grammar(commands, view)


def command_constraint(sim: Simulation, character: Character) -> Constraint:
    return _constraint(command_grammar(sim, character))


@lru_cache(maxsize=256)
def _grammar(commands: tuple[Command, ...], view: RoomView) -> CommandGrammar:
    return CommandGrammar(command_shapes(commands, view), reason=False)


@lru_cache(maxsize=256)
def _constraint(grammar: CommandGrammar) -> Constraint:
    return Constraint(gbnf=grammar.gbnf(), json_schema=grammar.json_schema())
