"""Scoring a probe as LongMemEval does (pure, no I/O): each reply's outcome, the
baselines a configuration must beat, McNemar's exact test between two configurations
on the same questions, and whether the reader's ceiling says anything at all.

- **Outcomes.** ``correct`` (the gold option), ``wrong`` (another real option; on an
  abstention question: a *false answer*), ``abstained`` ("I don't know" where there was
  an answer: a *false abstention*) and ``unparsed`` (a reply that names no option,
  never counted as "I don't know").
- **What the situation shows.** A question's gold is *visible* when the prompt's
  situation names it: the current room, someone who is here, something that is here.
  Such questions are asked only in the ``present`` category (``leaks``).
- **Baselines**, each the accuracy a rule with no memory would score on the same
  questions (exact expectations, not draws): ``uniform`` (a uniform pick among all the
  options, "I don't know" included: 1/5), ``guess`` (a uniform pick among the real
  options, never "I don't know": what the probe's blind and oracle fakes do without
  evidence), ``dont_know`` (always "I don't know") and ``present`` (the current room when it is
  an option, else the first option the situation shows, else "I don't know").
- **The present-aware baseline.** Outside ``present`` an option the situation shows is
  never the gold, by construction (a 4-room world has every room among a room
  question's options, so such options cannot be left out), and a reader with no memory
  that reads the room is not at ``guess``: one that never picks a shown option expects
  more, one that always picks one less (``room_scores``). ``present_aware`` is
  ``guess`` with an interval from the lower of the two expectations less its 95%
  sampling error to the higher plus its own: a configuration with no memory (``none``)
  belongs inside it, whatever it does with the room.
- **Paired test.** McNemar's exact test: of the questions exactly one configuration got
  right, is the split further from even than chance would make it? The two-sided
  p-value is ``min(1, 2 * P(X <= min(b, c)))`` for ``X ~ Binomial(b + c, 1/2)``. Many
  pairs are tested at once, so their p-values are corrected by Holm's step-down method
  (``holm``), which keeps the chance of any false "significant" within the family at 5%.
- **The reader's ceiling.** ``evidence`` shows the reader only the memories holding
  the answer. It is *clearly* above the baselines when the lower end of its 95% Wilson
  interval on the answerable questions (``present`` left out) is above the best
  baseline's accuracy on the same questions; otherwise the probe is ``uninformative``:
  the reader cannot use the evidence even when handed it, so no comparison of memory
  configurations means anything.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from engine.lab.probe.question_kinds import IDK

Outcome = Literal["correct", "wrong", "abstained", "unparsed"]
UNPARSED: Final = "unparsed"
PRESENT: Final = "present"
"""The category of questions whose gold the situation shows."""
ABSTENTION: Final = "abstention"
BASELINES: Final = ("uniform", "guess", "dont_know", "present")
Z95: Final = 1.96
"""The normal quantile of a two-sided 95% interval."""
INFORMATIVE: Final = "informative"
UNINFORMATIVE: Final = "uninformative"
NOT_MEASURED: Final = "not measured"


def outcome(chosen: str | None, gold: str) -> Outcome:
    """What a reply that named ``chosen`` (None: no option) scores against ``gold``."""
    if chosen is None:
        return "unparsed"
    if chosen == gold:
        return "correct"
    return "abstained" if chosen == IDK else "wrong"


@dataclass(frozen=True, slots=True)
class Situation:
    """What a prompt shows of the present: the room's name, who and what is here."""

    room: str = ""
    people: tuple[str, ...] = ()
    things: tuple[str, ...] = ()

    def shows(self, text: str) -> bool:
        folded = text.casefold().strip()
        return bool(folded) and folded in {
            n.casefold().strip() for n in (self.room, *self.people, *self.things) if n
        }


def leaks(gold: str, situation: Situation) -> bool:
    """Whether the situation shows the gold answer (never for "I don't know")."""
    return gold != IDK and situation.shows(gold)


def present_choice(options: Sequence[str], situation: Situation) -> str:
    """The ``present`` rule's answer: the current room when it is an option, else the
    first option the situation shows (someone or something here), else "I don't know"."""
    room = Situation(situation.room)
    return next((o for o in options if o != IDK and room.shows(o)),
                next((o for o in options if o != IDK and situation.shows(o)), IDK))  # fmt: skip


def baseline_scores(options: Sequence[str], gold: str, situation: Situation) -> dict[str, float]:
    """Each baseline's expected score (0 to 1) on one question."""
    real = [o for o in options if o != IDK]
    return {
        "uniform": 1 / len(options) if gold in options else 0.0,
        "guess": (1 / len(real) if gold in real else 0.0) if real else 0.0,
        "dont_know": 1.0 if gold == IDK else 0.0,
        "present": 1.0 if present_choice(options, situation) == gold else 0.0,
    }


