"""The thinker: one agent's turn, from prompt to executed command.

A turn asks the LLM (through anything with ``generate``, normally the dispatcher)
for a completion of the agent's prompt, turns the reply into one command line and
runs it. The prompt is built when the request is dispatched; the room is told the
agent "pauses, deep in thought..." at that moment (ambient, never remembered).

- A repeat of one of the agent's last three commands, or a reply that copies the
  prompt (a cue, six words in a row of the transcript), is rejected and the LLM asked
  again, at most twice; the third answer runs even so. Rejected replies leave no
  memory.
- A ``say`` or ``emote`` that is not speech (``engine.agents.speech_check``: the
  prompt's markup or a chat template's, its instructions copied, one of the agent's last
  five speech lines; and, with ``noise_check``, for a backend known to write noise (the
  embedded model), not mostly English words or one word over and over) is rejected and
  the LLM asked once more; if that answer fails too
  (or no ask is left), the turn runs a fallback instead: the first of the prompt's own
  example moves that is not speech and not a recent command, else ``look``. It is as
  deterministic as the answers, so a replay takes the same path.
- An empty reply ends the turn.
- ``hold`` (the memory gate's back-pressure) is awaited before the first ask and again
  before the command runs: while a character's memory is too far behind, no command
  makes new memories.
- A call that fails after the dispatcher's retries skips the turn: the agent thinks
  again at its next turn, it never freezes.
- So does anything else that goes wrong in one agent's turn: a prompt that cannot be
  built (a note with broken front matter), a backend or command handler that raises.
  The turn is skipped with its error (``Turn.error``, ``last_error``) and the
  traceback goes to the ``mudsim`` log; no other agent is affected. A prompt that
  could not be built is not the LLM's failure: it is raised out of the prompt factory
  as ``PromptUnavailable``, which the dispatcher neither retries nor counts.

The thinker knows nothing of the simulation: it is given callables to build the
prompt, announce itself and run a command.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from engine.agents.reply import RECENT_COMMANDS, echoes_transcript, parse_reply, repeat_key
from engine.agents.speech_check import (
    RECENT_SPEECH,
    check_speech,
    prompt_instructions,
    speech_text,
)
from engine.commands.result import Result
from engine.errors import LLMError, MudsimError
from engine.llm.request import Generation, LLMRequest, Priority
from engine.memory.constraint import Constraint

MAX_ASKS = 3
"""One ask plus at most two re-asks after a repeat, an echo of the prompt or speech that
is not language (that one at most once)."""
FALLBACK = "look"
"""The fallback's fallback, when the prompt shows no example move to take."""

log = logging.getLogger("mudsim")


class PromptUnavailable(Exception):
    """The agent's prompt (or its command constraint) could not be built.

    Not an ``LLMError``: the call never reached a model, so it is not retried and no
    endpoint is blamed. ``__cause__`` is what went wrong."""


_T = TypeVar("_T")


class Generator(Protocol):
    async def generate(self, request: LLMRequest) -> Generation: ...


@dataclass(frozen=True)
class Turn:
    """What one turn did: the command run (None when skipped or empty), and why not."""

    agent: str
    command: str | None
    result: Result | None
    asks: int
    rejected: tuple[str, ...] = ()
    error: str | None = None
    """Why this turn was skipped: an LLM error, a prompt that could not be built, a
    command that raised."""
    fell_back: bool = False
    """The model's speech failed the speech check twice (or on the last ask): the
    command run is the thinker's fallback."""


