"""What each agent brings to mind, gathered from its files (``engine.memory.retrieval``
scores it): its knowledge-bank entries, its notes, its handbook's skills and its past
short-term summaries (the ``recent-*.md`` history: "past experiences") as items, in an
index kept per agent and changed item by item: when one of those sources changed (the
bank's and the notes' stamps, the summaries' and skills' folders), only that source is
read again and only the items that differ are updated (``Index.sync``). The files are
looked at once as each turn begins (``prepare``); the turn's prompts (a re-ask builds
one again) then use the index as it is, until the agent runs a command or the turn
ends. Other agents' banks ("related agents") are looked at about once a round
(``RECHECK_EVERY``).

Every turn's prompt gets a section chosen for the agent's situation within the actor
profile's ``knowledge_tokens`` (``section``), ``recall`` answers from the same scorer,
and the entries a prompt showed have their ``access_count`` and ``last_access``
counted, in memory, and written to the bank in batches (``flush``: every
``FLUSH_EVERY`` accesses of an agent, and when the simulation saves), never while a
knowledge pass of that agent is in flight (its commit would overwrite them).
"""

from __future__ import annotations

import logging
import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from engine.errors import LLMError, VaultError
from engine.llm.embedding import Embedder
from engine.memory.retrieval import (
    Chosen,
    Index,
    Item,
    ItemKind,
    Query,
    Selection,
    related_agents,
    render,
    situation_keywords,
)
from engine.sim.recollection_items import SOURCES, entry_item, gather_items
from engine.vault.knowledge_store import KnowledgeStore
from engine.world.clock import format_reading
from engine.world.model import Character

if TYPE_CHECKING:
    from engine.sim.simulation import Simulation

_log = logging.getLogger("mudsim")

FLUSH_EVERY: Final = 100
"""Accesses of one agent's entries kept in memory before they are written to its bank."""
SAID_TO_ME: Final = 3
OWN_COMMANDS: Final = 3
SCANNED: Final = 200
"""The newest memories searched for what was said and done (a backlog can be long)."""
TOPICS: Final = 16
"""What an agent's grammar offers ``recall`` at most."""
RECHECK_EVERY: Final = 8
"""Sections built between two looks at the other agents' banks (for "related agents"),
or as many as there are agents if more: about once a round."""
EMBED_BATCH: Final = 64
"""Items embedded before one turn at most (the rest before the next ones)."""
EMBEDDED_TOKENS: Final = 400
OTHER_TOKENS: Final = 2_000


@dataclass
class _Kept:
    """An agent's index and the version of each source it was last synced with."""

    index: Index = field(default_factory=Index)
    versions: dict[ItemKind, tuple[object, ...]] = field(default_factory=dict)
    checked: bool = False
    """Its files were looked at when the agent's turn began (``prepare``), and the turn
    is not over nor has it run a command since (``look_again``): the turn's prompts (a
    re-ask builds one again) use the index as it is, without a ``stat`` of each source."""


