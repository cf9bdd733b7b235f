"""Recall questions generated from the world's ground truth (pure, no I/O).

``generate`` reads each agent's journal (what it perceived, oldest first) against the
world's names and writes multiple-choice questions about the agent's own past, in the
five LoCoMo/LongMemEval-style categories of ``engine.lab.probe.question_kinds``. Every
question has five options: four real ones (the gold and three distractors) and "I don't
know", all five in a random order (the probe's seed); for abstention all four are
distractors and the gold is "I don't know". Distractors are the world's real names and places (temporal questions:
the agent's own memories or commands), never the gold, never repeated; the hard ones
(the agent's other rooms, the people who were there) come first.

``evidence`` is the seqs of the agent's memories that hold the answer; ``age`` is M
(the agent's memory count when it is asked) minus the *oldest* of them, so 1 is the
latest memory, and ``span`` the newest minus the oldest. An abstention question has no
evidence: its ``age`` is M and its span 0 (a report buckets it on its own).

**Leak-free.** Given each agent's ``Situation`` (what its prompt shows of the present),
a question whose gold the situation shows (the current room, someone or something here)
is not asked in its category: it goes to the separate ``present`` category (at most
``per_category`` of them an agent, taken from the categories in turn).

Deterministic: each (agent, category) draws from ``random.Random(f"{seed}/{agent}/
{category}")``, so one agent's questions do not change when another agent is added.
Ids are ``<agent>-<category>-<n>`` (n from 0).
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

from engine.lab.probe.perception import perceive
from engine.lab.probe.question_kinds import CATEGORIES, IDK, Draft, Scene
from engine.lab.probe.scoring import PRESENT, Situation, leaks, question_age
from engine.memory.record import MemoryRecord
from engine.world.world import World

__all__ = ["CATEGORIES", "IDK", "OPTIONS", "PRESENT", "Question", "generate"]

OPTIONS = 5
"""Options per question: four real ones and "I don't know", shuffled together."""
_NEAR_FIRST = 2
"""At most this many hard distractors before the world's other names."""
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    agent: str
    category: str
    question: str
    """The exact text appended to the prompt."""
    options: tuple[str, ...]
    """The exact option texts, "I don't know" among them."""
    gold: str
    """The right option's text (not an index)."""
    evidence: tuple[int, ...]
    """The agent's memory seqs that hold the answer (empty for abstention)."""
    age: int
    """M minus the oldest evidence seq (M for abstention)."""
    span: int = 0
    """The newest minus the oldest evidence seq (0 for abstention)."""
    run: str = ""
    """The run record whose end the agent's journal was cut at ("": the whole journal)."""
    vault_sha256: str = ""
    """The hash of the vault state the question was drawn from (``probe.provenance``)."""

    def to_json(self) -> str:
        """One ``questions.jsonl`` line (no newline); fields in the contract's order."""
        return json.dumps(asdict(self), ensure_ascii=False)

    @staticmethod
    def from_json(data: str | bytes) -> Question:
        """Parse and check one line; raises ``ValueError`` on a malformed question."""
        raw: Any = json.loads(data)
        if not isinstance(raw, dict):
            raise ValueError("a question is a JSON object")
        try:
            question = Question(
                id=_text(raw["id"]),
                agent=_text(raw["agent"]),
                category=_text(raw["category"]),
                question=_text(raw["question"]),
                options=tuple(_text(o) for o in _list(raw["options"])),
                gold=_text(raw["gold"]),
                evidence=tuple(_int(e) for e in _list(raw["evidence"])),
                age=_int(raw["age"]),
                span=_int(raw.get("span", 0)),
                run=_text(raw.get("run", "")),
                vault_sha256=_text(raw.get("vault_sha256", "")),
            )
        except KeyError as exc:
            raise ValueError(f"a question needs {exc}") from exc
        if extra := set(raw) - set(Question.__dataclass_fields__):
            raise ValueError(f"unknown fields: {', '.join(sorted(extra))}")
        problem = question.problem()
        if problem:
            raise ValueError(problem)
        return question

    def problem(self) -> str | None:
        """What is wrong with this question's shape, or None."""
        if len(self.options) != OPTIONS or IDK not in self.options:
            return f'{self.id}: {OPTIONS} options, "{IDK}" among them, are needed'
        if len(set(self.options)) != OPTIONS:
            return f"{self.id}: options repeat"
        if self.gold not in self.options:
            return f"{self.id}: the gold answer is not an option"
        if (self.gold == IDK) != (not self.evidence):
            return f"{self.id}: only abstention has no evidence"
        return None


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected text, got {value!r}")
    return value


def _int(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"expected an integer, got {value!r}")
    return value


def _list(value: object) -> list[object]:
    if not isinstance(value, list):
        raise ValueError(f"expected a list, got {value!r}")
    return value


