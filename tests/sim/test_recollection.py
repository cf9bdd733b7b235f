"""What an agent brings to mind, in a simulation: a fact about the room it stands in and
not unrelated entries once the budget is full; what happened in a room visited long ago;
related agents; the section unchanged while the situation is; accesses counted in
batches; the prompt still within num_ctx. Ada and Bo in the fixture world; banks and
summaries written as a pass and a compaction write them."""

from __future__ import annotations

from datetime import UTC, datetime

from helpers import run, set_actor

from engine.agents.prompt import char_budget
from engine.agents.thinker import Turn
from engine.memory.knowledge import Entry, Source, Stamp
from engine.sim.prompting import build_prompt, turn_prompt
from engine.sim.recollection import FLUSH_EVERY
from engine.sim.simulation import Simulation
from engine.vault.summaries import Summary


def entry(number: int, text: str, tags: list[str], sim: str = "2026-01-01T08:00") -> Entry:
    stamp = Stamp(sim=sim, at="2026-11-25T10:00:00Z")
    return Entry(id=f"ltm-{number}-a{number}", type="fact", content=text, tags=tags,
                 source=Source(passes=["20261125-100000"]), created=stamp, updated=stamp)  # fmt: skip


def _bank(sim: Simulation, who: str, entries: list[Entry]) -> None:
    sim.knowledge.store(sim.minds[sim.character(who).id]).save(entries)


def _section(prompt: str) -> str:
    """What follows the memories and comes before the examples and the situation."""
    after = prompt.rsplit("\n---\n", 1)[-1]
    return after.split("## Good moves here", 1)[0].split("\nYou are ", 1)[0]


UNRELATED = [
    "The river ferry leaves at noon and costs a copper.",
    "Moss keeps the ledger of the library in shelf order.",
    "Roses by the garden gate need water every morning.",
    "The attic window sticks in wet weather.",
    "Pip hides sweets in the cellar behind the barrels.",
    "The baker sells rye only on market days.",
]


def test_a_fact_about_the_room_is_seen_and_unrelated_entries_are_not(sim: Simulation) -> None:
    entries = [entry(n, text, ["town"]) for n, text in enumerate(UNRELATED, 1)]
    entries.append(entry(99, "The hall's stone floor is slippery after the rain.", ["hall"]))
    _bank(sim, "Ada", entries)
    set_actor(sim, knowledge_tokens=40)  # room for about two lines
    section = _section(build_prompt(sim, sim.character("Ada")))  # Ada stands in The Hall
    assert "- The hall's stone floor is slippery after the rain." in section
    for text in UNRELATED:
        assert text not in section
    set_actor(sim, knowledge_tokens=0)
    assert "slippery" not in build_prompt(sim, sim.character("Ada"))


def test_in_a_room_visited_long_ago_it_sees_what_happened_there(sim: Simulation) -> None:
    ada = sim.minds["ada"]
    for index in range(12):
        run(sim, "Ada", f"think Thought number {index}.")
    store = ada.store
    store.commit(None, Summary("I drew water from the old well and the rope snapped.", 0, 4, 12,
                               "2026-11-25T10:00:00Z", sim="2026-01-01T09:00", rooms=("yard",)),
                 now=datetime(2026, 11, 25, 10, tzinfo=UTC))  # fmt: skip
    store.commit(None, Summary("I read by the lamp in the hall all evening.", 4, 8, 12,
                               "2026-11-25T10:01:00Z", sim="2026-01-02T20:00", rooms=("hall",)),
                 now=datetime(2026, 11, 25, 10, 1, tzinfo=UTC))  # fmt: skip
    sim.world.clock.set("2026-03-01T08:00")  # two months on
    assert run(sim, "Ada", "go north").ok  # to The Yard, and its old well
    section = _section(build_prompt(sim, sim.character("Ada")))
    assert "## Related past experiences" in section
    assert "- (2026-01-01) I drew water from the old well and the rope snapped." in section
    assert "read by the lamp" not in section  # that happened in the hall


def test_the_short_term_summary_shown_is_not_brought_to_mind_twice(sim: Simulation) -> None:
    for index in range(12):
        run(sim, "Ada", f"think Thought number {index}.")
    ada = sim.minds["ada"]
    lamp = "I read by the lamp in the hall all evening."
    ada.commit(None, Summary(lamp, 0, 4, 12, "2026-11-25T10:00:00Z", sim="2026-01-01T09:00",
                             rooms=("hall",)))  # fmt: skip
    prompt = build_prompt(sim, sim.character("Ada"))  # in the hall: the summary is relevant
    assert f"## Recent past (summary)\n{lamp}" in prompt
    assert lamp not in _section(prompt)  # but shown already, as the short-term summary
    ada.commit(Summary(lamp, 0, 4, 12, "2026-11-25T10:01:00Z"),
               Summary("I counted the apples in the yard.", 4, 8, 12, "2026-11-25T10:01:00Z",
                       sim="2026-01-01T09:30", rooms=("yard",)))  # fmt: skip
    prompt = build_prompt(sim, sim.character("Ada"))
    assert f"## Older memories (summary)\n{lamp}" in prompt  # L: the newest part of a merge
    assert f"- (2026-01-01) {lamp}" in _section(prompt)  # the episode itself, found again


