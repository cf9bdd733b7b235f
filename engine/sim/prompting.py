"""Gathering what an agent's prompt shows from the running simulation.

The shape itself is ``engine.agents.prompt`` (pure); this module only reads the
world, the agent's memory and notes, and fits the prompt to the actor profile's
``num_ctx``. A turn's prompt (``turn_prompt``) records on the agent's memory how many
memories it left out to fit, for ``@memory-status``; ``build_prompt`` only shows.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from engine.agents.command_grammar import CommandGrammar, RoomView, command_shapes, help_topics
from engine.agents.prompt import FittedPrompt, PromptParts, char_budget, fit_prompt
from engine.commands.registry import Command
from engine.llm.request import Constraint
from engine.memory.waterfall import verbatim_count
from engine.vault.notes import Note
from engine.world.model import Character

if TYPE_CHECKING:
    from engine.sim.simulation import Simulation

NOTES_SHOWN = 3
_STOPWORDS = frozenset({"the", "and", "for", "with", "from", "into"})


def relevant_notes(
    notes: Sequence[Note], terms: Iterable[str], limit: int = NOTES_SHOWN
) -> list[Note]:
    """Notes scored by how often the terms occur in them (best first, ties: newest);
    when fewer than ``limit`` match, the most recently updated note is added once."""
    words = {t.lower() for t in terms if len(t) > 2 and t.lower() not in _STOPWORDS}
    newest_first = sorted(notes, key=lambda note: note.updated, reverse=True)

    def score(note: Note) -> int:
        text = (note.title + " " + note.body).lower()
        return sum(text.count(word) for word in words)

    scored = sorted(((score(n), n) for n in newest_first), key=lambda pair: -pair[0])
    chosen = [note for points, note in scored if points > 0][:limit]
    if len(chosen) < limit:
        chosen += [note for note in newest_first if note not in chosen][:1]
    return chosen


def prompt_parts(sim: Simulation, character: Character) -> PromptParts:
    world = sim.world
    room = world.rooms[character.location]
    others = [c.name for c in world.characters_in(room.id, besides=character)]
    mind = sim.minds[character.id]
    shown = verbatim_count(mind.count, mind.boundary, mind.windows)
    summaries = mind.summaries
    notes = sim.vault.notes(character.folder).all()
    terms = [*re.findall(r"[A-Za-z0-9']+", room.name), *others]
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
        notes=[(note.title, note.body) for note in relevant_notes(notes, terms)],
    )


def fitted_prompt(sim: Simulation, character: Character) -> FittedPrompt:
    """The exact prompt ``character`` would be sent now, fitted to the actor's ``num_ctx``."""
    options = sim.actor_options
    budget = char_budget(int(options["num_ctx"]), int(options.get("num_predict", 0)))
    return fit_prompt(prompt_parts(sim, character), budget)


def build_prompt(sim: Simulation, character: Character) -> str:
    """The exact prompt ``character`` would be sent now (nothing recorded)."""
    return fitted_prompt(sim, character).text


def turn_prompt(sim: Simulation, character: Character) -> str:
    """The prompt sent for ``character``'s turn; its memory records what it left out."""
    fitted = fitted_prompt(sim, character)
    sim.minds[character.id].hidden_in_last_prompt = fitted.hidden
    return fitted.text


def command_grammar(sim: Simulation, character: Character) -> CommandGrammar:
    """What ``character`` can validly type where it stands now."""
    world = sim.world
    room = world.rooms[character.location]
    here = [t.name for t in world.things_in(room.id)]
    here += [c.name for c in world.characters_in(room.id, besides=character)]
    commands = tuple(sim.registry.allowed(character.role))
    view = RoomView(exits=tuple(room.exits), things=tuple(here), topics=help_topics(commands))
    return _grammar(commands, view)


def command_constraint(sim: Simulation, character: Character) -> Constraint:
    return _constraint(command_grammar(sim, character))


@lru_cache(maxsize=256)
def _grammar(commands: tuple[Command, ...], view: RoomView) -> CommandGrammar:
    return CommandGrammar(command_shapes(commands, view))


@lru_cache(maxsize=256)
def _constraint(grammar: CommandGrammar) -> Constraint:
    return Constraint(gbnf=grammar.gbnf(), json_schema=grammar.json_schema())
