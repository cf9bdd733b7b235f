"""``bench.py retrieval``: selecting what an agent brings to mind from 10,000 and 100,000
items written in a village's words, and what one changed item costs.

The items are the agent Ada's, a gardener, as ``Recollection`` gives them: knowledge
entries, notes, past summaries and a few skills, each carrying Ada's name and
occupation; their words follow a village's: sentences of real English words drawn by a
Zipf law (rank r is drawn in proportion to 1/r), function words among them, and a few
dozen character names and places that come back in many items (the villagers and their
mill, river, well, market ...); some entries are tagged with Ada's role. They are dated
over the 90 days of world time before the query. The query is the product's
(``Query(keywords, now, role, agent=...)`` as ``Recollection.query`` makes it): 10
keywords from the words and names a village uses most (mill, bread, Tam, river ...:
each held by 8-24% of the items, ``query_df_pct``: the least, the median and the
most held, and the share of items holding any), Ada's occupation as its role, Ada
as who asks; a budget of 2,000 tokens.

Figures, at each size (``sizes``; medians over repeats with p90, min and max):

- ``select_ms``: ``Index.select`` once the index is built. Target: <= 20 ms at 10,000,
  <= 150 ms at 100,000.
- ``change_ms``: one changed item (``Index.put`` of an item with a new text, as a note
  rewritten or an entry updated by a pass). Target: <= 5 ms.
- ``select_after_change_ms``: a selection right after one changed item (what the next
  turn pays for the change).
- ``sync_ms``: ``Index.sync`` of the whole source with one item changed (what a changed
  bank file costs once read).
- ``index_build_s``: building the index from nothing (once, when a run starts).
  Target: <= 3 s at 100,000.

The top-level ``select_ms``, ``change_ms``, ``sync_ms``, ``index_build_s``, ``chosen``
and ``tokens`` are the 10,000-item figures (as the bench reported before 100,000 was
added).
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import random
import statistics
import time
from datetime import datetime, timedelta

from engine.memory.knowledge import KnowledgeType
from engine.memory.retrieval import Index, Item, ItemKind, Query, situation_keywords

SIZES = (10_000, 100_000)
REPEATS = {10_000: 30, 100_000: 15}
"""Selections measured at each size (30 at other sizes)."""
CHANGES = 30
SYNCS = {10_000: 5, 100_000: 3}
"""Syncs measured at each size (3 at other sizes)."""
ROLE = "gardener"
AGENT = "Ada"
BUDGET = 2_000
NOW = "2026-03-31T08:00"
DAYS = 90
SITUATION = ("The Mill", "Tam", "Nell", "river", "bread", "flour", "market", "wheel",
             "morning", ROLE)  # fmt: skip
"""What the situation's keywords are made from (``situation_keywords``): the room, who is
here, what was said, the role; 10 stems, all of them common in the village."""


def _listed(words: str) -> list[str]:
    """The words of ``words`` (a list written as text: a few hundred words in a few lines)."""
    return words.split()


NAMES = _listed("""
Tam Nell Ada Bo Wynn Pip Mara Hob Edda Jory Lise Osric Bram Tilda Corin Fen Greta Hal
Ivo Jessa Kit Lorn Maud Ned Orla Perrin Quill Rowan Sela Tobin Una Vance Wren Yara Zed
Alder Briar Cael Dora Emmet
""")
"""Villagers, the first ones met most (a Zipf law over the list)."""
PLACES = _listed("""
mill river well market square bakery forge orchard chapel bridge inn meadow granary pond
barn Eastbrook Greyhollow Copperhill quay lane
""")
"""Places, common nouns most of them, met in many items."""
COMMON = _listed("""
said went came took gave saw told asked left found brought made put kept bread water
rope flour wheel morning market grain sack cart wagon door road stone fire house day
night time hand hands work field fields garden roses apples sheep dog horse cow goat
hens eggs milk cheese butter salt oil lamp key ledger coin coins price sold bought pay
paid trade trader merchant basket barrel bucket pail wood axe hammer nails roof wall
gate fence path hill tree trees oak elm ash willow rain wind snow sun frost spring
summer autumn winter harvest seed seeds plant planted weed weeds soil mud clay sand rock
grass hay straw loaf loaves oven dough yeast honey beer ale wine cup jug bowl plate
spoon knife pot kettle bed chair table bench shelf box chest cloth wool thread needle
coat boots hat cloak shirt apron belt bag purse letter note map song story news word
name friend brother sister mother father child children wife husband neighbour baker
miller smith farmer shepherd priest guard carter weaver cook boy girl man woman old
young new good bad big small long short high low early late warm cold wet dry full empty
heavy light dark bright quiet loud slow fast broken mended clean dirty sweet sour fresh
stale ripe green red white black brown grey yellow blue first last next best worst
little great fine hard soft deep near far walk walked run ran carry carried bring open
opened close closed build built fix fixed mend clean cleaned wash washed cook cooked
bake baked grind ground sell buy count counted lose lost find hide hid wait waited sleep
slept wake woke eat ate drink drank speak spoke call called help helped watch watched
hear heard remember forgot think thought know knew want wanted need needed like liked
morning evening noon midnight today tomorrow yesterday week month year hour north south
east west left right middle corner edge top bottom inside outside verified confirmed
maybe unclear unknown possibly measured uncertain todo tools spade rake hoe shears
barrow ladder sacks shed cellar attic loft stable festival fair wedding funeral feast
prayer bell candle candles coal charcoal iron copper brass silver gold tin lead chain
hook ring compass whistle flute drum
""")
"""Real words a village uses, roughly most frequent first (Zipf ranks after the names
and places)."""
_SMALL = _listed("""
the a of to and in on at by for with from was were is it he she they his her their that
this but as not had have will would could into over
""")
"""Function words (stopwords): about a third of a sentence's words."""