def test_related_agents_are_named_not_their_knowledge(sim: Simulation) -> None:
    _bank(sim, "Bo", [entry(1, "The hall floor was laid by Bo's grandfather.", ["hall"])])
    section = _section(build_prompt(sim, sim.character("Ada")))
    assert "### Related Agents\nAgents who know about this: Bo" in section
    assert "grandfather" not in section


def test_the_section_stays_the_same_while_the_situation_does(sim: Simulation) -> None:
    run(sim, "Ada", "note Lamp -> The brass lamp in the hall needs oil every evening.")
    _bank(sim, "Ada", [entry(1, "The hall's lamp smokes when the wick is long.", ["hall"])])
    ada = sim.character("Ada")
    first = _section(build_prompt(sim, ada))
    assert "lamp" in first
    assert _section(build_prompt(sim, ada)) == first
    run(sim, "Pip", "emote hops.")  # a new memory before the section: it stays the same
    assert _section(build_prompt(sim, ada)) == first
    run(sim, "Ada", "note Oil -> The lamp oil is kept in the cellar.")  # something new
    assert "- Oil: The lamp oil is kept in the cellar." in _section(build_prompt(sim, ada))


def test_accesses_are_counted_and_written_in_batches(sim: Simulation) -> None:
    _bank(sim, "Ada", [entry(1, "The hall's lamp smokes when the wick is long.", ["hall"]),
                       entry(2, "Roses need water.", ["garden"], sim="2025-06-01T08:00")])  # fmt: skip
    ada = sim.character("Ada")
    store = sim.knowledge.store(sim.minds["ada"])
    for _ in range(FLUSH_EVERY - 1):
        turn_prompt(sim, ada)
    assert [e.access_count for e in store.load()] == [0, 0]  # not one write per turn
    build_prompt(sim, ada)  # a view, not a turn: not counted
    turn_prompt(sim, ada)
    lamp, roses = store.load()
    assert lamp.access_count == FLUSH_EVERY
    assert lamp.last_access is not None
    assert lamp.last_access.sim == sim.clock.reading()
    assert roses.access_count == 0
    turn_prompt(sim, ada)
    sim.save()
    assert store.load()[0].access_count == FLUSH_EVERY + 1


def test_the_prompt_with_the_section_still_fits_num_ctx(sim: Simulation) -> None:
    _bank(sim, "Ada", [entry(n, f"Fact {n} about the hall: " + "stone and lamps " * 20, ["hall"])
                       for n in range(1, 200)])  # fmt: skip
    for index in range(200):
        run(sim, "Ada", f"think A long thought number {index} " + "about the hall " * 15)
    options = {**sim.settings.llm.profiles["actor"].options, "num_ctx": 1024}
    set_actor(sim, options=options, knowledge_tokens=2000)  # more than the whole context
    prompt = build_prompt(sim, sim.character("Ada"))
    assert len(prompt) <= char_budget(1024, int(sim.actor_options.get("num_predict", 0)))
    assert prompt.endswith("Exits: north, stair, down   Also here: Pat, Pip\n~Ada>")
    lines = prompt.splitlines()
    for at, text in enumerate(lines):  # a heading whose lines were cut went with them
        if text.startswith(("### Proven", "### Working", "### Known", "### Recent", "## Relevant")):
            assert lines[at + 1].startswith("- "), text


def test_recall_over_unicode_text(sim: Simulation) -> None:
    run(sim, "Ada", "note Café -> Le café près du puits ouvre à l'aube.")
    run(sim, "Ada", "note Колодец -> Вода в колодце холодная и чистая.")
    found = run(sim, "Ada", "recall колодце")
    assert found.ok
    assert "- Колодец: Вода в колодце холодная и чистая.  (note 'Колодец')" in found.text
    assert "café" not in found.text
    assert "(note 'Café')" in run(sim, "Ada", "recall puits").text


def test_an_agents_grammar_offers_recall_by_what_it_knows(sim: Simulation) -> None:
    from engine.sim.prompting import command_grammar

    ada = sim.character("Ada")
    assert "recall" not in command_grammar(sim, ada).verbs  # nothing it could name yet
    run(sim, "Ada", "note Well -> The yard well runs dry in August.")
    _bank(sim, "Ada", [entry(1, "The hall's lamp smokes when the wick is long.", ["lamp"])])
    (shape,) = [s for s in command_grammar(sim, ada).shapes if s.verb == "recall"]
    (slot,) = shape.slots
    assert slot.choices is not None
    assert set(slot.choices) == {"Well", "lamp"}


