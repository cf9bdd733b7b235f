"""The world clock in the vault (``world/clock.json``): saved with the world, kept over
a restart, a vault from before the clock (no file, old journal lines) loading as it
was, and a clock file that is not a clock refused in one line naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import FIXTURE_WORLD, run

from engine.cli import main
from engine.errors import VaultError
from engine.memory.record import MemoryKind, MemoryRecord
from engine.sim.simulation import Simulation
from engine.sim.world_apply import apply_world
from engine.vault import world_store

CLOCKED = FIXTURE_WORLD.replace(
    "name: Fixture\n", "name: Fixture\nclock: {start: 2030-05-04T06:00, minutes_per_round: 15}\n"
)


@pytest.fixture
def clocked_file(tmp_path: Path) -> Path:
    path = tmp_path / "clocked.yaml"
    path.write_text(CLOCKED, encoding="utf-8")
    return path


def clock_file(vault_dir: Path) -> Path:
    return vault_dir / "world" / "clock.json"


def cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    """``mudsim argv`` in this process: (exit code, stdout, stderr)."""
    code = main([str(arg) for arg in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_seeding_saves_the_world_file_clock(vault_dir: Path, clocked_file: Path) -> None:
    Simulation.open(vault_dir, clocked_file).close()
    assert json.loads(clock_file(vault_dir).read_text(encoding="utf-8")) == {
        "start": "2030-05-04T06:00",
        "minutes_per_round": 15,
        "now": "2030-05-04T06:00",
        "turns": 0,
    }


def test_the_clock_survives_a_restart(vault_dir: Path, clocked_file: Path) -> None:
    sim = Simulation.open(vault_dir, clocked_file)
    for _ in range(2 * 3 + 1):  # two rounds of three agents, and one turn into the third
        sim.turn_taken(3)
    assert sim.clock.reading() == "2030-05-04T06:30"
    sim.save()
    sim.close()
    saved = json.loads(clock_file(vault_dir).read_text(encoding="utf-8"))
    assert (saved["now"], saved["turns"]) == ("2030-05-04T06:30", 1)

    again = Simulation.open(vault_dir, clocked_file)
    try:
        assert again.clock.reading() == "2030-05-04T06:30"
        assert again.clock.turns == 1
        again.turn_taken(3)
        again.turn_taken(3)
        assert again.clock.reading() == "2030-05-04T06:45", "the round goes on where it stood"
    finally:
        again.close()


def test_the_vault_wins_over_a_changed_world_file(
    vault_dir: Path, clocked_file: Path, world_file: Path
) -> None:
    Simulation.open(vault_dir, clocked_file).close()
    sim = Simulation.open(vault_dir, world_file)  # the fixture world: the default clock
    try:
        assert sim.clock.reading() == "2030-05-04T06:00"
        assert sim.clock.minutes_per_round == 15
    finally:
        sim.close()


def test_a_kill_keeps_every_completed_round_and_loses_only_a_part_round(
    vault_dir: Path, world_file: Path
) -> None:
    sim = Simulation.open(vault_dir, world_file)
    sim.turn_taken(2)
    sim.turn_taken(2)  # a round: saved at once
    sim.turn_taken(2)  # half of the next
    sim.close()  # no save: as if the process were killed
    again = Simulation.open(vault_dir, world_file)
    try:
        assert again.clock.reading() == "2026-01-01T08:10"
        assert again.clock.turns == 0
    finally:
        again.close()


OLD_LINE = (
    '{"seq":0,"at":"2025-06-01T10:00:00.000000Z","kind":"observation",'
    '"text":"Bo says, \\"Morning.\\"","location":"hall","occupants":["Bo"],'
    '"command":null,"reason":null,"failed":false}'
)
"""A journal line as mudsim wrote it before the world clock: no ``sim``, no ``speaker``."""


def test_an_old_journal_line_loads() -> None:
    memory = MemoryRecord.from_json(OLD_LINE)
    assert (memory.seq, memory.kind, memory.text) == (
        0,
        MemoryKind.OBSERVATION,
        'Bo says, "Morning."',
    )
    assert memory.sim is None
    assert memory.speaker is None


def test_a_vault_from_before_the_clock_loads_unchanged(
    vault_dir: Path, clocked_file: Path, world_file: Path
) -> None:
    """No clock.json and old journal lines: it opens, its memories are as they were, and
    its clock starts at the world file's start (the fixture world's: the default)."""
    Simulation.open(vault_dir, world_file).close()
    clock_file(vault_dir).unlink()
    journal = vault_dir / "agents" / "Ada" / "memories.jsonl"
    journal.write_text(OLD_LINE + "\n", encoding="utf-8")
    state = vault_dir / "agents" / "Ada" / "memory-state.json"
    state.write_text(json.dumps({"memories": 1}), encoding="utf-8")

    sim = Simulation.open(vault_dir, clocked_file)
    try:
        assert sim.clock.reading() == "2030-05-04T06:00", "the world file's start"
        assert sim.clock.minutes_per_round == 15
        (old,) = sim.minds["ada"].tail
        assert (old.text, old.sim, old.speaker) == ('Bo says, "Morning."', None, None)
        assert run(sim, "Ada", "look").ok
        assert sim.minds["ada"].tail[-1].sim == "2030-05-04T06:00"
    finally:
        sim.close()
    assert journal.read_text(encoding="utf-8").startswith(OLD_LINE + "\n"), "old lines untouched"


def test_a_vault_from_before_the_clock_gets_a_clock_file_at_its_first_save(
    vault_dir: Path, world_file: Path
) -> None:
    Simulation.open(vault_dir, world_file).close()
    clock_file(vault_dir).unlink()
    assert world_store.load_clock(vault_dir) is None
    sim = Simulation.open(vault_dir, world_file)
    assert not clock_file(vault_dir).exists(), "opening writes nothing"
    sim.save()
    sim.close()
    clock = world_store.load_clock(vault_dir)
    assert clock is not None
    assert clock.reading() == "2026-01-01T08:00"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{not json", "is not valid JSON (line 1)"),
        ("[]", "is not a valid world clock: a clock is a mapping"),
        (
            '{"start": "2026-01-01T08:00"}',
            "is not a valid world clock: missing 'minutes_per_round'",
        ),
        (
            '{"start": "2026-01-01T08:00", "minutes_per_round": 10, "now": "later", "turns": 0}',
            "is not a valid world clock: now: 'later' is not a date and time",
        ),
        (
            '{"start": "2026-01-01T08:00", "minutes_per_round": 10, "now": "2026-01-01T08:00",'
            ' "turns": 0, "speed": 2}',
            "is not a valid world clock: unknown key 'speed'",
        ),
        ("\udcff", "cannot read"),
        ('{"turns": ' + "9" * 5000 + "}", "is not a valid world clock: Exceeds the limit"),
    ],
)
def test_a_corrupt_clock_file_is_one_clear_error(
    vault_dir: Path, world_file: Path, text: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    Simulation.open(vault_dir, world_file).close()
    path = clock_file(vault_dir)
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    before = {p: p.read_bytes() for p in vault_dir.rglob("*") if p.is_file() and p.name != ".lock"}

    with pytest.raises(VaultError) as caught:
        Simulation.open(vault_dir, world_file)
    assert str(caught.value).startswith(f"{path} ") or str(caught.value).startswith(
        f"cannot read {path}"
    ), caught.value
    assert says in str(caught.value)

    for argv in (("do", world_file, "--vault", vault_dir, "look"),
                 ("status", "--vault", vault_dir, "--json")):  # fmt: skip
        code, out, err = cli(capsys, *argv)
        assert (code, out) == (2, "")
        assert err.startswith("mudsim: "), err
        assert err.count("\n") == 1, err
        assert str(path) in err
    after = {p: p.read_bytes() for p in vault_dir.rglob("*") if p.is_file() and p.name != ".lock"}
    assert after == before, "a refused vault is left as it was"


def test_status_json_shows_the_clock(
    vault_dir: Path, clocked_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sim = Simulation.open(vault_dir, clocked_file)
    for _ in range(2):
        sim.turn_taken(2)
    sim.save()
    sim.close()
    code, out, err = cli(capsys, "status", "--vault", vault_dir, "--json")
    assert code == 0, err
    assert json.loads(out)["clock"] == "2030-05-04T06:15"
    clock_file(vault_dir).unlink()
    code, out, err = cli(capsys, "status", "--vault", vault_dir, "--json")
    assert json.loads(out)["clock"] is None, "a vault from before the clock"


def test_world_apply_gives_a_vault_from_before_the_clock_the_world_file_clock(
    vault_dir: Path, world_file: Path, clocked_file: Path
) -> None:
    Simulation.open(vault_dir, world_file).close()
    clock_file(vault_dir).unlink()
    clocked_file.write_text(
        CLOCKED + "  - {name: Cy, type: agent, location: hall, profile: A poet.}\n",
        encoding="utf-8",
    )
    assert apply_world(clocked_file, vault_dir)[0].startswith("Added")
    clock = world_store.load_clock(vault_dir)
    assert clock is not None
    assert (clock.reading(), clock.minutes_per_round) == ("2030-05-04T06:00", 15)