class Recollection:
    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self._indexes: dict[str, _Kept] = {}
        self._entries: dict[str, tuple[tuple[object, ...], Index]] = {}
        self._files: dict[str, tuple[str, str, str, str, str, str]] = {}
        self._built = 0
        """Sections built so far (another agent's bank is looked at every few)."""
        self._banks: list[tuple[str, str, Index]] | None = None
        """(id, name, index) of every agent's bank that has items, as last looked at
        (``_others``), or None: to be looked at again."""
        self._banks_at = 0
        self.embedder: Embedder | None = None
        """The embedding model (the ``embedder`` profile's), set when the LLM is chosen."""
        self._vectors: dict[str, list[float]] = {}
        """Item text -> its embedding."""
        self._situations: dict[str, list[float]] = {}
        """Character id -> the embedding of its situation at its last turn."""
        self._accesses: dict[str, dict[str, tuple[int, str]]] = defaultdict(dict)
        """Character id -> entry id -> (accesses not yet written, the last one's time)."""
        self._pending: dict[str, int] = defaultdict(int)

    # -- items -----------------------------------------------------------------------------

    def index(self, character: Character, *, look: bool = False) -> Index:
        """``character``'s items, indexed (only the sources that changed are read again,
        only the items that differ updated). The files are looked at unless they were at
        the start of its turn and it has run no command since; ``look``: in any case."""
        kept = self._indexes.get(character.id)
        if kept is None:
            kept = self._indexes[character.id] = _Kept()
        elif kept.checked and not look:
            return kept.index
        stale = self._stale(character, kept)
        for kind, version in stale.items():
            self._sync(
                kept, kind, version, SOURCES[kind](self.sim.vault, self.sim.world, character)
            )
        if stale:
            self._attach(kept.index)
        return kept.index

    def checked(self, character: Character) -> None:
        """``character``'s files were just looked at, as its turn begins (``prepare``)."""
        kept = self._indexes.get(character.id)
        if kept is not None:
            kept.checked = True

    async def refresh(self, character: Character) -> None:
        """Bring ``character``'s index up to date, whether or not its files were looked
        at lately: only the sources whose files changed are read again, only the items
        that differ updated (before its turn, and after a knowledge pass or an undo
        commits). The files are read here, on the event loop, not in a worker thread: a
        thread's timing would change the order in which turns and summaries interleave,
        and a replay must meet them in the recorded order."""
        self.index(character, look=True)

    def look_again(self, character: Character) -> None:
        """``character``'s files are looked at again the next time its index is wanted:
        it runs a command (which may write a note), or its turn is over (what is read
        between turns, the inspector's prompt, sees a person's edits at once)."""
        kept = self._indexes.get(character.id)
        if kept is not None:
            kept.checked = False

    def _stale(self, character: Character, kept: _Kept) -> dict[ItemKind, tuple[object, ...]]:
        """The sources of ``character``'s items whose files changed since its index last
        read them, with their new versions."""
        bank, summaries, skills, record, routes, clusters = map(_stamp, self._paths(character))
        notes = tuple(
            (n.title, n.updated, n.sim) for n in self.sim.vault.notes(character.folder).all()
        )
        role = (character.name, character.occupation)
        versions: dict[ItemKind, tuple[object, ...]] = {
            "entry": (bank, clusters, routes, *role), "note": (notes, *role),
            "skill": (skills, record, routes, *role),
            "past": (summaries, *role),
        }  # fmt: skip
        return {k: v for k, v in versions.items() if kept.versions.get(k) != v}

    @staticmethod
    def _sync(kept: _Kept, kind: ItemKind, version: tuple[object, ...], items: list[Item]) -> None:
        kept.index.sync(items, kinds=(kind,))
        kept.versions[kind] = version

    def _entries_index(self, character: Character) -> Index:
        """An agent's bank entries, indexed, for "related agents" (checked by the bank
        file's stamp alone: one ``stat``). A bank that does not read costs its agent its
        part in it, never another agent's turn."""
        cached = self._entries.get(character.id)
        bank_path = self._paths(character)[0]
        version = (_stamp(bank_path), character.occupation)
        if cached is not None and cached[0] == version:
            return cached[1]
        try:
            bank = KnowledgeStore(Path(bank_path).parent).load()
        except VaultError:
            bank = []
        index = cached[1] if cached is not None else Index()
        index.sync([entry_item(e, character) for e in bank])
        self._entries[character.id] = (version, index)
        return index

    def _others(self, character: Character) -> dict[str, Index]:
        """Every other agent's name -> its bank's index, for those whose bank has items
        (``_entries_index``). The banks are looked at again every ``RECHECK_EVERY``
        sections, or once a round when there are more characters: this runs for every
        agent a turn, and most banks change once a knowledge pass at most."""
        agents_now = self.sim.world.characters.values()
        if self._banks is None or self._built - self._banks_at >= max(
            RECHECK_EVERY, len(agents_now)
        ):
            agents = [c for c in agents_now if c.type == "agent"]
            banks = [(c.id, c.name, self._entries_index(c)) for c in agents]
            self._banks = [(id_, name, index) for id_, name, index in banks if index]
            self._banks_at = self._built
        return {name: index for id_, name, index in self._banks if id_ != character.id}

    def _paths(self, character: Character) -> tuple[str, str, str, str, str, str]:
        """The files whose stamps say an agent's items changed: its bank, its summaries'
        folder, its skills' folder, its handbook's record, memory_summary.md and MEMORY.md
        (the routing index: a person's edit counts; as strings, made once)."""
        found = self._files.get(character.id)
        if found is None:
            agent = self.sim.vault.agent_dir(character.folder)
            found = self._files[character.id] = (
                str(agent / "knowledge" / "long-term-memory.json"), str(agent / "summaries"),
                str(agent / "handbook" / "skills"), str(agent / "handbook" / "handbook.json"),
                str(agent / "handbook" / "memory_summary.md"), str(agent / "handbook" / "MEMORY.md"),
            )  # fmt: skip
        return found

    def items(self, character: Character) -> list[Item]:
        return gather_items(self.sim.vault, self.sim.world, character)

    # -- the situation ---------------------------------------------------------------------

    def query(self, character: Character, words: str | None = None) -> Query:
        """``character``'s situation as a query, or ``words`` (``recall``)."""
        now = self.sim.clock.reading()
        if words is not None:
            keywords = situation_keywords(words)
        else:
            keywords = situation_keywords(*situation_texts(self.sim, character))
        return Query(
            keywords, _hour(now), character.occupation, character.prioritize_recent, character.name
        )

    def select(self, character: Character, budget: int, words: str | None = None) -> Selection:
        """What ``character`` brings to mind now, within ``budget`` tokens (never the past
        summary the prompt shows already as its short-term summary); with ``words``,
        what fits them (as ``recall``) instead of the situation. With no item in its
        index nor in any other agent's bank there is nothing to score: the situation is
        not even made into a query."""
        own = self.index(character)
        others = self._others(character)
        if not own and not any(others.values()):
            return Selection()
        query = self.query(character, words)
        start = format_reading(self.sim.world.clock.start)
        rate = self.sim.token_rate
        profile = self.sim.settings.llm.profiles.get("actor")
        notes = profile.notes_tokens if profile is not None else 0
        recent = self.sim.minds[character.id].summaries.recent
        shown = [f"past:{recent.covers_from}-{recent.covers_to}"] if recent else []
        selection = own.select(
            query, budget, tokens=rate.tokens, start=start, caps={"note": notes} if notes else None,
            semantic=self._situations.get(character.id) if words is None else None,
            exclude=shown,
        )  # fmt: skip
        selection.related_agents.extend(related_agents(query, others))
        return selection

    def section(
        self, character: Character, *, scores: bool = False, count: bool = False,
        words: str | None = None,
    ) -> list[str]:  # fmt: skip
        """The prompt's lines after the memories (``knowledge_tokens``); ``count``: the
        entries shown count as accessed; ``words``: brought to mind for these words (the
        probe's ``full+query``), not the situation."""
        budget = self.budget()
        if budget <= 0:
            return []
        self._built += 1
        selection = self.select(character, budget, words)
        if count:
            self._accessed(character, selection.chosen)
        return render(selection, scores=scores)

    def budget(self) -> int:
        profile = self.sim.settings.llm.profiles.get("actor")
        tokens = profile.knowledge_tokens if profile is not None else None
        if tokens is None:
            return EMBEDDED_TOKENS if self.sim.embedded else OTHER_TOKENS
        return tokens

    def recall(self, character: Character, words: str, limit: int = 5) -> list[Chosen]:
        """The ``limit`` best items for ``words``, whatever their place (``recall``)."""
        query = self.query(character, words)
        if not query.keywords:
            return []
        index = self.index(character)
        start = format_reading(self.sim.world.clock.start)
        return index.best(query, limit, start=start)

    # -- embeddings ------------------------------------------------------------------------

    async def prepare(self, character: Character) -> None:
        """Before ``character``'s turn, with an embedding model: embed its items that have
        no vector yet (``EMBED_BATCH`` a turn at most) and its situation, so the turn's
        prompt can add semantic similarity. A failed call is logged and only costs the
        semantic score. First its index is brought up to date (``refresh``)."""
        await self.refresh(character)
        self.checked(character)
        if self.embedder is None:
            return
        index = self.index(character)
        missing = list(dict.fromkeys(i.text for i in index.items if i.text not in self._vectors))
        situation = " ".join(self.query(character).keywords)
        try:
            if missing[:EMBED_BATCH]:
                batch = missing[:EMBED_BATCH]
                for text, vector in zip(batch, await self.embedder.embed(batch), strict=True):
                    self._vectors[text] = vector
            if situation:
                (self._situations[character.id],) = await self.embedder.embed([situation])
        except (LLMError, ValueError) as exc:
            _log.warning("no embeddings for %s's turn: %s", character.name, exc)
            return
        self._attach(index)

    def _attach(self, index: Index) -> None:
        """Give ``index`` the vectors known for its items (when there are new ones)."""
        known = [self._vectors.get(i.text) for i in index.items]
        if sum(v is not None for v in known) > index.embedded:
            index.set_vectors(known)

    def topics(self, character: Character, limit: int = TOPICS) -> tuple[str, ...]:
        """What ``character`` can ``recall`` by name (its grammar offers these): its
        notes' titles, its entries' first tags and its skills' names, the most recent
        first, at most ``limit``."""
        items = sorted(self.index(character).items, key=lambda i: i.sim or "", reverse=True)
        found = dict.fromkeys(
            i.topic.strip() for i in items if i.kind != "past" and i.topic.strip()
        )
        return tuple(found)[:limit]

    # -- accesses --------------------------------------------------------------------------

    def _accessed(self, character: Character, chosen: list[Chosen]) -> None:
        now = self.sim.clock.reading()
        counts = self._accesses[character.id]
        for c in chosen:
            if c.item.kind == "entry":
                entry_id = c.item.key.removeprefix("entry:")
                counts[entry_id] = (counts.get(entry_id, (0, now))[0] + 1, now)
                self._pending[character.id] += 1
        if self._pending[character.id] >= FLUSH_EVERY:
            self.flush(character)

    def flush(self, character: Character | None = None) -> None:
        """Write the counted accesses to the banks (of ``character``, or every one);
        not while that agent's knowledge pass is in flight, nor on a bank that does not
        read (they wait for the next flush)."""
        targets = [character] if character else list(self.sim.world.characters.values())
        for who in targets:
            counts = self._accesses.get(who.id)
            if not counts or who.id in self.sim.knowledge.workers:
                continue
            store = self.sim.knowledge.store(self.sim.minds[who.id])
            try:
                store.record_access(counts)
            except VaultError as exc:
                self.sim.warn(f"the accesses of {who.name}'s knowledge were not written: {exc}")
                continue
            del self._accesses[who.id]
            self._pending[who.id] = 0


