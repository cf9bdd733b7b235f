"""generate never crashes on arbitrary (valid) journals and always writes well-formed
questions whose options are real names (or the agent's own memories and commands)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from probe_log import fixture_world

from engine.lab.probe.question_kinds import COMMAND_CHARS, clip, event_text
from engine.lab.probe.questions import IDK, generate
from engine.memory.record import MemoryKind, MemoryRecord

WORLD = fixture_world()
PEOPLE = sorted(c.name for c in WORLD.characters.values())
ROOMS = sorted(r.name for r in WORLD.rooms.values())
ROOM_IDS = sorted(WORLD.rooms)

_person = st.sampled_from(PEOPLE)
_room = st.sampled_from(ROOMS)
_words = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)
_texts = st.one_of(
    _words,
    st.builds(lambda p, q: f'{p} says, "{q}"', _person, _words),
    st.builds(lambda p, e, r: f"{p} leaves {e} to {r}.", _person, _words, _room),
    st.builds(lambda p, r: f"{p} arrives from {r}.", _person, _room),
    st.builds(lambda p: f"{p} vanishes in a swirl of light.", _person),
    st.builds(lambda p: f"{p} appears in a swirl of light.", _person),
    st.builds(lambda e, r, w: f"You go {e} to {r}.\n{r}\n{w}", _words, _room, _words),
    st.builds(
        lambda r, ps: f"{r}\nAlso here: {' and '.join(ps)}.", _room, st.lists(_person, max_size=3)
    ),
    st.builds(lambda r: f"{r}\nNobody else is here.", _room),
)
_any = st.tuples(
    st.sampled_from(list(MemoryKind)), _texts, st.none() | st.sampled_from(ROOM_IDS),
    st.lists(_person, max_size=3), st.none() | _words, st.booleans(), st.none() | _person,
)  # fmt: skip
_quote = st.sampled_from(["Hello.", "The bell rings.", "Go north!", "a"]) | _words
_speech = st.builds(
    lambda p, q, room, occ: (MemoryKind.OBSERVATION, f'{p} says, "{q}"', room, occ, None, False, p),
    _person, _quote, st.sampled_from(ROOM_IDS), st.lists(_person, max_size=3),
)  # fmt: skip
_moved = st.builds(
    lambda room, how: (
        MemoryKind.RESULT, f"You go {how} to {WORLD.rooms[room].name}.\n{WORLD.rooms[room].name}",
        room, [], f"go {how}", False, None,
    ),
    st.sampled_from(ROOM_IDS), st.sampled_from(["north", "south", "n", "stair"]),
)  # fmt: skip
_record = st.one_of(_any, _speech, _moved)


def _journal(
    rows: list[tuple[MemoryKind, str, str | None, list[str], str | None, bool, str | None]],
) -> list[MemoryRecord]:
    return [
        MemoryRecord(i, "2026-01-01T00:00:00Z", kind, text, location, occupants, command or None,
                     None, failed, "2026-01-01T08:00", speaker)
        for i, (kind, text, location, occupants, command, failed, speaker) in enumerate(rows)
    ]  # fmt: skip


@settings(max_examples=60)
@given(
    st.lists(_record, max_size=40), st.lists(_record, max_size=25),
    st.integers(0, 3), st.integers(0, 2**32),
)  # fmt: skip
def test_generate_is_total_and_well_formed(
    ada: list[tuple[MemoryKind, str, str | None, list[str], str | None, bool, str | None]],
    bo: list[tuple[MemoryKind, str, str | None, list[str], str | None, bool, str | None]],
    per_category: int,
    seed: int,
) -> None:
    journals = {"Ada": _journal(ada), "Bo": _journal(bo)}
    questions = generate(journals, WORLD, per_category=per_category, seed=seed)
    assert questions == generate(journals, WORLD, per_category=per_category, seed=seed)
    for q in questions:
        own = journals[q.agent]
        assert q.problem() is None
        assert len(set(q.options)) == 5
        assert IDK in q.options
        assert q.gold in q.options
        assert (
            sum(1 for o in questions if (o.agent, o.category) == (q.agent, q.category))
            <= per_category
        )
        if q.category == "temporal":
            mine = {event_text(r) for r in own} | {
                clip(r.command, COMMAND_CHARS) for r in own if r.command
            }
            assert set(q.options) - {IDK} <= mine
        else:
            assert set(q.options) - {IDK} <= set(PEOPLE) | set(ROOMS)
        if q.category == "abstention":
            quote = q.question.split('"', 1)[1].rsplit('"', 1)[0].removesuffix("...")
            assert all(quote.casefold() not in r.text.casefold() for r in own)
            assert (q.gold, q.evidence, q.age) == (IDK, (), len(own))
        else:
            assert q.gold != IDK
            assert q.evidence
            assert set(q.evidence) <= {r.seq for r in own}
            assert q.age == len(own) - min(q.evidence)  # by the oldest evidence
            assert q.span == max(q.evidence) - min(q.evidence)