def _coined(count: int, rng: random.Random) -> list[str]:
    """``count`` distinct pronounceable words (the vocabulary's long tail)."""
    onsets = _listed("b br c d f g gr h j k l m n p pr r s st t tr v w")
    vowels = _listed("a e i o u ai ea oo")
    codas = ["", "n", "r", "l", "st", "nd", "rk", "th", "m", "ck"]
    found: dict[str, None] = {}
    while len(found) < count:
        word = "".join(rng.choice(onsets) + rng.choice(vowels) for _ in range(rng.randint(1, 3)))
        found[word + rng.choice(codas)] = None
    return list(found)


class Village:
    """A village's vocabulary with Zipf draws: names, places, common words, a long tail."""

    def __init__(self, seed: int = 1) -> None:
        self.rng = random.Random(seed)
        self.words = list(dict.fromkeys(COMMON)) + _coined(4_000, random.Random(seed + 1))
        self._words = _cumulative(len(self.words))
        self._names = _cumulative(len(NAMES), shift=1)
        self._places = _cumulative(len(PLACES), shift=1)

    def draw(self, count: int) -> list[str]:
        """``count`` words of running text: names, places, function and content words."""
        rng, out = self.rng, []
        for _ in range(count):
            r = rng.random()
            if r < 0.06:
                out.append(NAMES[_pick(self._names, rng)])
            elif r < 0.11:
                out.append(PLACES[_pick(self._places, rng)])
            elif r < 0.45:
                out.append(rng.choice(_SMALL))
            else:
                out.append(self.words[_pick(self._words, rng)])
        return out

    def text(self, sentences: int) -> str:
        parts = []
        for _ in range(sentences):
            words = self.draw(self.rng.randint(6, 14))
            parts.append(" ".join([words[0].capitalize(), *words[1:]]) + ".")
        return " ".join(parts)


def _cumulative(count: int, shift: int = 0) -> list[float]:
    """Zipf's (Zipf-Mandelbrot's, with ``shift``) law's cumulative weights."""
    return list(itertools.accumulate(1.0 / (rank + shift) for rank in range(1, count + 1)))


def _pick(cumulative: list[float], rng: random.Random) -> int:
    return min(bisect.bisect(cumulative, rng.random() * cumulative[-1]), len(cumulative) - 1)


KINDS: tuple[ItemKind, ...] = ("entry", "note", "past", "skill")
KIND_WEIGHTS = (0.45, 0.15, 0.35, 0.05)
SENTENCES: dict[ItemKind, tuple[int, int]] = {
    "entry": (1, 2), "note": (1, 3), "past": (3, 6), "skill": (1, 2)
}  # fmt: skip
ENTRY_TYPES: tuple[KnowledgeType, ...] = ("fact", "observation", "procedure", "mistake", "fact")


