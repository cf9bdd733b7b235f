"""A logged-in player: their lines become commands, what happens in their room reaches
them as it happens.

Each line runs as ``play`` runs it: at its own place in the run's record (the
``input`` gate), through ``Simulation.execute`` (the parser, permissions and limits of
``do``), its result shown at once (a failure in red). A line received whole is run even
if the client leaves right after: what it did is committed like any command, and a
line cut off by the end of the connection never runs. ``quit`` leaves; ``@color
on|off`` is the session's own (plain text for this connection); ``who`` adds who is
connected. At most ``commands_per_s`` lines a second run; the rest are dropped, with
one notice per run of them. GMCP ``Room.Info`` and ``Char.Status`` follow every move,
and every change to the room's exits.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Final

from engine.agents.thinker import describe
from engine.commands import parse_line
from engine.commands.helpers import describe_room
from engine.sim.repl import QUIT_WORDS
from engine.telnet.client import NOT_TEXT, Client, Rendered
from engine.telnet.limits import Admission, RateLimiter, TooLong
from engine.telnet.payloads import char_status, room_info
from engine.telnet.render import FAILURE_STYLE, event_style
from engine.world.events import Event
from engine.world.model import Character

if TYPE_CHECKING:
    from engine.telnet.server import MudServer

COLOUR_WORDS: Final = frozenset({"@color", "@colour"})

log = logging.getLogger("mudsim.telnet")


class Session:
    def __init__(self, server: MudServer, conn: Client, character: Character) -> None:
        self.server, self.conn, self.character = server, conn, character
        self.limiter = RateLimiter(server.config.commands_per_s, server.clock)
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
        while not conn.closed:
            conn.prompt(f"{me.name}> ")
            line = await conn.read_line()
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
                    conn.say("Goodbye. Your character stays where it is.")
                    return
                await self._line(line.strip())

    async def _line(self, line: str) -> None:
        if self._own_command(line):
            return
        admission = self.limiter.admit()
        if admission is Admission.DROP_AND_SAY:
            rate = f"{self.server.config.commands_per_s:g}"
            self.conn.notice(f"Too fast: at most {rate} lines a second run; the rest are "
                             "dropped until you slow down.")  # fmt: skip
        if admission is not Admission.RUN:
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
        if self._is_who(line):
            self.conn.say(self.server.connected_line())
        if self._where() != before:
            self.send_room()

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

    def _is_who(self, line: str) -> bool:
        parsed = parse_line(line)
        if parsed is None:
            return False
        found = self.server.sim.registry.resolve(parsed.verb, self.character.role).command
        return found is not None and found.key == "who"

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