@dataclass
class Thinker:
    name: str
    model: str
    options: Mapping[str, Any]
    build_prompt: Callable[[], str]
    announce: Callable[[], None]
    execute: Callable[[str], Result]
    seed: int | None = None
    """When set, each ask gets its own reproducible ``options.seed``."""
    constraint: Callable[[], Constraint] | None = None
    """What a valid command looks like now (for backends that constrain decoding)."""
    constrain: bool | None = None
    """The actor profile's ``constrain`` (None: the backend's default)."""
    noise_check: bool = False
    """The model is known to write noise (the embedded model: ``Simulation.embedded``):
    its speech must also be mostly English dictionary words and not stutter. Off, the
    speech check passes good speech in any language, with names, codes and chat signs."""
    last_key: str | None = None
    recent_keys: list[str] = field(default_factory=list)
    """Repeat keys of the last ``RECENT_COMMANDS`` commands run (``last_key`` is the newest)."""
    turns: int = 0
    skipped: int = 0
    last_error: str | None = None
    last_prompt: str | None = field(default=None, repr=False)
    last_reply: str | None = field(default=None, repr=False)
    """The raw completion of the last ask (for the inspector)."""
    last_command: str | None = None
    """The last command run, with its ``| reason``."""
    recent_speech: list[str] = field(default_factory=list)
    """The texts of the last ``RECENT_SPEECH`` ``say``/``emote`` commands run."""
    thinking: bool = False
    """True while a turn is in progress (asking or running its command)."""
    prepare: Callable[[], Awaitable[None]] | None = None
    """Awaited when a turn starts, before the prompt is asked for (retrieval embeds the
    situation); a failure is logged and the turn goes on."""
    observe: Callable[[int, int], None] | None = None
    """Told each prompt's length in characters and in the server's tokens (the token
    estimate that budgets the prompt's sections learns from it)."""

    async def take_turn(
        self, llm: Generator, hold: Callable[[], Awaitable[None]] | None = None
    ) -> Turn:
        """One turn; ``hold`` (the memory gate's) is awaited before the model is asked and
        again before the command runs."""
        self.thinking = True
        try:
            return await self._turn(llm, hold)
        finally:
            self.thinking = False

    async def _turn(self, llm: Generator, hold: Callable[[], Awaitable[None]] | None) -> Turn:
        self.turns += 1
        announced = False
        if self.prepare is not None:
            try:
                await self.prepare()
            except Exception as exc:  # only a better prompt is lost
                log.warning("%s's turn was not prepared: %s", self.name, describe(exc))
        if hold is not None:
            await hold()

        def prompt() -> str:
            nonlocal announced
            if not announced:
                announced = True
                self.announce()
            self.last_prompt = self.build_prompt()
            return self.last_prompt

        rejected: list[str] = []
        speech_retried = fell_back = False
        for ask in range(1, MAX_ASKS + 1):
            try:
                generation = await llm.generate(self._request(prompt, ask))
            except LLMError as exc:
                return self._skip(ask, rejected, str(exc))
            except PromptUnavailable as exc:
                cause = exc.__cause__ or exc
                return self._skip(ask, rejected, f"{exc}: {describe(cause)}", cause)
            except Exception as exc:  # a backend's bug must not end the run
                return self._skip(ask, rejected, f"the LLM call failed: {describe(exc)}", exc)
            self.last_reply = generation.text
            if self.observe is not None and self.last_prompt is not None:
                self.observe(len(self.last_prompt), generation.prompt_tokens)
            line = parse_reply(generation.text, self.name)
            if line is None:
                return Turn(self.name, None, None, ask, tuple(rejected))
            key = repeat_key(line)
            again = key == self.last_key or key in self.recent_keys[-RECENT_COMMANDS:]
            if ask < MAX_ASKS and (again or echoes_transcript(line, self.last_prompt or "")):
                rejected.append(line)
                continue
            if not self._speech_passes(line):
                rejected.append(line)
                if not speech_retried and ask < MAX_ASKS:
                    speech_retried = True
                    continue
                line, fell_back = self.fallback(), True
                key = repeat_key(line)
            if hold is not None:  # memory that fell behind while it asked catches up
                await hold()
            self.last_key, self.last_command = key, line
            self.recent_keys = [*self.recent_keys, key][-RECENT_COMMANDS:]
            if speech := speech_text(line):
                self.recent_speech = [*self.recent_speech, speech[1]][-RECENT_SPEECH:]
            try:
                result = self.execute(line)
            except Exception as exc:  # a command handler's bug must not end the run
                error = f'"{line}" failed: {describe(exc)}'
                return self._skip(ask, rejected, error, exc, command=line)
            return Turn(self.name, line, result, ask, tuple(rejected), fell_back=fell_back)
        raise AssertionError("unreachable: the last ask always returns")

    def _speech_passes(self, line: str) -> bool:
        """``line`` is not speech, or its speech passes the check against the prompt."""
        speech = speech_text(line)
        if speech is None:
            return True
        instructions = prompt_instructions(self.last_prompt or "")
        verdict = check_speech(
            speech[1], instructions, self.recent_speech, noise_check=self.noise_check
        )
        return verdict.passes

    def fallback(self) -> str:
        """What a turn runs when the model's speech failed: the first example move in the
        prompt (``~Name> ...``) that is not speech and repeats none of the last commands,
        else ``FALLBACK``."""
        cue = f"~{self.name}> "
        recent = set(self.recent_keys[-RECENT_COMMANDS:])
        for row in (self.last_prompt or "").splitlines():
            move = row[len(cue) :].strip() if row.startswith(cue) else ""
            if move and speech_text(move) is None and repeat_key(move) not in recent:
                return move
        return FALLBACK

    def _skip(
        self,
        ask: int,
        rejected: list[str],
        error: str,
        exc: BaseException | None = None,
        *,
        command: str | None = None,
    ) -> Turn:
        """End the turn as skipped with ``error``; log it (with ``exc``'s traceback)."""
        self.skipped += 1
        self.last_error = error
        if exc is None:
            log.warning("%s's turn was skipped: %s", self.name, error)
        else:
            log.error("%s's turn was skipped: %s", self.name, error, exc_info=exc)
        return Turn(self.name, command, None, ask, tuple(rejected), error=error)

    def _guarded(self, build: Callable[[], _T], what: str) -> Callable[[], _T]:
        """``build``, with any exception it raises turned into ``PromptUnavailable``."""

        def guarded() -> _T:
            try:
                return build()
            except Exception as exc:
                raise PromptUnavailable(f"could not build the {what}") from exc

        return guarded

    def warm_request(self, prompt: Callable[[], str] | None = None) -> LLMRequest:
        """One token on the agent's prompt (``prompt``, default as it stands), in the
        background: a backend with a prefix cache keeps the evaluated prompt for the
        agent's next turn."""
        return LLMRequest(
            prompt=self._guarded(prompt or self.build_prompt, "prompt"),
            model=self.model,
            options={**self.options, "num_predict": 1},
            agent=self.name,
            role="warm",
            purpose="warm",
            priority=Priority.SUMMARY,
            constrain=False,
        )

    def _request(self, prompt: Callable[[], str], ask: int) -> LLMRequest:
        options = dict(self.options)
        if self.seed is not None:
            options["seed"] = zlib.crc32(f"{self.seed}:{self.name}:{self.turns}:{ask}".encode())
        constraint = self.constraint
        return LLMRequest(
            prompt=self._guarded(prompt, "prompt"),
            model=self.model,
            options=options,
            agent=self.name,
            role="actor",
            purpose="turn",
            priority=Priority.TURN,
            constraint=None if constraint is None else self._guarded(constraint, "command grammar"),
            constrain=self.constrain,
        )


def describe(exc: BaseException) -> str:
    """One line for the user: a ``MudsimError`` says it all; others get their type."""
    if isinstance(exc, MudsimError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
