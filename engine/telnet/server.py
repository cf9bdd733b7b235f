"""The world served over telnet: the listener, who is connected, what reaches whom.

    server = MudServer(sim, ServeOptions(port=4000))
    await server.start()          # listening; server.port says where
    ...                           # the agents run beside it (engine.telnet.serve)
    await server.close()          # every client told, sessions ended, listener closed

telnetlib3 negotiates each connection, then hands it to ``_shell``, which gives it to
this server's ``Supervisor``: every connection is a task the server owns, awaited when
it closes (and cancelled if it will not end), its unexpected errors logged with their
traceback. A connection runs the login dialogue (``engine.telnet.login``, within
``login_seconds``), then a ``Session`` for the character.

What happens in the world reaches every session whose character is in the room (but
its actor) the moment ``Simulation.deliver`` hands it to ``sim.listeners``. A login is
one per character: a second login with the password takes the character over and
closes the first connection. When a session ends, the world is saved (where the
player stood) and the others in the room are told.

Limits: ``max_connections`` players at once (one more for an admin; one more player is
told the world is full), connections logging in counted apart and capped, the longest
waiting making room (``engine.telnet.waiting_room``), ``idle_minutes`` of silence (telnetlib3's timer), the vault's line limit,
``commands_per_s``; see ``engine.telnet.settings``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import time
from pathlib import Path
from typing import Final

import telnetlib3
from telnetlib3 import TelnetReaderUnicode, TelnetWriterUnicode
from telnetlib3.telopt import MSSP

from engine.agents.supervisor import Supervisor
from engine.errors import MudsimError, UnsafeNameError, UsageError, VaultError
from engine.sim.simulation import Simulation
from engine.sim.world_apply import occupied_folders
from engine.telnet.admission import Clock, ConnectionGate, LoginThrottle
from engine.telnet.client import Client, Rendered
from engine.telnet.connection import Connection
from engine.telnet.limits import HourlyBudget
from engine.telnet.login import Desk, LoggedIn, log_in
from engine.telnet.password_checks import PasswordChecks
from engine.telnet.payloads import mssp
from engine.telnet.protocol import MudProtocol, protocol_for, quiet_protocol_errors
from engine.telnet.session import Session
from engine.telnet.settings import ServeOptions, TelnetConfig, load_config
from engine.telnet.waiting_room import EVICTED, WaitingRoom
from engine.vault.accounts import AccountStore
from engine.vault.bans import Ban, BanStore
from engine.vault.run_log import FORMAT
from engine.vault.world_store import start_room
from engine.world.events import Event, EventKind
from engine.world.folder_names import safe_name
from engine.world.model import Character, Role

CONNECT_WAIT: Final = 1.5
"""Seconds telnetlib3 waits for a client's answers to its offers before the dialogue
starts anyway (a raw socket answers none)."""
CLOSE_GRACE: Final = 5.0
"""Seconds sessions get to end once told the world is stopping."""
STOPPING: Final = "The world is stopping now; it is being saved. Goodbye."

log = logging.getLogger("mudsim.telnet")


class MudServer:
    def __init__(
        self, sim: Simulation, options: ServeOptions, *, config: TelnetConfig | None = None,
        clock: Clock = time.monotonic,
        log_to_stderr: bool = False,
    ) -> None:  # fmt: skip
        self.sim, self.options = sim, options
        self.config = config if config is not None else load_config(sim.vault.root)
        self.clock = clock
        """What rate limits count time by (tests pass their own)."""
        self.max_line = sim.settings.limits.max_command_chars
        config = self.config
        self.gate = ConnectionGate(clock, total=config.max_connections + 1 + config.logging_in_most,
                                   per_address=config.max_per_address,
                                   new_per_minute=config.new_connections_per_minute)  # fmt: skip
        """Connections by address, telnet's and the web's together: the players (one more
        for an admin) and those logging in."""
        throttle = LoginThrottle(clock, free=config.login_free_failures,
                                 first=config.login_delay_s, longest=config.login_max_delay_s)  # fmt: skip
        self.waiting: WaitingRoom[Client | MudProtocol] = WaitingRoom(
            config.logging_in_most, config.max_logging_in_per_address, clock, throttle.failures
        )
        """The clients in the login dialogue (``engine.telnet.waiting_room``)."""
        self.checks = PasswordChecks(throttle)
        """Password checks, in turn (``engine.telnet.password_checks``)."""
        self.bans = BanStore(sim.vault.root)
        self.desk = Desk(
            sim.world.name, AccountStore(sim.vault.root), self.checks,
            self.character_named, self.name_free, self.name_banned, open=options.open,
        )  # fmt: skip
        self.model_calls = HourlyBudget(config.model_calls_per_hour, clock)
        """Commands that spend model calls, by character, for players below the role."""
        self.supervisor = Supervisor(self._failed)
        self.connections: set[Client] = set()
        """Clients past negotiation (in the dialogue or playing), telnet's and the web's."""
        self.sessions: dict[str, Session] = {}
        """Character id -> the session playing it."""
        self.listener: telnetlib3.Server | None = None
        self.started = time.time()
        self.stopping = False
        self.log_to_stderr = log_to_stderr
        """Logins, logouts and failures go to stderr too (``mudsim serve``)."""
        self._log: list[logging.Handler] | None = None
        sim.listeners.append(self._heard)

    # -- listening ----------------------------------------------------------------------
    async def start(self, *, listen: bool = True) -> None:
        """Listen on the options' address and port (raises ``UsageError`` if it cannot);
        ``listen=False``: everything but the telnet listener (``serve --web`` alone)."""
        if listen:
            quiet_protocol_errors()
            try:
                self.listener = await telnetlib3.create_server(
                    host=self.options.bind, port=self.options.port,
                    protocol_factory=protocol_for(self), shell=self._shell, line_mode=True,
                    encoding="utf8", encoding_errors="replace", connect_maxwait=CONNECT_WAIT,
                    timeout=self.config.idle_seconds, ssl=self.options.tls,
                )  # fmt: skip
            except OSError as exc:
                reason = os.strerror(exc.errno) if exc.errno else str(exc)
                raise UsageError(f"cannot listen on {self.options.bind} port "
                                 f"{self.options.port}: {reason}") from exc  # fmt: skip
        self.started = time.time()
        self._log = attach_connection_log(self.sim.vault.root, to_stderr=self.log_to_stderr)
        self.sim.doorkeeper = self
        self._asleep_at_start()
        if listen:
            log.info("serving %s on %s port %d", self.sim.world.name, self.options.bind,
                     self.port)  # fmt: skip
        log.info("%s", self.limits_line())

    def limits_line(self) -> str:
        """The caps, as said at start (``config/telnet.md``)."""
        c = self.config
        return (f"limits: {c.max_connections} players (one more for an admin), "
                f"{c.logging_in_most} logging in at once ({c.max_logging_in_per_address} "
                f"from one address) for at most {c.login_seconds:g} s, "
                f"{c.max_per_address} connections from one address; password checks slow "
                f"after {c.login_free_failures} failures: {c.login_delay_s:g} s, doubling "
                f"to {c.login_max_delay_s:g} s (config/telnet.md)")  # fmt: skip

    @property
    def port(self) -> int:
        """The port listened on (the chosen one when the options said 0)."""
        sockets = self.listener.sockets if self.listener is not None else None
        return int(sockets[0].getsockname()[1]) if sockets else self.options.port

    async def close(self, notice: str = STOPPING) -> None:
        """Tell every client ``notice``, end every connection, stop listening."""
        self.stopping = True
        if self.sim.doorkeeper is self:
            self.sim.doorkeeper = None
        with contextlib.suppress(ValueError):
            self.sim.listeners.remove(self._heard)
        for conn in list(self.connections):
            conn.close(notice)
        self.checks.wake()  # the checks of those still logging in are dropped
        if self.listener is not None:
            self.listener.close()  # and connections still negotiating
        if not await self.supervisor.wait(CLOSE_GRACE):
            await self.supervisor.aclose()
        if self.listener is not None:
            await self.listener.wait_closed()
        self.checks.close()
        if self._log is not None:
            detach_connection_log(self._log)
            self._log = None

    # -- telnetlib3's side (engine.telnet.protocol.Host) --------------------------------
    def admit(self, protocol: MudProtocol) -> str | None:
        refused = self.admit_address(protocol.address)
        if refused is None:  # it waits from now, while its options are negotiated
            self.waiting.enter(protocol, protocol.address)
        return refused

    def admit_address(self, address: str) -> str | None:
        """None: a new connection from ``address`` may come in (counted until
        ``left_address``); else what to tell it before it is closed. Telnet's and the
        web's connections are counted together."""
        if self.stopping:
            return "The world is stopping; try again later."
        try:
            banned = self.bans.address_ban(address)
        except MudsimError as exc:  # an unreadable bans file keeps nobody out, loudly
            log.error("the bans could not be read: %s", exc)
            banned = None
        if banned is not None:
            return "Your address is banned from this world."
        if (busy := self._make_room(address)) is not None:
            return busy
        refused = self.gate.admit(address)
        if refused is None:
            return None
        if refused.first:
            log.warning("turned away a connection from %s: %s", address, refused.text)
        return refused.text

    def _make_room(self, address: str) -> str | None:
        """None when a connection from ``address`` may start logging in (the one that has
        waited longest closed to make room when every place is taken); else why not."""
        refused, victim = self.waiting.admit(
            address, logging_in=len(self.waiting), mine=self.waiting.from_address(address)
        )
        if victim is not None:
            log.info("closed a connection logging in from %s to make room", victim.address)
            victim.close(EVICTED)
        return refused

    def left_address(self, address: str) -> None:
        """A connection ``admit_address`` let in is gone."""
        self.gate.left(address)
        self.checks.wake()  # its password check, if one waits, is dropped

    def agreed(self, protocol: MudProtocol, option: bytes) -> None:
        if option == MSSP and protocol.writer is not None:
            protocol.writer.send_mssp(mssp(self.sim.world.name, len(self.sessions), self.started))

    def left(self, protocol: MudProtocol) -> None:
        self.waiting.leave(protocol)
        self.left_address(protocol.address)

    def idle_notice(self) -> str:
        minutes = f"{self.config.idle_minutes:g}"
        return (f"Nothing came from you for {minutes} minute{'' if minutes == '1' else 's'}: "
                "this connection is closed. Your character stays where it is.")  # fmt: skip

    async def _shell(self, reader: object, writer: object) -> None:
        """telnetlib3 calls this once a connection's negotiation is done."""
        assert isinstance(reader, TelnetReaderUnicode)
        assert isinstance(writer, TelnetWriterUnicode)
        if self.stopping:
            writer.close()
            return
        conn = Connection(reader, writer, max_line=self.max_line,
                          max_output=self.config.max_output_kb * 1024)  # fmt: skip
        if not self.waiting.replace(writer.protocol, conn):  # closed to make room meanwhile
            writer.close()
            return
        self.supervisor.spawn(self.serve_client(conn),
                              name=f"the telnet connection from {conn.address}")  # fmt: skip

    # -- one connection -----------------------------------------------------------------
    async def serve_client(self, conn: Client) -> None:
        """The login dialogue, then the session, until the client leaves (never raises:
        a failure is logged and the client told). ``admit_address`` first."""
        self.connections.add(conn)
        self.waiting.enter(conn, conn.address)
        try:
            try:
                async with asyncio.timeout(self.config.login_seconds):
                    who = await log_in(conn, self.desk)
            except TimeoutError:
                conn.close("Logging in took too long; goodbye.")
                return
            finally:
                self.waiting.leave(conn)
            if who is None or conn.closed or self.stopping:
                return
            if (full := self._full_for(who)) is not None:
                conn.close(full)
                return
            session = self._enter(who, conn)
            try:
                await session.run()
            finally:
                self._leave(session)
        except Exception as exc:
            log.error("the connection from %s failed", conn.address, exc_info=exc)
            conn.close("Something went wrong on the server; this connection is closed.")
        finally:
            self.connections.discard(conn)
            conn.close()

    def _full_for(self, who: LoggedIn) -> str | None:
        """Why ``who`` may not play now (the world holds ``max_connections`` players, and
        one more for an admin), or None; taking over one's own character always may."""
        if who.character is not None and who.character.id in self.sessions:
            return None
        most = self.config.max_connections + (who.account.role == Role.ADMIN)
        if len(self.sessions) < most:
            return None
        return f"The world is full ({self.config.max_connections} players); try again later."

    def _enter(self, who: LoggedIn, conn: Client) -> Session:
        """The session for who logged in: their character made, given its account's role
        (roles live in accounts: none is ``player``) and woken; a session already
        playing it is taken over."""
        role = who.account.role or Role.PLAYER
        character = who.character or self._new_player(who.account.name, role)
        if character.role != role:
            log.info("%s's role is %s from its account (was %s)", character.name,
                        role.value, character.role.value)  # fmt: skip
            self.sim.set_role(character, role)
        self.sim.set_asleep(character, False)
        session = Session(self, conn, character)
        previous = self.sessions.get(character.id)
        self.sessions[character.id] = session
        if previous is not None:
            previous.take_over(conn.address)
        else:
            self._tell_room(character, f"({character.name} has connected and wakes up.)")
        log.info("%s logged in from %s", character.name, conn.address)
        return session

    def _leave(self, session: Session) -> None:
        """A session ended: its character stays where it is, asleep, until its player
        comes back."""
        character = session.character
        if self.sessions.get(character.id) is not session:
            return  # taken over: the new session plays on
        del self.sessions[character.id]
        if character.id in self.sim.world.characters:
            self.sim.set_asleep(character, True)
        self._tell_room(character, f"({character.name} has disconnected and falls asleep.)")
        log.info("%s logged out (from %s)", character.name, session.conn.address)
        if not self.stopping:  # stopping: the world is saved once, after the last session
            self._save_world()

    def _asleep_at_start(self) -> None:
        """Players with an account who are not connected are asleep."""
        try:
            names = {a.name.casefold() for a in self.desk.accounts.load()}
        except MudsimError as exc:
            log.error("the accounts could not be read: %s", exc)
            return
        for character in self.sim.world.characters.values():
            if (character.type == "player" and character.name.casefold() in names
                    and character.id not in self.sessions):  # fmt: skip
                self.sim.set_asleep(character, True)

    # -- moderation (engine.commands.context.Doorkeeper) --------------------------------
    def connected_names(self) -> list[str]:
        return [s.character.name for s in self.sessions.values()]

    def disconnect(self, name: str, message: str) -> bool:
        wanted = name.casefold()
        found = [s for s in self.sessions.values() if s.character.name.casefold() == wanted]
        for session in found:
            session.conn.close(message)
        return bool(found)

    def addresses_of(self, name: str) -> list[str]:
        wanted = name.casefold()
        return [s.conn.address for s in self.sessions.values()
                if s.character.name.casefold() == wanted]  # fmt: skip

    def disconnect_address(self, address: str, message: str) -> int:
        within = Ban(address, None)  # an address, or a network of them
        closing = [c for c in self.connections if not c.closed and within.covers_address(c.address)]
        for conn in closing:
            conn.close(message)
        return len(closing)

    def _new_player(self, name: str, role: Role | None) -> Character:
        world = self.sim.world
        folder = safe_name(name, what="character name")
        character_id = folder.lower()
        if world.has_id(character_id):
            character_id = f"{character_id}-player"
        character = Character(
            id=character_id, name=name, type="player", location=start_room(world).id,
            role=role or Role.PLAYER, description=f"{name}, newly arrived.",
        )  # fmt: skip
        self.sim.add_character(character)
        log.info("made the player character %s (%s) at %s", name, character.role.value,
                    world.rooms[character.location].name)  # fmt: skip
        return character

    # -- what the login dialogue asks ---------------------------------------------------
    def character_named(self, name: str) -> Character | None:
        wanted = name.casefold()
        return next((c for c in self.sim.world.characters.values()
                     if c.name.casefold() == wanted), None)  # fmt: skip

    def name_banned(self, name: str) -> str | None:
        """What a login as ``name`` is told when the name is banned, or None."""
        try:
            found = self.bans.name_ban(name)
        except MudsimError as exc:
            log.error("the bans could not be read: %s", exc)
            return None
        if found is None:
            return None
        until = "" if found.until is None else (
            f" until {found.until.strftime('%Y-%m-%d %H:%M')} UTC")  # fmt: skip
        return f"{name} is banned from this world{until}."

    def name_free(self, name: str) -> str | None:
        try:
            folder = safe_name(name, what="character name")
        except UnsafeNameError as exc:
            return str(exc)
        world = self.sim.world
        taken = {c.folder.lower() for c in world.characters.values()}
        if folder.lower() in taken or folder in occupied_folders(self.sim.vault, world):
            return f"The name {name} is taken; pick another."
        return None

    # -- the world's side ---------------------------------------------------------------
    def _heard(self, event: Event) -> None:
        """A world event: to every session in its room but its actor's (never raises:
        ``Simulation.deliver`` is in the middle of a command)."""
        try:
            rendered: Rendered = {}
            for session in list(self.sessions.values()):
                character = session.character
                if character.location != event.room_id or character.id == event.actor_id:
                    continue
                session.show(event, rendered)
                if event.kind is EventKind.BUILDING:  # its exits may have changed
                    session.send_room()
        except Exception:
            log.exception("showing %r to the connected players failed", event)

    def connected_line(self) -> str:
        """``who``'s addition: who is connected now, and where."""
        world = self.sim.world
        people = sorted(self.sessions.values(), key=lambda s: s.character.name.casefold())
        names = [f"{s.character.name} ({world.rooms[s.character.location].name})" for s in people]
        return f"Connected now: {', '.join(names) if names else 'nobody'}."

    def _tell_room(self, character: Character, text: str) -> None:
        for session in list(self.sessions.values()):
            other = session.character
            if other.id != character.id and other.location == character.location:
                session.conn.notice(text)

    def _save_world(self) -> None:
        try:
            self.sim.vault.save_world(self.sim.world)
        except (OSError, MudsimError) as exc:
            self.sim.warn(f"the world could not be saved now ({exc}); the next save tries again")

    def _failed(self, message: str, exc: BaseException) -> None:
        log.error("%s", message, exc_info=exc)
        self.sim.warn(message)


def attach_connection_log(root: Path, *, to_stderr: bool = False) -> list[logging.Handler]:
    """Send ``mudsim.telnet`` (logins, logouts, failures, connections turned away) to
    ``logs/telnet.log`` in the vault, and to stderr with ``to_stderr``."""
    path = root / "logs" / "telnet.log"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handlers: list[logging.Handler] = [logging.FileHandler(path, encoding="utf-8")]
    except OSError as exc:
        raise VaultError(f"cannot open the connection log {path}: {exc}") from exc
    handlers[0].setFormatter(logging.Formatter(FORMAT))
    if to_stderr:
        handlers.append(logging.StreamHandler(sys.stderr))
        handlers[-1].setFormatter(logging.Formatter("mudsim: %(message)s"))
    for handler in handlers:
        handler.setLevel(logging.INFO)
        log.addHandler(handler)
    log.setLevel(logging.INFO)
    return handlers


def detach_connection_log(handlers: list[logging.Handler]) -> None:
    for handler in handlers:
        log.removeHandler(handler)
        handler.close()
