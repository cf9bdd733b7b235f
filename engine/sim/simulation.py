"""The running world: world + vault + every character's memory, and the one path by
which players and agents act (``execute``).

A command's events reach every other character in the room (observers remember them,
except ambient ones); the caller remembers the command's narrative result, one memory
per command. Every memory and event carries the world clock's reading (``sim``), and
speech its speaker's name. ``Simulation`` implements the commands' context protocol.

``Simulation`` holds the state and is the one API; its work lives in modules of its own,
functions that take the simulation (its methods of the same names call them):

- ``engine.sim.acting``: the command execution path (``execute``), events delivered to
  the room (``deliver``), memories recorded;
- ``engine.sim.memory_work``: compaction, knowledge passes, handbooks and dreams (made,
  started, settled, wound down, cut, left at a stop), ``@memory-status``;
- ``engine.sim.run_record``: the run's record (``begin_record``, ``end_record``,
  ``save_now``, ``checkpoint``, ``backoff``, the turns and LLM calls it records);
- ``engine.sim.vault_session``: opening the vault (``open``), saving, closing it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.agents.compactor import log_error
from engine.agents.memory import MemoryStream
from engine.agents.supervisor import Supervisor
from engine.agents.thinker import Generator, Thinker, Turn
from engine.commands import Registry, Result, default_registry
from engine.commands.context import Doorkeeper
from engine.commands.helpers import join_names
from engine.config import Settings
from engine.errors import MudsimError, UnknownCharacterError
from engine.llm.dispatcher import Dispatcher
from engine.memory.handbook_rules import Agent
from engine.memory.retrieval import TokenRate
from engine.memory.status import MemoryStatus
from engine.memory.tokens import TokenCounter, counter_of
from engine.memory.waterfall import Windows
from engine.sim import acting, memory_work, run_record, vault_session
from engine.sim.chronicle import Chronicle
from engine.sim.memory_gate import MemoryGate
from engine.sim.recollection import Recollection
from engine.sim.recorder import Cost, RunRecorder
from engine.sim.world_apply import note_on_stderr
from engine.vault.journal import EVERY_100_MS
from engine.vault.lock import VaultLock
from engine.vault.vault import Vault
from engine.vault.world_store import save_clock, warn_on_stderr
from engine.world.clock import WorldClock
from engine.world.events import Event, EventKind
from engine.world.model import Character, Role, character_fields
from engine.world.world import World

Listener = Callable[[Event], None]

SAVED_AT_ONCE = acting.SAVED_AT_ONCE
"""``engine.sim.acting.SAVED_AT_ONCE``: the commands whose success saves the world."""


@dataclass
class LLMLink:
    dispatcher: Dispatcher
    models: dict[str, str]
    """Agent name -> the model its turns use."""
    thinkers: dict[str, Thinker] = field(default_factory=dict)
    """Agent id -> its thinker (turns taken and skipped, for ``@llm-status``)."""


class Simulation:
    def __init__(
        self,
        vault: Vault,
        world: World,
        settings: Settings,
        lock: VaultLock | None = None,
        *,
        warn: Callable[[str], None] = warn_on_stderr,
    ) -> None:
        self.vault, self.world, self.settings, self.lock = vault, world, settings, lock
        vault.max_note_bytes = settings.limits.max_note_bytes
        vault.fiction_secrets = settings.memory_compaction.fiction_secrets
        self.warn = warn
        self.fsync_failures_before = EVERY_100_MS.failures
        """Background fsync failures in this process before this simulation began."""
        self.run_log: logging.Handler | None = None
        """The vault's run log while this process owns the vault (``open``)."""
        self.registry: Registry = default_registry()
        self.listeners: list[Listener] = []
        self.doorkeeper: Doorkeeper | None = None
        """The server's connections while the world is served (moderation commands)."""
        self.actor_options = settings.llm.options_for("actor")
        """What every agent turn sends as ``options`` (``num_ctx`` bounds its prompt)."""
        self.llm: LLMLink | None = None
        """The dispatcher and each agent's model, while a run has an LLM."""
        self.embedded = False
        """The agents think with the embedded model (set when the LLM is chosen)."""
        self.token_rate = TokenRate()
        """Characters per token of the actor's model, learned from its replies."""
        self.recollection = Recollection(self)
        """What each agent brings to mind (the prompt's section, ``recall``)."""
        self.recorder: RunRecorder | None = None
        """This run's record (``begin_record``), or None: not recorded."""
        self.recorded_result: Callable[[str], Result] | None = None
        """In a replay: the recorded result of the command a character runs now (for a
        command whose result reads what no record holds: ``Command.reads_unrecorded``)."""
        self.open_record = run_record.OpenRecord()
        """What the record being written keeps besides ``recorder``."""
        self.last_costs: dict[str, Cost] = {}
        """Each agent's cost in the run just recorded (``end_record``)."""
        self.chronicle = Chronicle.open(vault.root, world, lambda message: self.warn(message))
        """The world's readable narrative, written as events happen (``vault/chronicle/``)."""
        self.minds: dict[str, MemoryStream] = {
            c.id: MemoryStream.open(vault, c, self.windows_for(c), warn=warn)
            for c in world.characters.values()
        }
        self.supervisor = Supervisor(self._background_error)
        """Owns every background task (compaction workers): their errors are reported."""
        self.memory_gate = MemoryGate(
            self.minds,
            lambda: self.compactor.llm is not None and not self.compactor.health.failing,
            sleep=self.backoff("memory-hold"),
        )
        """Holds agent turns while a character's memory is too far behind."""
        self.compactor = memory_work.make_compactor(self)
        """Memory compaction; idle (everything pending) until ``start_compaction``."""
        self.knowledge = memory_work.make_knowledge(self)
        """Knowledge passes; idle until ``start_compaction``."""
        self.wait_for: Callable[[float], Awaitable[None]] = asyncio.sleep
        """How a backoff waits (a replay's: not at all; the tape says when it woke)."""
        self.compactor.sleep = self.backoff("compaction")
        self.knowledge.sleep = self.backoff("knowledge")
        self.knowledge.handbook = memory_work.make_handbook_writer(self)
        """Writes each agent's handbook after its passes (the rules until there is an LLM)."""
        self.dreams = memory_work.make_dreams(self)
        """``dream``: at the consolidator's priority; without an LLM, made by rules."""

    # -- the vault (``engine.sim.vault_session``) -------------------------------------
    @classmethod
    def open(
        cls,
        vault_dir: Path,
        world_file: Path,
        *,
        warn: Callable[[str], None] = warn_on_stderr,
        notice: Callable[[str], None] | None = note_on_stderr,
    ) -> Simulation:
        """Own the vault, then load its world, or seed it from ``world_file`` the first
        time (``vault_session.open_simulation``)."""
        return vault_session.open_simulation(cls, vault_dir, world_file, warn=warn, notice=notice)

    def save(self) -> None:
        """Save the world, every journal and memory state (``vault_session.save``)."""
        vault_session.save(self)

    def close(self) -> None:
        """Flush every journal and give the vault back (``vault_session.close``)."""
        vault_session.close(self)

    def _save_state(self, mind: MemoryStream) -> None:
        self.vault.write_state(mind.character.folder, mind.state())

    # -- memory work (``engine.sim.memory_work``) -------------------------------------
    def start_compaction(
        self, llm: Generator, models: dict[str, str], consolidators: dict[str, str] | None = None
    ) -> None:
        """Compact with ``llm`` from now on (``memory_work.start_compaction``)."""
        memory_work.start_compaction(self, llm, models, consolidators)

    async def settle_memory(self, within: float) -> None:
        """``do``: let the memory work started finish (``memory_work.settle_memory``)."""
        await memory_work.settle_memory(self, within)

    async def wind_down_memory(
        self, grace: float | None, *, say: Callable[[str], None] | None = None,
        passes: bool = True,
    ) -> None:  # fmt: skip
        """The end of a run's memory work (``memory_work.wind_down_memory``)."""
        await memory_work.wind_down_memory(self, grace, say=say, passes=passes)

    def memory_in_progress(self, *, summaries: bool = True) -> str:
        """The memory work in progress, in words (``memory_work.memory_in_progress``)."""
        return memory_work.memory_in_progress(self, summaries=summaries)

    def leave_memory_work(self, *, note: bool = True) -> None:
        """A stop: passes and dreams cut, no more start (``memory_work.leave_memory_work``)."""
        memory_work.leave_memory_work(self, note=note)

    def cut_memory_short(self) -> None:
        """Stop the memory work in progress now (``memory_work.cut_memory_short``)."""
        memory_work.cut_memory_short(self)

    def memory_status(self, character: Character) -> MemoryStatus:
        """``@memory-status`` of ``character`` (``memory_work.memory_status``)."""
        return memory_work.memory_status(self, character)

    def handbook_agent(self, mind: MemoryStream) -> Agent:
        """Who ``mind``'s character is, as its handbook's rules see it."""
        return memory_work.handbook_agent(self, mind)

    async def warm_prompt(self, mind: MemoryStream, after: Callable[[], MemoryStream]) -> None:
        """Evaluate the agent's next prompt ahead (``memory_work.warm_prompt``)."""
        await memory_work.warm_prompt(self, mind, after)

    # -- the run record (``engine.sim.run_record``) -----------------------------------
    def note(self, kind: str, **data: object) -> None:
        """An event of the run's record (when it is recorded)."""
        if self.recorder is not None:
            self.recorder.event(kind, **data)

    async def gate(self, kind: str, key: str = "") -> None:
        """Wait for the run record's gate ``kind`` (``engine.sim.sequencer``): a decision
        from outside (a player's input, the run's end) takes its exact place."""
        if self.recorder is not None:
            await self.recorder.gate(kind, key)

    def save_now(self) -> None:
        """Save at once, in the record too (``run_record.save_now``)."""
        run_record.save_now(self)

    def backoff(self, what: str) -> Callable[[float], Awaitable[None]]:
        """A backoff's sleep for ``what``, a gate of the record (``run_record.backoff``)."""
        return run_record.backoff(self, what)

    async def checkpoint(self) -> None:
        """Save at the end of a run, at its place in the record (``run_record.checkpoint``)."""
        await run_record.checkpoint(self)

    def begin_record(self, kind: str, world_file: Path | None, meta: dict[str, Any]) -> None:
        """Record this run in ``runs/<id>/`` (``run_record.begin_record``)."""
        run_record.begin_record(self, kind, world_file, meta)

    def end_record(self, reason: str, **meta: object) -> None:
        """Close the record (``run_record.end_record``)."""
        run_record.end_record(self, reason, **meta)

    def journal_lengths(self) -> dict[str, int]:
        """Character name -> its journal's length (``run_record.journal_lengths``)."""
        return run_record.journal_lengths(self)

    def recorded(self, llm: Generator) -> Generator:
        """``llm``, its calls on the run's record when recorded (``run_record.recorded``)."""
        return run_record.recorded(self, llm)

    @property
    def token_counter(self) -> TokenCounter:
        """How the agents' model counts tokens (the embedded model's tokenizer, or the
        estimate for a server): the dispatcher's its turns go to, else the summarizer's
        (``do``), else the estimate (no LLM yet)."""
        if self.llm is not None:
            return counter_of(self.llm.dispatcher)
        return counter_of(self.compactor.llm)

    def turn_of(self, name: str | None) -> int:
        """The turn an agent is in (``run_record.turn_of``)."""
        return run_record.turn_of(self, name)

    async def turn_starting(self, agent_id: str, turn: int) -> None:
        """``run_record.turn_starting``."""
        await run_record.turn_starting(self, agent_id, turn)

    def turn_finished(self, agent_id: str, turn: Turn, number: int,
                      prompt: str | None, reply: str | None) -> None:  # fmt: skip
        """``run_record.turn_finished``; the agent's files are looked at again when next
        wanted (``Recollection.look_again``)."""
        self.recollection.look_again(self.world.characters[agent_id])
        run_record.turn_finished(self, agent_id, turn, number, prompt, reply)

    # -- time, and background errors ------------------------------------------------
    def _background_error(self, message: str, exc: BaseException) -> None:
        """An unexpected error in a background task: the run log gets the traceback,
        the user one line."""
        log_error(message, exc)
        self.warn(message)

    @property
    def clock(self) -> WorldClock:
        """Simulation time (saved with the world)."""
        return self.world.clock

    def turn_taken(self, agents: int) -> None:
        """An agent's turn is done (taken or skipped), one of ``agents`` a round: the
        clock moves each round. Player commands never move it."""
        if self.clock.turn_taken(agents):  # a round: saved at once, so a kill keeps it
            self.note("clock", sim=self.clock.reading())
            try:
                save_clock(self.vault.root, self.clock)
            except (OSError, MudsimError) as exc:
                self.warn(
                    f"the world clock could not be saved now ({exc}); the next save tries again"
                )

    def windows_for(self, character: Character) -> Windows:
        defaults = self.settings.memory_compaction
        return Windows(
            character.immediate_window or defaults.immediate_window,
            character.recent_window or defaults.recent_window,
        )

    # -- acting (``engine.sim.acting``) -----------------------------------------------
    def execute(self, character: Character, line: str) -> Result:
        """Run one command line as ``character``; the result is also its memory
        (``acting.execute``)."""
        return acting.execute(self, character, line)

    def announce_thinking(self, character: Character) -> None:
        """The room sees the agent pause to think (ambient: shown, never remembered)."""
        text = f"{character.name} pauses, deep in thought..."
        self.deliver(Event(EventKind.AMBIENT, text, character.location, character.id))

    def deliver(self, event: Event) -> None:
        """Show ``event`` to everyone in its room but its actor; observers remember it
        (``acting.deliver``)."""
        acting.deliver(self, event)

    def add_character(self, character: Character) -> None:
        """A character made while the world runs (a new player logging in over telnet):
        it joins the world with an empty memory, and the world is saved at once (its
        ``agent.md``, then ``world.yaml``)."""
        self.world.add_character(character)
        self.note("join", character=character_fields(character))
        mind = MemoryStream.open(self.vault, character, self.windows_for(character), warn=self.warn)
        self.minds[character.id] = mind
        vault_session.save_world_now(self)
        try:
            self._save_state(mind)
        except (OSError, MudsimError) as exc:
            self.warn(f"{character.name}'s memory state could not be saved now ({exc}); "
                      "the next save tries again")  # fmt: skip

    def set_role(self, character: Character, role: Role) -> None:
        """A character's role changed from outside the world (its telnet account's): on
        the record, and saved at once."""
        character.role = role
        self.note("role", actor=character.id, role=role.value)
        vault_session.save_world_now(self)

    def set_asleep(self, character: Character, asleep: bool) -> None:
        """A player left (asleep) or came back (awake) over the served world: on the
        record (each call, so a replay that began otherwise follows), so a replay sees
        the room as it was."""
        if asleep:
            self.world.asleep.add(character.id)
        else:
            self.world.asleep.discard(character.id)
        self.note("presence", actor=character.id, asleep=asleep)

    # -- finding characters -----------------------------------------------------------
    def character(self, name: str | None) -> Character:
        """The character called ``name``, or the world's first player when ``name`` is None."""
        everyone = join_names([c.name for c in self.world.characters.values()], empty="none")
        if name is None:
            player = next(self.world.players(), None)
            if player is None:
                raise UnknownCharacterError(
                    f"{self.world.name} has no player; pick one with --as (characters: {everyone})"
                )
            return player
        found = self.world.find_characters(name)
        if len(found) != 1:
            problem = "no character" if not found else "more than one character"
            raise UnknownCharacterError(
                f"{problem} called {name!r} in {self.world.name} (characters: {everyone})"
            )
        return found[0]
