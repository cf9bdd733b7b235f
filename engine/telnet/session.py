"""A logged-in player: their lines become commands, what happens in their room reaches
them as it happens.

Each line runs as ``play`` runs it: at its own place in the run's record (the
``input`` gate), through ``Simulation.execute`` (the parser, permissions and limits of
``do``), its result shown at once (a failure in red). A line received whole is run even
if the client leaves right after: what it did is committed like any command, and a
line cut off by the end of the connection never runs. ``quit`` leaves; ``@color
on|off`` is the session's own (plain text for this connection), and so is ``@password``
(``engine.telnet.own_password``: the player's own password, its answers read here,
hidden, never a command); ``who`` adds who is connected. Lines are read as they come
into a queue of at most ``queued_lines``; they run at most ``commands_per_s`` a second,
a faster one waiting its turn (a client's speedwalk runs whole); past the queue's limit
lines are dropped, with one "slow down" notice per run of them. Commands that spend
model calls need ``model_call_role``, or fit in ``model_calls_per_hour``. GMCP
``Room.Info`` and ``Char.Status`` follow every move, and every change to the room's
exits.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Final

from engine.agents.thinker import describe
from engine.commands import Command, parse_line
from engine.commands.helpers import describe_room
from engine.sim.repl import QUIT_WORDS
from engine.telnet.client import NOT_TEXT, Client, Received, Rendered
from engine.telnet.limits import RateLimiter, TooLong
from engine.telnet.own_password import change_own_password
from engine.telnet.payloads import char_status, room_info
from engine.telnet.render import FAILURE_STYLE, event_style
from engine.world.events import Event
from engine.world.model import Character

if TYPE_CHECKING:
    from engine.telnet.server import MudServer

COLOUR_WORDS: Final = frozenset({"@color", "@colour"})
PASSWORD_WORD: Final = "@password"

log = logging.getLogger("mudsim.telnet")


class Session:
    def __init__(self, server: MudServer, conn: Client, character: Character) -> None:
        self.server, self.conn, self.character = server, conn, character
        self.limiter = RateLimiter(server.config.commands_per_s, server.clock)
        self._lines: asyncio.Queue[Received] = asyncio.Queue()
        """Lines read and not yet run (at most ``queued_lines``), then None at the end."""
        self.replaced = False
        """Another login took this character over; this connection is closed."""

    # -- the player's side --------------------------------------------------------------
    async def run(self) -> None:
        """Until ``quit``, the end of the connection, or the world stopping."""
        sim, conn, me = self.server.sim, self.conn, self.character
        conn.say(f"You are {me.name}, in {sim.world.name}. Type 'help' for commands, "
                 "'@color off' for plain text, 'quit' to leave.")  # fmt: skip
        conn.say(describe_room(sim.world, sim.world.rooms[me.location], me))
        self.send_room()
        async with asyncio.TaskGroup() as group:
            reader = group.create_task(self._read(), name=f"{me.name}'s lines")
            try:
                await self._play()
            finally:
                reader.cancel()

    async def _read(self) -> None:
        """Lines from the client into the queue, as they come; past the queue's limit,
        dropped with one notice; the end of the connection ends the queue."""
        limit, dropping = self.server.config.queued_lines, False
        try:
            while (line := await self.conn.read_line()) is not None:
                if self._lines.qsize() < max(1, limit):
                    self._lines.put_nowait(line)
                    dropping = False
                elif not dropping:
                    dropping = True
                    self.conn.notice(f"Slow down: {limit} lines already wait their turn; "
                                     "the rest are dropped until they have run.")  # fmt: skip
        finally:
            self._lines.put_nowait(None)

    async def _play(self) -> None:
        conn, me = self.conn, self.character
        while not conn.closed:
            conn.prompt(f"{me.name}> ")
            line = await self._lines.get()
            if line is None:
                return
            if isinstance(line, TooLong):
                conn.notice(f"That line is {line.length:,} characters long; a line may be at "
                            f"most {self.server.max_line:,}. It was not run.")  # fmt: skip
            elif line is NOT_TEXT:
                conn.notice("That line held bytes that are not text in the encoding this "
                            "connection uses; it was not run.")  # fmt: skip
            elif isinstance(line, str) and line.strip():
                if line.strip().lower() in QUIT_WORDS:
                    conn.say("Goodbye. Your character stays where it is, asleep.")
                    return
                await self._line(line.strip())

    async def _line(self, line: str) -> None:
        if line.split()[0].lower() == PASSWORD_WORD:
            await self._password(line)
            return
        if self._own_command(line):
            return
        wait = self.limiter.reserve()
        if wait > 0:
            await asyncio.sleep(wait)
        if self.conn.closed:
            return
        command = self._command(line)
        if command is not None and command.spends_model_calls and not self._may_spend(command):
            return
        sim, me = self.server.sim, self.character
        await sim.gate("input")  # the line takes its exact place in the run's record
        before = self._where()
        try:
            result = sim.execute(me, line)
        except Exception as exc:  # a command's bug is one line; the session goes on
            log.error("%s's command %r failed", me.name, line, exc_info=exc)
            self.conn.notice(f"That went wrong on the server: {describe(exc)}")
            return
        self.conn.say(result.shown, "" if result.ok else FAILURE_STYLE)
        if command is not None and command.key == "who":
            self.conn.say(self.server.connected_line())
        if self._where() != before:
            self.send_room()

    def _may_spend(self, command: Command) -> bool:
        """Whether this player may run ``command``, which spends model calls: with the
        configured role freely, below it within the hourly budget (told if not)."""
        config = self.server.config
        if self.character.role.allows(config.model_call_role):
            return True
        if self.server.model_calls.take(self.character.id):
            return True
        budget = config.model_calls_per_hour
        more = (f"; a {self.character.role.value} may run {budget} of them an hour"
                if budget else "")  # fmt: skip
        self.conn.notice(f"{command.key} starts work for the world's model, which needs the "
                         f"{config.model_call_role.value} role here{more}. It was not run.")  # fmt: skip
        return False

    def _own_command(self, line: str) -> bool:
        """``@color on|off``: this connection's colour (not a world command)."""
        words = line.split()
        if words[0].lower() not in COLOUR_WORDS:
            return False
        wanted = words[1].lower() if len(words) > 1 else ""
        if wanted not in ("on", "off"):
            self.conn.notice("Type '@color on' or '@color off'.")
            return True
        self.conn.colour = wanted == "on"
        self.conn.say(f"Colour is {wanted}.")
        return True

    async def _password(self, line: str) -> None:
        """``@password``: the dialogue, its answers the next lines (what follows the word
        on its line is never read: a password there would have been shown as typed)."""
        if line.lower() != PASSWORD_WORD:
            self.conn.notice("Type @password alone: it asks for your password now, then the "
                             "new one twice, none of them shown.")  # fmt: skip
            return
        await change_own_password(self.conn, self.server.desk, self.character.name, self._answer)

    async def _answer(self, prompt: str) -> str | None:
        """``prompt``, then the next line (stripped; "" for one too long or not text), or
        None at the end (left in the queue for ``_play``)."""
        self.conn.prompt(prompt)
        line = await self._lines.get()
        if line is None:
            self._lines.put_nowait(None)
            return None
        return line.strip() if isinstance(line, str) else ""

    def _command(self, line: str) -> Command | None:
        """The command ``line`` runs, if the parser and the caller's role find one."""
        parsed = parse_line(line)
        if parsed is None:
            return None
        return self.server.sim.registry.resolve(parsed.verb, self.character.role).command

    def _where(self) -> tuple[str, tuple[tuple[str, str], ...], str]:
        room = self.server.sim.world.rooms.get(self.character.location)
        exits = tuple(sorted(room.exits.items())) if room else ()
        return self.character.location, exits, self.character.role.value

    # -- the world's side ---------------------------------------------------------------
    def show(self, event: Event, rendered: Rendered | None = None) -> None:
        """``event`` happened in this player's room (by someone else); ``rendered``: as
        ``Connection.say``."""
        self.conn.say(event.text, event_style(event.kind), rendered)

    def send_room(self) -> None:
        """GMCP ``Room.Info`` and ``Char.Status`` for where the character is now."""
        world = self.server.sim.world
        room = world.rooms.get(self.character.location)
        if room is not None:
            self.conn.gmcp("Room.Info", room_info(world, room))
        self.conn.gmcp("Char.Status", char_status(world, self.character))

    def take_over(self, address: str) -> None:
        """Another login with this character's password took it over."""
        self.replaced = True
        self.conn.close(f"{self.character.name} logged in again from {address}; this "
                        "connection is closed.")  # fmt: skip