def generate(
    journals: Mapping[str, Sequence[MemoryRecord]],
    world: World,
    *,
    per_category: int = 5,
    seed: int = 0,
    agents: Sequence[str] | None = None,
    situations: Mapping[str, Situation] | None = None,
    counts: Mapping[str, int] | None = None,
    run: str = "",
    categories: Sequence[str] | None = None,
) -> list[Question]:
    """Questions for each of ``agents`` (default: every journal's agent, in order) about
    its own journal, at most ``per_category`` per category; a category with nothing to
    ask about is skipped. ``journals``: each agent's memories by the agent's name, oldest
    first (every agent's: abstention draws on the others'). ``situations``: what each
    agent's prompt shows of the present (questions it gives away go to ``present``);
    ``counts``: each agent's memory count when asked (default: its journal's); ``run``:
    written on each question; ``categories``: only these (default: all)."""
    asked = list(journals) if agents is None else list(dict.fromkeys(agents))
    unknown = [name for name in asked if name not in journals]
    if unknown:
        raise ValueError(f"no journal for {', '.join(unknown)} (agents: {', '.join(journals)})")
    seen = {name: perceive(name, records, world) for name, records in journals.items()}
    scene = Scene(
        people=tuple(sorted({c.name for c in world.characters.values()})),
        rooms=tuple(sorted({r.name for r in world.rooms.values()})),
        seen=seen,
    )
    wanted = [c for c in CATEGORIES if categories is None or c in categories]
    questions: list[Question] = []
    for agent in asked:
        situation = (situations or {}).get(agent, Situation())
        count = (counts or {}).get(agent, seen[agent].count)
        present: list[list[tuple[Draft, tuple[str, ...]]]] = []
        for category in wanted:
            rng = random.Random(f"{seed}/{agent}/{category}")
            drafts = CATEGORIES[category](seen[agent], scene, rng)
            chosen, leaked = _pick(drafts, per_category, rng, situation)
            questions += _written(agent, category, chosen, count, run)
            present.append(leaked)
        questions += _written(agent, PRESENT, _in_turn(present, per_category), count, run)
    return questions


def _written(agent: str, category: str, picked: Sequence[tuple[Draft, tuple[str, ...]]],
             count: int, run: str) -> list[Question]:  # fmt: skip
    out = []
    for n, (draft, options) in enumerate(picked):
        evidence = tuple(sorted(draft.evidence))
        age, span = question_age(count, evidence)
        out.append(Question(f"{agent}-{category}-{n}", agent, category, draft.question, options,
                            draft.gold, evidence, age, span, run))  # fmt: skip
    return out


def _in_turn(lists: Sequence[Sequence[T]], limit: int) -> list[T]:
    """Up to ``limit`` items, one from each list in turn."""
    out: list[T] = []
    for row in itertools.zip_longest(*lists):
        out += [item for item in row if item is not None][: limit - len(out)]
    return out[:limit]


def _pick(
    kinds: list[Iterator[Draft]], limit: int, rng: random.Random, situation: Situation
) -> tuple[list[tuple[Draft, tuple[str, ...]]], list[tuple[Draft, tuple[str, ...]]]]:
    """Up to ``limit`` drafts with their options, taking the kinds in turn, and up to
    ``limit`` of those the situation gives away (set aside for ``present``); a draft
    without enough distinct distractors, or asked already, is passed over."""
    chosen: list[tuple[Draft, tuple[str, ...]]] = []
    leaked: list[tuple[Draft, tuple[str, ...]]] = []
    asked: set[tuple[str, frozenset[str]]] = set()
    active = list(kinds)
    while active and len(chosen) < limit:
        for stream in list(active):
            if len(chosen) >= limit:
                break
            draft = next(stream, None)
            if draft is None:
                active.remove(stream)
                continue
            options = _options(draft, rng)
            key = (draft.question, frozenset(options or ()))
            if options is None or key in asked:
                continue
            asked.add(key)
            if not leaks(draft.gold, situation):
                chosen.append((draft, options))
            elif len(leaked) < limit:
                leaked.append((draft, options))
    return chosen, leaked


def _options(draft: Draft, rng: random.Random) -> tuple[str, ...] | None:
    """Four real options and "I don't know" in a random order, or None when there are
    too few distinct distractors."""
    abstain = draft.gold == IDK
    wanted = OPTIONS - 1 if abstain else OPTIONS - 2

    def usable(names: Sequence[str], taken: set[str]) -> list[str]:
        out = [n for n in dict.fromkeys(names) if n and n not in taken]
        rng.shuffle(out)
        return out

    taken = {draft.gold, IDK}
    near = usable(draft.near, taken)
    pool = usable(draft.pool, taken | set(near))
    distractors = (near[:_NEAR_FIRST] + pool + near[_NEAR_FIRST:])[:wanted]
    if len(distractors) < wanted:
        return None
    five = [*distractors, IDK] if abstain else [draft.gold, *distractors, IDK]
    rng.shuffle(five)
    return tuple(five)
