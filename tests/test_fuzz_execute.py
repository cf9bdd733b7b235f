"""Whatever is typed, executing it answers with a Result and never raises."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.commands import Result, default_registry
from engine.sim.simulation import Simulation

FUZZ = settings(
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    max_examples=150,
    deadline=None,
)

VERBS = sorted({name for c in default_registry().commands.values() for name in c.names})
WORDS = [
    "north",
    "n",
    "up",
    "stair",
    "hall",
    "#hall",
    "The Yard",
    "tower",
    "Ada",
    "#bo",
    "Pip",
    "me",
    "here",
    "lamp",
    "hole",
    "to",
    "|",
    '"',
    ":",
    "=",
    "../",
    "\x00",
    "\x1b[31m",
    "",
]

command_lines = st.tuples(
    st.sampled_from(VERBS),
    st.lists(st.one_of(st.sampled_from(WORDS), st.text(max_size=12)), max_size=5),
).map(lambda parts: " ".join([parts[0], *parts[1]]))


def check(result: object) -> None:
    assert isinstance(result, Result)
    assert isinstance(result.text, str)
    assert result.text.strip()


@FUZZ
@given(st.text(max_size=200))
def test_any_text_gets_a_result(sim: Simulation, line: str) -> None:
    check(sim.execute(sim.character("Pat"), line))


@FUZZ
@given(command_lines)
def test_any_command_with_any_arguments_gets_a_result(sim: Simulation, line: str) -> None:
    pat = sim.character("Pat")
    check(sim.execute(pat, line))
    assert pat.location in sim.world.rooms


@FUZZ
@given(command_lines)
def test_a_plain_player_gets_a_result_too(sim: Simulation, line: str) -> None:
    pip = sim.character("Pip")
    result = sim.execute(pip, line)
    check(result)
    assert pip.location in sim.world.rooms
