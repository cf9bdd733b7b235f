"""``bench.py retrieval``: selecting what an agent brings to mind from 10,000 items, and
what one changed item costs.

10,000 items of the agent Ada, a gardener (entries, notes and past summaries of 8-30
words from a 3,000-word vocabulary, dated over a month of world time), each carrying
Ada's name and occupation as ``Recollection`` gives them; the query as the product makes
it: 10 keywords, Ada's occupation as its role, Ada as who asks; a budget of 2,000
tokens. Figures (medians over repeats):

- ``select_ms``: ``Index.select`` once the index is built. Target: <= 20 ms.
- ``change_ms``: one changed item (``Index.put`` of an item with a new text, as a note
  rewritten or an entry updated by a pass). Target: <= 5 ms.
- ``sync_ms``: ``Index.sync`` of the whole 10,000 with one of them changed (what a
  changed bank file costs once read).
- ``index_build_s``: building the index from nothing (once, when a run starts).
"""

from __future__ import annotations

import dataclasses
import random
import statistics
import time

from engine.memory.retrieval import Index, Item, ItemKind, Query

ITEMS = 10_000
KEYWORDS = ("well", "yard", "bread", "oven", "river", "key", "lamp", "garden", "roses", "ledger")
ROLE = "gardener"
AGENT = "Ada"
BUDGET = 2_000
REPEATS = 30
NOW = "2026-01-31T08:00"


def _items(count: int, seed: int = 1) -> list[Item]:
    rng = random.Random(seed)
    vocabulary = [f"word{n}" for n in range(3_000)] + list(KEYWORDS)
    kinds: tuple[ItemKind, ...] = ("entry", "note", "past")
    items = []
    for n in range(count):
        text = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(8, 30)))
        items.append(Item(key=f"i{n}", kind=rng.choice(kinds), text=text, origin=f"item {n}",
                          tags=tuple(rng.sample(vocabulary, 2)), topic=rng.choice(vocabulary),
                          sim=f"2026-01-{1 + n % 28:02d}T{n % 24:02d}:00", agent=AGENT,
                          agent_role=ROLE, entry_type="fact"))  # fmt: skip
    return items


def _p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


def _figures(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "p90": _p90(values), "min": min(values),
            "max": max(values)}  # fmt: skip


def bench_retrieval() -> dict[str, float | dict[str, float]]:
    items = _items(ITEMS)
    started = time.perf_counter()
    index = Index(items)
    build_s = time.perf_counter() - started
    query = Query(KEYWORDS, NOW, ROLE, agent=AGENT)  # as Recollection.query makes it
    index.select(query, BUDGET)
    times, chosen = [], 0
    for _ in range(REPEATS):
        started = time.perf_counter()
        selection = index.select(query, BUDGET)
        times.append((time.perf_counter() - started) * 1000)
        chosen = len(selection.chosen)
    rng = random.Random(2)
    changes = []
    for n in range(REPEATS):
        old = items[rng.randrange(ITEMS)]
        new = dataclasses.replace(old, text=f"{old.text} well rope {n}", sim=NOW)
        started = time.perf_counter()
        index.put(new)
        changes.append((time.perf_counter() - started) * 1000)
    current = index.items
    syncs = []
    for n in range(5):
        at = rng.randrange(len(current))
        current[at] = dataclasses.replace(current[at], text=f"synced {n} oven")
        started = time.perf_counter()
        index.sync(current)
        syncs.append((time.perf_counter() - started) * 1000)
    return {
        "items": ITEMS,
        "select_ms": _figures(times),
        "change_ms": _figures(changes),
        "sync_ms": _figures(syncs),
        "chosen": chosen,
        "tokens": selection.tokens,
        "index_build_s": build_s,
    }