def situation_texts(sim: Simulation, character: Character) -> list[str]:
    """What the situation's keywords come from, most telling first: the room's name and
    description, who is here, what was last said to the character, its own last
    commands, its goal, its occupation and tags."""
    room = sim.world.rooms[character.location]
    others = [c.name for c in sim.world.characters_in(room.id, besides=character)]
    things = [t.name for t in sim.world.things_in(room.id)]
    said: list[str] = []
    commands: list[str] = []
    tail = sim.minds[character.id].tail
    for memory in reversed(tail[-SCANNED:]):
        if memory.speaker and memory.speaker != character.name and len(said) < SAID_TO_ME:
            said.append(memory.text)
        if memory.command and len(commands) < OWN_COMMANDS:
            commands.append(memory.command)
        if len(said) >= SAID_TO_ME and len(commands) >= OWN_COMMANDS:
            break
    return [room.name, *others, room.description, *things, *said, *commands,
            character.goal, character.occupation, *character.tags]  # fmt: skip


def _hour(reading: str) -> str:
    """A world-clock reading to the hour: the section stays the same within an hour of
    world time while nothing else changes."""
    return reading[:13] + ":00" if len(reading) >= 16 and reading[13] == ":" else reading


def _stamp(path: str) -> tuple[int, int]:
    try:
        info = os.stat(path)
    except OSError:
        return (0, 0)
    return (info.st_mtime_ns, info.st_size)
