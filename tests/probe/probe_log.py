"""Hand-built journals for the probe's tests: records made directly, in the exact
text shapes the simulation writes (``engine.commands``, ``Simulation.deliver``)."""

from __future__ import annotations

from collections.abc import Sequence

from helpers import FIXTURE_WORLD

from engine.memory.record import MemoryKind, MemoryRecord
from engine.world.loader import parse_world
from engine.world.world import World

HALL = "The Hall\nA long hall with a stone floor.\nExits: north (The Yard), stair (The Tower).\nYou see a brass lamp."
YARD = "The Yard\nA muddy yard.\nExits: south (The Hall).\nYou see an old well."


def fixture_world() -> World:
    return parse_world(FIXTURE_WORLD, source="fixture.yaml")


class Log:
    """One agent's journal, built a memory at a time; ``room`` is where it is now."""

    def __init__(self, agent: str, room: str) -> None:
        self.agent = agent
        self.room = room
        self.records: list[MemoryRecord] = []

    def add(
        self, kind: MemoryKind, text: str, *, present: Sequence[str] = (),
        command: str | None = None, speaker: str | None = None, failed: bool = False,
    ) -> int:  # fmt: skip
        seq = len(self.records)
        self.records.append(
            MemoryRecord(
                seq,
                f"2026-01-01T00:00:{seq % 60:02d}Z",
                kind,
                text,
                location=self.room,
                occupants=list(present),
                command=command,
                failed=failed,
                sim=f"2026-01-01T08:{seq % 60:02d}",
                speaker=speaker,
            )
        )
        return seq

    def heard(self, who: str, quote: str, present: Sequence[str] = ()) -> int:
        return self.add(
            MemoryKind.OBSERVATION, f'{who} says, "{quote}"', present=present, speaker=who
        )

    def saw(self, text: str, present: Sequence[str] = ()) -> int:
        return self.add(MemoryKind.OBSERVATION, text, present=present)

    def did(self, command: str, text: str, present: Sequence[str] = ()) -> int:
        return self.add(MemoryKind.RESULT, text, present=present, command=command)

    def said(self, quote: str, present: Sequence[str] = ()) -> int:
        return self.add(
            MemoryKind.RESULT, f'You say, "{quote}"', present=present, command=f"say {quote}",
            speaker=self.agent,
        )  # fmt: skip

    def thought(self, thought: str) -> int:
        return self.add(MemoryKind.THOUGHT, f"You think: {thought}", command=f"think {thought}")

    def went(self, command: str, exit_name: str, room: str, description: str) -> int:
        self.room = room
        name = description.splitlines()[0]
        return self.did(command, f"You go {exit_name} to {name}.\n{description}")

    def failed(self, command: str, why: str) -> int:
        return self.add(
            MemoryKind.RESULT, f"You tried: {command}\nThis failed because: {why}",
            command=command, failed=True,
        )  # fmt: skip


def ada_log() -> list[MemoryRecord]:
    """Ada: the hall, then the yard, then back to the hall (seqs in the comments)."""
    log = Log("Ada", "hall")
    log.did("look", HALL + "\nAlso here: Pat and Pip.", ["Pat", "Pip"])  # 0
    log.heard("Pat", "The bell rings at noon.", ["Pat", "Pip"])  # 1
    log.saw("Pat leaves north to The Yard.", ["Pip"])  # 2
    log.said("Goodbye, Pat.", ["Pip"])  # 3
    log.thought("I will go to the yard")  # 4
    log.went("go north", "north", "yard", YARD + "\nAlso here: Bo, Pat and Bea.")  # 5
    log.heard("Bo", "The well is dry this year.", ["Bo", "Pat", "Bea"])  # 6
    log.heard("Bea", "I dug the cellar myself.", ["Bo", "Pat", "Bea"])  # 7
    log.saw("Bo leaves south to The Hall.", ["Pat", "Bea"])  # 8
    log.did("examine well", "an old well: Deep and cold.", ["Pat", "Bea"])  # 9
    log.saw("Pip arrives from The Hall.", ["Pat", "Bea", "Pip"])  # 10
    log.heard("Pip", "Where is everyone going?", ["Pat", "Bea", "Pip"])  # 11
    log.did("emote waves", "Ada waves", ["Pat", "Bea", "Pip"])  # 12
    log.went("go south", "south", "hall", HALL + "\nAlso here: Bo.")  # 13
    log.heard("Bo", "The forge is cold tonight.", ["Bo"])  # 14
    log.failed("go nowhere", "You don't see any exit or room called 'nowhere'.")  # 15
    log.saw("Bo leaves for The Tower.")  # 16: an exit that is no direction
    log.did("look", HALL + "\nNobody else is here.")  # 17
    return log.records


def bo_log() -> list[MemoryRecord]:
    """Bo: the yard before Ada came (quotes Ada never heard), then the hall and tower."""
    log = Log("Bo", "yard")
    log.did("look", YARD + "\nAlso here: Bea.", ["Bea"])  # 0
    log.heard("Bea", "Hide the key under the well.", ["Bea"])  # 1
    log.saw("Pat arrives from The Hall.", ["Bea", "Pat"])  # 2
    log.heard("Pat", "Meet me in the tower at dusk.", ["Bea", "Pat"])  # 3
    log.saw("Ada arrives from The Hall.", ["Bea", "Pat", "Ada"])  # 4
    log.said("The well is dry this year.", ["Bea", "Pat", "Ada"])  # 5
    log.heard("Bea", "I dug the cellar myself.", ["Bea", "Pat", "Ada"])  # 6
    log.went("go south", "south", "hall", HALL + "\nAlso here: Pip.")  # 7
    log.saw("Ada arrives from The Yard.", ["Pip", "Ada"])  # 8
    log.said("The forge is cold tonight.", ["Ada"])  # 9
    log.went("go stair", "stair", "tower", "The Tower\nA windy room at the top of a stair.")  # 10
    return log.records


def journals() -> dict[str, list[MemoryRecord]]:
    return {"Ada": ada_log(), "Bo": bo_log()}