def mean_baselines(scores: Iterable[Mapping[str, float]]) -> dict[str, float | None]:
    """Each baseline's accuracy over questions (None over none)."""
    rows = list(scores)
    return {
        name: (round(math.fsum(r[name] for r in rows) / len(rows), 4) if rows else None)
        for name in BASELINES
    }


def room_scores(options: Sequence[str], gold: str,
                situation: Situation) -> tuple[float, float, float]:  # fmt: skip
    """The expected scores on one question of three readers with no memory: one that
    always picks an option the situation shows (uniformly among them), one that ignores
    the situation (``guess``) and one that never picks a shown option (uniformly among
    the others); with no option shown, or every one, the first and last guess too."""
    real = [o for o in options if o != IDK]
    guess = (1 / len(real) if gold in real else 0.0) if real else 0.0
    shown = [o for o in real if situation.shows(o)]
    hidden = [o for o in real if not situation.shows(o)]
    if not shown or not hidden:
        return guess, guess, guess
    drawn = 1 / len(shown) if gold in shown else 0.0
    shy = 1 / len(hidden) if gold in hidden else 0.0
    return drawn, guess, shy


def present_aware(rows: Sequence[tuple[float, float, float]]) -> dict[str, Any] | None:
    """The present-aware baseline over questions (``room_scores`` each; None over none):
    ``accuracy`` (``guess``'s), ``always_shown`` and ``never_shown`` (the two readers'
    expected accuracies) and ``interval``, from the lower of them less its 95% sampling
    error to the higher plus its own (each reader's score is a sum of independent draws:
    its variance is the sum of p(1 - p))."""
    if not rows:
        return None
    n = len(rows)
    drawn, guess, shy = ([row[i] for row in rows] for i in range(3))

    def mean(ps: Sequence[float]) -> float:
        return math.fsum(ps) / n

    def error(ps: Sequence[float]) -> float:
        return Z95 * math.sqrt(math.fsum(p * (1 - p) for p in ps)) / n

    ends = sorted([(mean(drawn), error(drawn)), (mean(shy), error(shy))])
    low = max(0.0, ends[0][0] - ends[0][1])
    high = min(1.0, ends[1][0] + ends[1][1])
    return {"accuracy": round(mean(guess), 4), "interval": [round(low, 4), round(high, 4)],
            "always_shown": round(mean(drawn), 4), "never_shown": round(mean(shy), 4)}  # fmt: skip


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """McNemar's exact two-sided p-value: ``a_only`` questions only the first got right,
    ``b_only`` only the second (1.0 when they never disagree)."""
    if a_only < 0 or b_only < 0:
        raise ValueError("counts are never negative")
    n = a_only + b_only
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(a_only, b_only) + 1))
    return min(1.0, 2 * tail / (1 << n))  # exact integers: no overflow past 1,023 questions


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of ``p_values`` (one family of tests), in their
    order: the i-th smallest (from 0) of m is multiplied by m - i, capped at 1, and no
    adjusted value is below that of a smaller p-value (ties: the earlier first)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def paired(first: Mapping[str, bool], second: Mapping[str, bool]) -> dict[str, float | int]:
    """McNemar's test on the questions both were asked: ``first``/``second``: question id
    -> right."""
    shared = sorted(set(first) & set(second))
    a_only = sum(1 for q in shared if first[q] and not second[q])
    b_only = sum(1 for q in shared if second[q] and not first[q])
    return {"n": len(shared), "a_only": a_only, "b_only": b_only,
            "p_value": mcnemar_exact(a_only, b_only)}  # fmt: skip


def wilson(correct: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of ``correct`` out of ``n`` (95% by default)."""
    if n == 0:
        return (0.0, 1.0)
    p = correct / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def ceiling_verdict(correct: int, n: int, best_baseline: float | None) -> str:
    """``informative`` when the ceiling's Wilson lower bound (``correct`` of ``n``
    answerable questions under ``evidence``) is above ``best_baseline``; else
    ``uninformative``; ``not measured`` with no answerable question asked."""
    if n == 0 or best_baseline is None:
        return NOT_MEASURED
    return INFORMATIVE if wilson(correct, n)[0] > best_baseline else UNINFORMATIVE


def question_age(count: int, evidence: Sequence[int]) -> tuple[int, int]:
    """(age, span) of a question: ``count`` (M) minus its *oldest* evidence seq, and its
    newest minus its oldest evidence seq; ``(M, 0)`` with no evidence (abstention)."""
    if not evidence:
        return count, 0
    return count - min(evidence), max(evidence) - min(evidence)
