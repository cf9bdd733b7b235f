"""What the benchmark scripts share: the repeat count, a test world, a median summary."""

from __future__ import annotations

import statistics

REPEATS = 5


def rooms_yaml(rooms: int) -> list[str]:
    """A bench world's head: its name and ``rooms`` plain rooms in a row, east to east."""
    lines = ["name: Bench", "rooms:"]
    for r in range(rooms):
        lines += [f"  - id: r{r}", f"    name: Room {r}", "    description: A plain room."]
        if r + 1 < rooms:
            lines.append(f"    exits: {{east: r{r + 1}}}")
    return lines


def world_yaml(rooms: int, characters: int) -> str:
    lines = [*rooms_yaml(rooms), "characters:"]
    for c in range(characters):
        lines += [
            f"  - name: Agent{c}",
            "    type: agent",
            f"    location: r{c % rooms}",
            "    profile: A tester.",
        ]
    return "\n".join(lines) + "\n"


def summary(unit: str, values: list[float]) -> dict[str, float]:
    return {unit: statistics.median(values), f"{unit}_min": min(values), f"{unit}_max": max(values)}