def village_items(count: int, seed: int = 1) -> list[Item]:
    """``count`` items of Ada's in a village's words (see the module), oldest first."""
    village = Village(seed)
    rng = village.rng
    end = datetime.fromisoformat(NOW)
    items = []
    for n in range(count):
        kind = rng.choices(KINDS, KIND_WEIGHTS)[0]
        text = village.text(rng.randint(*SENTENCES[kind]))
        tags: tuple[str, ...] = ()
        topic = ""
        if kind in ("entry", "skill"):
            tags = tuple(dict.fromkeys(village.draw(8)[i] for i in range(rng.randint(1, 3))))
            tags = tuple(t.lower() for t in tags if t.lower() not in _SMALL)
            if rng.random() < 0.15:
                tags = (*tags, rng.choice((ROLE, f"head {ROLE}", "gardening")))
            topic = tags[0] if tags else ""
        elif kind == "note":
            topic = rng.choice((*PLACES[:8], *NAMES[:8], *COMMON[:40])).capitalize()
        else:
            topic = " ".join(f"The {p.capitalize()}" for p in rng.sample(PLACES, 2))
        when = end - timedelta(days=DAYS * (1 - (n + rng.random()) / count))
        items.append(Item(key=f"{kind}:{n}", kind=kind, text=text, origin=f"{kind} {n}",
                          tags=tags, topic=topic, sim=when.strftime("%Y-%m-%dT%H:%M"),
                          agent=AGENT, agent_role=ROLE,
                          entry_type=rng.choice(ENTRY_TYPES) if kind == "entry" else
                          ("skill" if kind == "skill" else None)))  # fmt: skip
    return items


def query() -> Query:
    """The query as ``Recollection.query`` makes it."""
    return Query(situation_keywords(*SITUATION), NOW, ROLE, agent=AGENT)


def _figures(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "p90": statistics.quantiles(values, n=10)[-1],
            "min": min(values), "max": max(values)}  # fmt: skip


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def bench_size(count: int) -> dict[str, float | dict[str, float]]:
    """Every figure at ``count`` items (see the module)."""
    items = village_items(count)
    started = time.perf_counter()
    index = Index(items)
    build_s = time.perf_counter() - started
    asked = query()
    held = [int(index.holding(Query((k,), NOW)).sum()) / count for k in asked.keywords]
    any_held = int(index.holding(asked).sum()) / count
    selection = index.select(asked, BUDGET)
    times = []
    for _ in range(REPEATS.get(count, 30)):
        started = time.perf_counter()
        selection = index.select(asked, BUDGET)
        times.append(_ms(started))
    rng = random.Random(2)
    changes, after = [], []
    for n in range(CHANGES):
        old = items[rng.randrange(count)]
        new = dataclasses.replace(old, text=f"{old.text} Tam took the bread to the mill {n}.",
                                  sim=NOW)  # fmt: skip
        started = time.perf_counter()
        index.put(new)
        changes.append(_ms(started))
        started = time.perf_counter()
        index.select(asked, BUDGET)
        after.append(_ms(started))
    current = index.items
    syncs = []
    for n in range(SYNCS.get(count, 3)):
        at = rng.randrange(len(current))
        current[at] = dataclasses.replace(current[at], text=f"synced {n} oven by the mill")
        started = time.perf_counter()
        index.sync(current)
        syncs.append(_ms(started))
    return {
        "items": count,
        "select_ms": _figures(times),
        "select_after_change_ms": _figures(after),
        "change_ms": _figures(changes),
        "sync_ms": {"median": statistics.median(syncs), "min": min(syncs), "max": max(syncs)},
        "index_build_s": build_s,
        "chosen": len(selection.chosen),
        "tokens": selection.tokens,
        "query_df_pct": {
            "min": 100 * min(held),
            "median": 100 * statistics.median(held),
            "max": 100 * max(held),
            "any": 100 * any_held,
        },
    }


def bench_retrieval(sizes: tuple[int, ...] = SIZES) -> dict[str, object]:
    """The figures at each of ``sizes`` (``sizes``), and the smallest size's at the top
    level (the keys the bench had before)."""
    found = {str(count): bench_size(count) for count in sizes}
    first = found[str(sizes[0])]
    keys = ("items", "select_ms", "change_ms", "sync_ms", "chosen", "tokens", "index_build_s")
    return {**{key: first[key] for key in keys}, "sizes": found}
