"""The running world: world + vault + every character's memory, and the one path by
which players and agents act (``execute``).

A command's events reach every other character in the room (observers remember them,
except ambient ones); the caller remembers the command's narrative result, one memory
per command. Every memory and event carries the world clock's reading (``sim``), and
speech its speaker's name. ``Simulation`` implements the commands' context protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engine import version, wallclock
from engine.agents.compactor import Compactor, log_error
from engine.agents.dreams import Dreams
from engine.agents.handbook_writer import HandbookWriter
from engine.agents.knowledge_pass import KnowledgePasses
from engine.agents.knowledge_status import knowledge_info
from engine.agents.memory import MemoryStream
from engine.agents.supervisor import Supervisor
from engine.agents.thinker import Generator, Thinker, Turn
from engine.commands import Invocation, ParsedLine, Registry, Result, default_registry, parse_line
from engine.commands.context import Doorkeeper
from engine.commands.helpers import join_names
from engine.commands.result import failed
from engine.config import Settings
from engine.errors import MudsimError, UnknownCharacterError, VaultError
from engine.llm.dispatcher import Dispatcher
from engine.memory.handbook_rules import Agent
from engine.memory.record import MemoryKind, utc_now
from engine.memory.retrieval import TokenRate
from engine.memory.secrets import redact, redact_value
from engine.memory.status import MemoryStatus
from engine.memory.waterfall import Windows
from engine.sim.chronicle import Chronicle
from engine.sim.command_context import SimContext
from engine.sim.memory_gate import MemoryGate
from engine.sim.prompting import build_prompt, summary_chars
from engine.sim.recollection import Recollection
from engine.sim.recorder import Cost, RecordingLLM, RunRecorder
from engine.sim.world_apply import lacking_note, note_on_stderr, plan_for
from engine.vault.journal import EVERY_100_MS
from engine.vault.lock import VaultLock
from engine.vault.run_log import attach_run_log, detach_run_log
from engine.vault.run_store import RunFolder, file_sha256
from engine.vault.vault import Vault
from engine.vault.world_store import save_clock, warn_on_stderr
from engine.world.clock import WorldClock
from engine.world.events import Event, EventKind
from engine.world.loader import load_world_file
from engine.world.model import ABBREVIATIONS, COMPASS, Character, Role, character_fields
from engine.world.world import World

Listener = Callable[[Event], None]

SAVED_AT_ONCE = frozenset(
    {"@dig", "@exit", "@teleport", "@set-profile", "@set-description", "@time"}
)
"""The commands that change what the vault's world files hold (rooms, exits, where a
builder teleported, a profile, the clock): a success saves the world before anyone
remembers it, so a kill later in the run cannot lose it. The clock's rounds are saved
as they complete (``turn_taken``). Other changes (walking) are saved by the next save
(``@save``, the end of a run or of ``do``); reads (``@my-profile``) save nothing."""


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
        self._recording: contextlib.ExitStack | None = None
        self._record_meta: dict[str, Any] = {}
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
        self.memory_gate = MemoryGate(self.minds, lambda: self.compactor.llm is not None)
        """Holds agent turns while a character's memory is too far behind."""
        self.compactor = Compactor(
            llm=None, models={}, options=settings.llm.options_for("summarizer"),
            save_state=self._save_state, supervisor=self.supervisor,
            constrain=getattr(settings.llm.profiles.get("summarizer"), "constrain", None),
            summary_chars=summary_chars(settings), urgent=self.memory_gate.urgent,
            committed=lambda _mind: self.memory_gate.changed(),
        )  # fmt: skip
        """Memory compaction; idle (everything pending) until ``start_compaction``."""
        consolidator = settings.llm.profiles.get("consolidator")
        options = settings.llm.options_for("consolidator")
        self.knowledge = KnowledgePasses(
            vault, llm=None, models={}, options=options, clock=lambda: self.clock.reading(),
            every=settings.memory_compaction.consolidate_every,
            enabled=settings.memory_compaction.knowledge,
            context_tokens=settings.memory_compaction.knowledge_context
            or int(options.get("num_ctx", 8192)),
            constrain=consolidator.constrain if consolidator and consolidator.constrain
            is not None else True,
            supervisor=self.supervisor, committed=self._refresh_soon,
        )  # fmt: skip
        """Knowledge passes; idle until ``start_compaction``."""
        self.wait_for: Callable[[float], Awaitable[None]] = asyncio.sleep
        """How a backoff waits (a replay's: not at all; the tape says when it woke)."""
        self.compactor.sleep = self.backoff("compaction")
        self.knowledge.sleep = self.backoff("knowledge")
        self.knowledge.handbook = HandbookWriter(
            describe=self.handbook_agent, clock=lambda: self.clock.reading(), options=options,
            method=settings.memory_compaction.handbook, constrain=self.knowledge.constrain,
        )  # fmt: skip
        """Writes each agent's handbook after its passes (the rules until there is an LLM)."""
        self.dreams = Dreams(
            vault, clock=lambda: self.clock.reading(), remember=self._remember_dream,
            options=options, interval=settings.memory_compaction.dream_interval,
            constrain=self.knowledge.constrain, supervisor=self.supervisor,
        )  # fmt: skip
        """``dream``: at the consolidator's priority; without an LLM, made by rules."""

    def _refresh_soon(self, mind: MemoryStream) -> None:
        """Bring ``mind``'s retrieval index up to date now, in a task, after a commit that
        changed what it can recall: its next turn then finds the index current."""
        if mind.character.type != "agent":
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop (the play REPL): its next turn reads what changed
        self.supervisor.spawn(self.recollection.refresh(mind.character),
                              name=f"retrieval index of {mind.character.name}")  # fmt: skip

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
        time. A seeded vault's world wins, but ``world_file`` is still checked (a broken
        one is an error), and what it declares that the vault lacks is one line to
        ``notice`` with the ``world apply`` command that adds it."""
        vault = Vault(vault_dir)
        # The world file is checked before anything is written, even the lock.
        declared = load_world_file(world_file)
        vault.refuse_foreign()  # /etc, a project folder: nothing is written there
        lock = vault.lock()
        log = None
        try:
            log = attach_run_log(vault.root)
            seeded = vault.is_seeded
            world = vault.load_world(warn=warn, clock=declared.clock) if seeded else declared
            vault.write_default_config()
            sim = cls(vault, world, vault.settings(), lock, warn=warn)
            sim.knowledge.catch_up_handbooks(list(sim.minds.values()))
            if not seeded:
                sim.save()
            elif notice is not None:
                line = lacking_note(plan_for(vault, world, declared), world_file, vault_dir)
                if line is not None:
                    notice(line)
        except BaseException:
            if log is not None:
                detach_run_log(log)
            lock.release()
            raise
        sim.run_log = log
        return sim

    def start_compaction(
        self, llm: Generator, models: dict[str, str], consolidators: dict[str, str] | None = None
    ) -> None:
        """Compact with ``llm`` from now on (character id -> summarizer model; knowledge
        passes use ``consolidators``, default the same), and start what is already due
        (a backlog left by an earlier run catches up)."""
        self.compactor.llm = self.knowledge.llm = llm
        self.compactor.models = models
        self.knowledge.models = consolidators if consolidators is not None else models
        if self.knowledge.handbook is not None:
            self.knowledge.handbook.llm = llm
            self.knowledge.handbook.models = self.knowledge.models
        self.dreams.llm, self.dreams.models = llm, self.knowledge.models
        for mind in self.minds.values():
            self.compactor.poke(mind)
            self.knowledge.poke(mind)

    async def settle_memory(self, within: float) -> None:
        """``do``: let the compactions and knowledge passes started finish (at most
        ``within`` s each), then stop the rest."""
        await self.gate("settle")
        self.note("settle")
        await self.compactor.settle(within)
        await self.knowledge.settle(within)
        await self.dreams.drain(within)

    async def wind_down_memory(
        self, grace: float | None, *, say: Callable[[str], None] | None = None,
        passes: bool = True,
    ) -> None:  # fmt: skip
        """The end of a run: a knowledge pass for each agent with anything new, then
        compactions and passes in progress get ``grace`` s (None: as long as they take,
        or until ``cut_memory_short``; ``say`` then hears what is waited for); the rest
        waits for the next run. A stopped run (``passes`` False) starts no pass and cuts
        the passes and dreams in progress (``leave_memory_work``): only summary calls get
        the grace."""
        await self.gate("wind-down")
        self.note("wind-down", **({} if passes else {"passes": False}))
        if passes:
            self.knowledge.at_run_end(list(self.minds.values()))
        else:
            self.leave_memory_work(note=False)
        work = self.memory_in_progress()
        if grace is None and say is not None and work:
            say(work)
        await asyncio.gather(
            self.compactor.drain(grace), self.knowledge.drain(grace), self.dreams.drain(grace)
        )

    def memory_in_progress(self, *, summaries: bool = True) -> str:
        """The summary calls (unless not ``summaries``), knowledge passes and dreams in
        progress, in words ("" if none)."""
        counts = ((self.compactor.calls_in_flight if summaries else 0, "summary call",
                   "summary calls"),
                  (len(self.knowledge.workers), "knowledge pass", "knowledge passes"),
                  (len(self.dreams.workers), "dream", "dreams"))  # fmt: skip
        return join_names(
            [f"{n} {one if n == 1 else many}" for n, one, many in counts if n], empty=""
        )

    def leave_memory_work(self, *, note: bool = True) -> None:
        """A stop: the knowledge passes and dreams in progress are cut now and no more
        start (what they have not committed, their handbooks too, is left for the next
        run: its passes read every memory since the last committed one). ``note``: the
        run's record says where (a replay cuts at the same place)."""
        if note:
            self.note("leave-memory-work")
        self.knowledge.stopping = True
        self.knowledge.cut()
        self.dreams.cut()

    def cut_memory_short(self) -> None:
        """Stop the compactions, knowledge passes and dreams in progress now, as the end
        of a grace does: what they have not committed is left for the next run."""
        self.compactor.cut()
        self.knowledge.cut()
        self.dreams.cut()

    def memory_status(self, character: Character) -> MemoryStatus:
        """``@memory-status`` of ``character``: its memory, and its knowledge bank."""
        mind = self.minds[character.id]
        status = mind.status()
        if character.type != "agent":
            return status
        info = knowledge_info(
            self.knowledge.store(mind), memories=mind.count, every=self.knowledge.every,
            known=self.knowledge.agent(mind),
        )  # fmt: skip
        return replace(status, knowledge=info)

    # -- the run record ----------------------------------------------------------------
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
        """Save at once, in the record too (``play`` after each of the player's lines)."""
        self.note("save")
        self.save()

    def backoff(self, what: str) -> Callable[[float], Awaitable[None]]:
        """A backoff's sleep for ``what`` (compaction, knowledge): its waking is a gate of
        the run's record (``wake``), so a retry's work takes its exact place."""
        count = itertools.count()

        async def sleep(seconds: float) -> None:
            key = f"{what}#{next(count)}"
            await self.wait_for(seconds)
            if self.recorder is not None:
                await self.recorder.gate("wake", key)
                self.recorder.event("wake", key=key)

        return sleep

    async def checkpoint(self) -> None:
        """Save at the end of a run, at its place in the record (saved even when the
        wait for that place is cut short)."""
        try:
            await self.gate("save")
        finally:
            self.note("save")
            self.save()

    def begin_record(self, kind: str, world_file: Path | None, meta: dict[str, Any]) -> None:
        """Record this run (``config/record.md``: ``record``) in ``runs/<id>/``: its start,
        then every call, event and draw (``engine.sim.recorder``)."""
        config = self.settings.record
        if not config.record or self.recorder is not None:
            return
        try:
            run = RunFolder.create(self.vault.root, kind)
            run.save_start(self.vault.root, world_file)
            self._record_meta = {
                "id": run.id, "kind": kind, "started": utc_now(), "ended": None,
                "world_file": str(world_file) if world_file else None,
                "world_sha256": file_sha256(world_file) if world_file else None,
                "version": version(), "clock": self.clock.reading(),
                "settings": redact_value(self.settings.model_dump(mode="json")),
                "journals_start": self.journal_lengths(),
                **redact_value(meta),  # an endpoint URL with a password in it
            }  # fmt: skip
            run.write_meta(self._record_meta)
        except (OSError, MudsimError) as exc:  # the run goes on, unrecorded
            self.warn(f"this run is not recorded: {exc}")
            return
        prices = {redact(e.url): (e.price_in, e.price_out) for e in self.settings.llm.endpoints}
        recorder = RunRecorder(run, prompts=config.record_prompts, training=config.training,
                               prices=prices, warn=lambda message: self.warn(message))  # fmt: skip
        stack = contextlib.ExitStack()
        stack.enter_context(wallclock.listening(recorder.draw))
        self.recorder, self._recording = recorder, stack
        for character_id in sorted(self.world.asleep):  # asleep before the record began
            self.note("presence", actor=character_id, asleep=True)

    def end_record(self, reason: str, **meta: object) -> None:
        """Close the record: its last event, the vault's end state, why it ended."""
        recorder, stack = self.recorder, self._recording
        if recorder is None or stack is None:
            return
        recorder.event("end", reason=reason, sim=self.clock.reading())
        self.recorder = self._recording = None
        self.last_costs = dict(recorder.costs)
        stack.close()
        try:
            recorder.close()
            if recorder.broken is None:  # an incomplete record has no end to replay to
                recorder.run.save_end(self.vault.root)
            costs = {name: cost.to_json() for name, cost in sorted(recorder.costs.items())}
            ended = {"ended": utc_now(), "reason": reason, "events": recorder.count,
                     "journals_end": self.journal_lengths(),
                     "costs": costs, "training": dict(recorder.captured),
                     "incomplete": recorder.broken, **meta}  # fmt: skip
            recorder.run.write_meta({**self._record_meta, **ended})
        except (OSError, MudsimError) as exc:
            self.warn(f"the run record {recorder.run.folder} could not be closed: {exc}")

    def journal_lengths(self) -> dict[str, int]:
        """Character name -> how many records its journal holds (the next one's seq): a
        run's record keeps them at its start and end, so each memory knows its run."""
        return {mind.character.name: mind.journal.count for mind in self.minds.values()}

    def recorded(self, llm: Generator) -> Generator:
        """``llm``, with its calls written to the run's record when it is recorded."""
        if self.recorder is None:
            return llm
        return RecordingLLM(llm, self.recorder, self.turn_of)

    def turn_of(self, name: str | None) -> int:
        """The turn an agent is in (its thinker's count; 0 for no thinker)."""
        link = self.llm
        if link is None or name is None:
            return 0
        found = [c for c in self.world.characters.values() if c.name == name]
        thinker = link.thinkers.get(found[0].id) if found else None
        return thinker.turns if thinker is not None else 0

    async def turn_starting(self, agent_id: str, turn: int) -> None:
        if self.recorder is not None:
            await self.recorder.gate("turn-start", agent_id)
            self.recorder.turn_started(agent_id, self.world.characters[agent_id].name, turn)

    def turn_finished(self, agent_id: str, turn: Turn, number: int,
                      prompt: str | None, reply: str | None) -> None:  # fmt: skip
        if self.recorder is not None:
            self.recorder.turn_ended(agent_id, turn, number)
            room = self.world.characters[agent_id].location
            self.recorder.capture(turn, prompt, reply, room)

    def handbook_agent(self, mind: MemoryStream) -> Agent:
        """Who ``mind``'s character is, as its handbook's rules see it."""
        character = mind.character
        others = tuple(c.name for c in self.world.characters.values() if c.id != character.id)
        verbs = frozenset(n for c in self.registry.commands.values() for n in c.names)
        return Agent(character.name, character.profile, character.description, others, verbs)

    async def warm_prompt(self, mind: MemoryStream, after: Callable[[], MemoryStream]) -> None:
        """Evaluate the prompt the agent's next turn will send, its memory read as
        ``after`` gives it (``Compactor.warm``: set for the embedded model, whose prefix
        cache keeps it); nothing without a thinker."""
        link, llm = self.llm, self.compactor.llm
        thinker = link.thinkers.get(mind.character.id) if link is not None else None
        if thinker is not None and llm is not None:
            character = mind.character
            await llm.generate(thinker.warm_request(lambda: build_prompt(self, character, after())))

    def _background_error(self, message: str, exc: BaseException) -> None:
        """An unexpected error in a background task: the run log gets the traceback,
        the user one line."""
        log_error(message, exc)
        self.warn(message)

    def _save_state(self, mind: MemoryStream) -> None:
        self.vault.write_state(mind.character.folder, mind.state())

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

    # -- acting ---------------------------------------------------------------------
    def execute(self, character: Character, line: str) -> Result:
        """Run one command line as ``character``; the result is also its memory."""
        if self.recorder is not None:
            self.recorder.command(character.id, line, room=character.location,
                                  sim=self.clock.reading())  # fmt: skip
        result = self._execute(character, line)
        if self.recorder is not None:
            self.recorder.event("result", actor=character.id, ok=result.ok, text=result.text)
        return result

    def _execute(self, character: Character, line: str) -> Result:
        limit = self.settings.limits.max_command_chars
        if len(line) > limit:  # refused whole: not remembered, not heard by anyone
            return failed(
                f"That line is {len(line):,} characters long; a command may be at most "
                f"{limit:,} (max_command_chars in config/limits.md).",
                "Say it in shorter pieces, or keep long text in a note.",
            )
        parsed = parse_line(line)
        if parsed is None:
            return failed("Type a command, or 'help'.")
        if (
            self.registry.get(parsed.verb) is None
            and not parsed.args
            and self._is_exit(character, parsed.verb)
        ):
            parsed = ParsedLine("go", parsed.verb, parsed.reason, parsed.text)
        direction = self._direction(parsed)
        found = self.registry.resolve(parsed.verb, character.role)
        speaker = None
        if direction is not None:  # `n` where there is no north: never autocorrected
            exits = join_names(sorted(self.world.rooms[character.location].exits), empty="none")
            result = failed(f"There is no exit {direction} here.", f"Exits here: {exits}.")
        elif found.command is None:
            result = _unresolved(parsed.verb, found.how, found.candidates)
        elif found.how == "forbidden":
            needed = found.command.role.value
            result = failed(
                f"'{found.command.key}' needs the {needed} role; you are a {character.role.value}.",
                "Type 'commands' to see what you can do.",
            )
        else:
            context = SimContext(self, character)
            call = Invocation(parsed.args, parsed.reason, parsed.verb)
            try:
                result = found.command.handler(context, call)
            except MudsimError as exc:
                result = failed(f"That went wrong: {exc}")
            if result.ok and found.command.key in SAVED_AT_ONCE:
                self._save_world_now()
            for event in context.events:  # held back until the world was saved
                self.deliver(event)
                if event.kind is EventKind.SPEECH:
                    speaker = character.name
            if found.how in ("prefix", "distance"):
                note = f"(Taking '{parsed.verb}' as '{found.command.key}'.)\n"
                result = Result(note + result.text, result.ok, result.hint, result.memory_kind)
        self._remember_result(character, parsed.text, parsed.reason, result, speaker)
        return result

    def _direction(self, parsed: ParsedLine) -> str | None:
        """The compass direction a bare ``north``/``n`` (no command of that name, no such
        exit here, or it would have become ``go``) names, or None."""
        if parsed.args or self.registry.get(parsed.verb.lower()) is not None:
            return None
        word = parsed.verb.lower()
        word = ABBREVIATIONS.get(word, word)
        return word if word in COMPASS else None

    def _is_exit(self, character: Character, word: str) -> bool:
        """A bare exit name or compass abbreviation (``north``, ``n``) means ``go`` there."""
        exits = self.world.rooms[character.location].exits
        return word in exits or ABBREVIATIONS.get(word) in exits

    def _remember_result(
        self, character: Character, command: str, reason: str | None, result: Result,
        speaker: str | None,
    ) -> None:  # fmt: skip
        if result.ok:
            text = result.text
        else:
            text = f"You tried: {command}\nThis failed because: {result.text}"
            text += f"\n{result.hint}" if result.hint else ""
        kind = MemoryKind.THOUGHT if result.memory_kind == "thought" else MemoryKind.RESULT
        self._record(
            character, kind, text, command=command, reason=reason, failed=not result.ok,
            speaker=speaker,
        )  # fmt: skip

    def _record(
        self, character: Character, kind: MemoryKind, text: str, *, command: str | None = None,
        reason: str | None = None, failed: bool = False, speaker: str | None = None,
    ) -> None:  # fmt: skip
        others = [c.name for c in self.world.characters_in(character.location, besides=character)]
        mind = self.minds[character.id]
        mind.record(
            kind, text, location=character.location, occupants=others, command=command,
            reason=reason, failed=failed, sim=self.clock.reading(), speaker=speaker,
        )  # fmt: skip
        self.compactor.poke(mind)
        self.knowledge.poke(mind)

    def _remember_dream(self, mind: MemoryStream, text: str) -> None:
        """A dream, remembered by its dreamer as a thought."""
        self._record(mind.character, MemoryKind.THOUGHT, f"You dream: {text}")

    def announce_thinking(self, character: Character) -> None:
        """The room sees the agent pause to think (ambient: shown, never remembered)."""
        text = f"{character.name} pauses, deep in thought..."
        self.deliver(Event(EventKind.AMBIENT, text, character.location, character.id))

    def deliver(self, event: Event) -> None:
        """Show ``event`` to everyone in its room but its actor; observers remember it.
        It gets the clock's reading (``sim``) if it has none yet."""
        if not event.sim:
            event = replace(event, sim=self.clock.reading())
        if self.recorder is not None:
            self.recorder.world_event(event)
        self.chronicle.record(event)
        if event.remembered:
            present = self.world.characters_in(event.room_id)
            names = [c.name for c in present]
            at = utc_now()  # one moment for every observer
            actor = self.world.characters.get(event.actor_id or "")
            speaker = actor.name if actor is not None and event.kind is EventKind.SPEECH else None
            for index, observer in enumerate(present):
                if observer.id != event.actor_id:
                    others = names[:index] + names[index + 1 :]
                    mind = self.minds[observer.id]
                    mind.record(
                        MemoryKind.OBSERVATION, event.text, location=event.room_id,
                        occupants=others, at=at, sim=event.sim, speaker=speaker,
                    )  # fmt: skip
                    self.compactor.poke(mind)
                    self.knowledge.poke(mind)
        for listener in self.listeners:
            listener(event)

    def add_character(self, character: Character) -> None:
        """A character made while the world runs (a new player logging in over telnet):
        it joins the world with an empty memory, and the world is saved at once (its
        ``agent.md``, then ``world.yaml``)."""
        self.world.add_character(character)
        self.note("join", character=character_fields(character))
        mind = MemoryStream.open(self.vault, character, self.windows_for(character), warn=self.warn)
        self.minds[character.id] = mind
        self._save_world_now()
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
        self._save_world_now()

    def set_asleep(self, character: Character, asleep: bool) -> None:
        """A player left (asleep) or came back (awake) over the served world: on the
        record (each call, so a replay that began otherwise follows), so a replay sees
        the room as it was."""
        if asleep:
            self.world.asleep.add(character.id)
        else:
            self.world.asleep.discard(character.id)
        self.note("presence", actor=character.id, asleep=asleep)

    # -- persistence ----------------------------------------------------------------
    def _save_world_now(self) -> None:
        try:
            self.vault.save_world(self.world)
        except (OSError, MudsimError) as exc:
            self.warn(f"the world could not be saved now ({exc}); the next save tries again")

    def save(self) -> None:
        self.recollection.flush()
        self.vault.save_world(self.world)
        for mind in self.minds.values():
            mind.journal.sync()
            self.vault.write_state(mind.character.folder, mind.state())

    def close(self) -> None:
        """Flush every journal and give the vault back (does not save the world). Every
        journal is closed and the lock released even when one fails; then the first
        failure is raised. A run record still open is closed first."""
        self.end_record("closed")
        self.chronicle.close()
        first: VaultError | None = None
        for mind in self.minds.values():
            try:
                mind.journal.close()
            except VaultError as exc:
                first = first or exc
        if self.lock is not None:
            self.lock.release()
            self.lock = None
        if self.run_log is not None:
            detach_run_log(self.run_log)
            self.run_log = None
        if first is not None:
            raise first

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


def _unresolved(verb: str, how: str, candidates: tuple[str, ...]) -> Result:
    if how == "ambiguous":
        return failed(
            f"'{verb}' could mean {join_names(list(candidates))}.", "Type more of the command."
        )
    return failed(
        f"There is no command '{verb}'.", "Type 'help' or 'commands' to see what you can do."
    )