class LightEmbedder:
    """An embedding model that knows one thing: a lamp gives light."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    async def embed(self, texts: list[str], model: str) -> list[list[float]]:
        self.texts += texts
        return [[1.0, 0.0] if ("lamp" in t or "light" in t) else [0.0, 1.0] for t in texts]


async def test_with_an_embedding_model_a_semantic_match_comes_to_mind(sim: Simulation) -> None:
    from engine.llm.embedding import Embedder
    from engine.sim.prompting import build_prompt as prompt_of

    old = "2025-06-01T08:00"  # long ago: not a recent finding
    _bank(sim, "Ada", [entry(1, "Spare oil for the light is kept in the cellar.", ["oil"], old),
                       entry(2, "Roses climb the garden wall.", ["roses"], old)])  # fmt: skip
    ada = sim.character("Ada")
    assert "Spare oil" not in _section(prompt_of(sim, ada))  # no keyword of the hall in it
    embedder = LightEmbedder()
    sim.recollection.embedder = Embedder(embedder, "tiny")
    await sim.recollection.prepare(ada)  # the hall has a brass lamp: the situation is lit
    assert "Spare oil for the light is kept in the cellar." in embedder.texts
    section = _section(prompt_of(sim, ada))
    assert "- Spare oil for the light is kept in the cellar." in section
    assert "Roses" not in section
    assert ", sem 1.00," in _section(prompt_of(sim, ada, scores=True))
    await sim.recollection.prepare(ada)
    assert embedder.texts.count("Spare oil for the light is kept in the cellar.") == 1  # kept


async def test_an_embedding_model_that_fails_costs_only_the_semantic_score(
    sim: Simulation, caplog: object
) -> None:
    from engine.errors import LLMUnavailableError
    from engine.llm.embedding import Embedder

    class Down:
        async def embed(self, texts: list[str], model: str) -> list[list[float]]:
            raise LLMUnavailableError("the embedding server is down")

    _bank(sim, "Ada", [entry(1, "The hall's lamp smokes when the wick is long.", ["hall"])])
    sim.recollection.embedder = Embedder(Down(), "tiny")
    await sim.recollection.prepare(sim.character("Ada"))
    assert "- The hall's lamp smokes" in _section(build_prompt(sim, sim.character("Ada")))


def test_an_agents_own_occupation_brings_no_unrelated_note_to_mind(sim: Simulation) -> None:
    """Issue 30, item 10: every note of Ada carries her occupation, as the query's role does;
    a note with no word of the situation stays out of the prompt."""
    sim.character("Ada").occupation = "gardener"
    run(sim, "Ada", "note Ferry -> The river ferry leaves at noon and costs a copper.")
    for line in ("look", "emote nods.", "think Quiet today."):  # its last commands: not the note
        assert run(sim, "Ada", line).ok
    section = _section(build_prompt(sim, sim.character("Ada"), scores=True))  # in The Hall
    assert "ferry" not in section, section


def test_a_new_note_changes_the_index_it_is_in_not_a_new_one(sim: Simulation) -> None:
    """Issue 30, item 14: a change costs its own update, never a rebuild of the index."""
    ada = sim.character("Ada")
    _bank(
        sim,
        "Ada",
        [entry(n, f"Fact {n} about the cellar stairs.", ["cellar"]) for n in range(1, 40)],
    )
    index = sim.recollection.index(ada)
    kept = {i.key: i for i in index.items}
    run(sim, "Ada", "note Oil -> The lamp oil is kept in the cellar.")
    assert "- Oil: The lamp oil is kept in the cellar." in _section(build_prompt(sim, ada))
    assert sim.recollection.index(ada) is index
    assert {i.key: i for i in index.items if i.key != "note:Oil"} == kept


async def test_before_a_turn_the_index_is_brought_up_to_date(sim: Simulation) -> None:
    """Issue 30, item 14: ``prepare`` (awaited as a turn starts, before its prompt) syncs
    what a knowledge pass wrote, its files read in a worker thread."""
    ada = sim.character("Ada")
    index = sim.recollection.index(ada)
    _bank(sim, "Ada", [entry(1, "The hall's lamp smokes when the wick is long.", ["hall"])])
    await sim.recollection.prepare(ada)
    assert [i.key for i in index.items if i.kind == "entry"] == ["entry:ltm-1-a1"]


async def test_a_turns_own_note_is_seen_at_once_and_a_hand_edit_after_the_turn(
    sim: Simulation,
) -> None:
    """A turn's files are looked at as it begins (``prepare``); its own command and the
    end of the turn make them be looked at again: a note it writes is brought to mind
    at once, and so is one a person writes between turns (the inspector's prompt)."""
    ada = sim.character("Ada")
    await sim.recollection.prepare(ada)
    run(sim, "Ada", "note Oil -> The lamp oil is kept in the hall.")
    assert "- Oil: The lamp oil is kept in the hall." in _section(build_prompt(sim, ada))

    await sim.recollection.prepare(ada)  # the next turn begins
    sim.turn_finished(ada.id, Turn("Ada", None, None, 1, error="no answer"), 2, None, None)
    sim.vault.notes(ada.folder).append("Rope", "The rope hangs in the hall.")  # by hand
    assert "- Rope: The rope hangs in the hall." in _section(build_prompt(sim, ada))
