"""The world's chronicle as events happen (``vault/chronicle/``, ``engine.vault.chronicle``).

Every event that is remembered (speech, emotes, arrivals and departures, actions,
building; not ambient ones such as "pauses, deep in thought...") becomes one line in
``world.md`` (with its room's name) and one in its room's file, stamped with the
world clock's reading. The chronicle is for people to read; the world never depends
on it: a write that fails is one warning (then silence until a write works again),
and the event goes on to its observers all the same.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from engine.errors import MudsimError
from engine.vault.chronicle import ChronicleStore, Cleared, Entry
from engine.world import narrative
from engine.world.events import Event
from engine.world.world import World


@dataclass
class Chronicle:
    store: ChronicleStore
    world: World
    warn: Callable[[str], None]
    failing: bool = field(default=False, init=False)
    """The last write failed (and was warned about)."""

    @classmethod
    def open(cls, vault_root: Path, world: World, warn: Callable[[str], None]) -> Chronicle:
        """The chronicle of the vault at ``vault_root`` (nothing is written until an event)."""
        return cls(ChronicleStore(vault_root), world, warn)

    def record(self, event: Event) -> None:
        """Write ``event``'s lines (nothing for an ambient event); never raises."""
        if not event.remembered:
            return
        start = self.world.clock.start.date()
        sim = event.sim or self.world.clock.reading()
        moment = narrative.moment_of(sim) or self.world.clock.now
        room = self.world.rooms.get(event.room_id)
        name = room.name if room is not None else event.room_id
        entries = [
            Entry(self.store.world_path(), narrative.title(f"Chronicle of {self.world.name}",
                  sim, start=start), narrative.line(event.text, sim, start=start, room=name)),
            Entry(self.store.room_path(event.room_id), narrative.title(name, sim, start=start),
                  narrative.line(event.text, sim, start=start)),
        ]  # fmt: skip
        try:
            self.store.add(moment.date(), entries)
        except (OSError, MudsimError) as exc:
            if not self.failing:
                self.warn(
                    f"the chronicle ({self.store.folder}) could not be written: {exc}; "
                    "the world goes on without it"
                )
            self.failing = True
            return
        self.failing = False

    def tail(self, room_id: str | None, count: int) -> list[str]:
        """The last ``count`` lines of the world's chronicle, or of ``room_id``'s."""
        path = self.store.world_path() if room_id is None else self.store.room_path(room_id)
        return self.store.tail(path, count)

    def close(self) -> None:
        """Close the files the store keeps open (it opens them again if written to)."""
        self.store.close()

    def clear(self) -> list[Cleared]:
        return self.store.clear()
