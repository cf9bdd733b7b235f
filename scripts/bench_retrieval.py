"""``bench.py retrieval``: selecting what an agent brings to mind from 10,000 items.

10,000 items (entries, notes and past summaries of 8-30 words from a 3,000-word
vocabulary, dated over a month of world time), 10 keywords, a budget of 2,000 tokens:
``engine.memory.retrieval.Index.select`` timed over repeats, once the index is built
(it is built again only when an agent's items change). Target: median <= 20 ms on two
cores. Also the index build, and ``Recollection.section`` for an agent of the fixture
world holding 1,000 items (what a turn's prompt pays).
"""

from __future__ import annotations

import random
import statistics
import time

from engine.memory.retrieval import Index, Item, ItemKind, Query

ITEMS = 10_000
KEYWORDS = ("well", "yard", "bread", "oven", "river", "key", "lamp", "garden", "roses", "ledger")
BUDGET = 2_000
REPEATS = 30


def _items(count: int, seed: int = 1) -> list[Item]:
    rng = random.Random(seed)
    vocabulary = [f"word{n}" for n in range(3_000)] + list(KEYWORDS)
    kinds: tuple[ItemKind, ...] = ("entry", "note", "past")
    items = []
    for n in range(count):
        text = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(8, 30)))
        items.append(Item(key=f"i{n}", kind=rng.choice(kinds), text=text, origin=f"item {n}",
                          tags=tuple(rng.sample(vocabulary, 2)), topic=rng.choice(vocabulary),
                          sim=f"2026-01-{1 + n % 28:02d}T{n % 24:02d}:00", agent="Ada",
                          entry_type="fact"))  # fmt: skip
    return items


def _p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


def bench_retrieval() -> dict[str, float | dict[str, float]]:
    items = _items(ITEMS)
    started = time.perf_counter()
    index = Index(items)
    build_s = time.perf_counter() - started
    query = Query(KEYWORDS, "2026-01-31T08:00")
    index.select(query, BUDGET)  # BM25's tables are made on the first query
    times, chosen = [], 0
    for _ in range(REPEATS):
        started = time.perf_counter()
        selection = index.select(query, BUDGET)
        times.append((time.perf_counter() - started) * 1000)
        chosen = len(selection.chosen)
    return {
        "items": ITEMS,
        "select_ms": {
            "median": statistics.median(times),
            "p90": _p90(times),
            "min": min(times),
            "max": max(times),
        },
        "chosen": chosen,
        "tokens": selection.tokens,
        "index_build_s": build_s,
    }
