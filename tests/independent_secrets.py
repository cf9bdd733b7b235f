"""The independent secret corpora (``tests/data/secret_corpus_*.json``), each written by a
helper session that had not read ``engine/memory/secret*.py`` nor the other corpora, and
how a redacted text is judged against them (issue 44).

- ``independent`` (the first): a third of it held out (``split: heldout``). The rates the
  README gives are the held-out part's; the patterns were never tuned on its failures
  (only its rates were read, after each round of changes).
- ``second``, ``third`` (harmless-heavy) and ``fourth`` (four of each of the first's
  forms, written from its form names alone): all ``tune``, read whole while the rules
  were written.
- ``fresh``: written after the rules were, all of it held out, its rates read once.

A secret *leaks* from an output when its whole value survives in it, or any 16
characters of a value of 24 or more, or 8 digits of a card number in a row (spaces and
dashes between digits ignored); a kept vendor prefix (``sk_live_``) or a card's last
four digits do not count, nor a private key's ``-----BEGIN ... KEY-----`` and ``END``
lines (its kept prefix). A harmless sentence is *touched* when it does not come back
verbatim."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

DATA: Final = Path(__file__).parent / "data"
CORPUS: Final = DATA / "secret_corpus_independent.json"
TUNE_CORPORA: Final = ("second", "third", "fourth")
WINDOW: Final = 16
LONG: Final = 24
CARD_RUN: Final = 8


@dataclass(frozen=True)
class Sample:
    id: str
    form: str
    text: str
    values: tuple[str, ...]
    split: str

    @property
    def card(self) -> bool:
        return self.form.startswith("credit_card")


def samples(kind: str, split: str | None = None, corpus: str = "independent") -> list[Sample]:
    """The ``corpus``'s ``kind`` ("secrets" or "harmless") items, of ``split`` (None: all)."""
    data = json.loads((DATA / f"secret_corpus_{corpus}.json").read_text(encoding="utf-8"))
    found = [Sample(x["id"], x["form"], x["text"], tuple(x.get("values", ())), x["split"])
             for x in data[kind]]  # fmt: skip
    return [s for s in found if split is None or s.split == split]


def leaks(sample: Sample, output: str) -> bool:
    """Whether any of ``sample``'s values survives in ``output`` (see the module)."""
    return any(_survives(value, output, card=sample.card) for value in sample.values)


_ARMOUR = re.compile(r"-----(?:BEGIN|END) [A-Z0-9 ]+-----\n?")


def _survives(value: str, output: str, *, card: bool) -> bool:
    value = _ARMOUR.sub("", value).strip()  # a key's BEGIN/END lines are its kept prefix
    if card:
        digits = re.sub(r"\D", "", value)
        joined = re.sub(r"(?<=\d)[ -](?=\d)", "", output)
        runs = (digits[i : i + CARD_RUN] for i in range(len(digits) - CARD_RUN + 1))
        return any(run in joined for run in runs)
    if value in output:
        return True
    if len(value) >= LONG:
        return any(value[i : i + WINDOW] in output for i in range(len(value) - WINDOW + 1))
    return False


@dataclass(frozen=True)
class Rates:
    secrets: int
    redacted: int
    harmless: int
    touched: int
    leaked: tuple[str, ...]
    changed: tuple[str, ...]

    @property
    def redacted_share(self) -> float:
        return self.redacted / self.secrets if self.secrets else 1.0

    @property
    def touched_share(self) -> float:
        return self.touched / self.harmless if self.harmless else 0.0


def rates(
    secrets: Sequence[Sample], harmless: Sequence[Sample], outputs: Callable[[Sample], str]
) -> Rates:
    """How ``outputs`` (a sample's text as it ends up somewhere) fares on the samples."""
    leaked = tuple(s.id for s in secrets if leaks(s, outputs(s)))
    changed = tuple(s.id for s in harmless if outputs(s) != s.text)
    return Rates(len(secrets), len(secrets) - len(leaked), len(harmless), len(changed),
                 leaked, changed)  # fmt: skip
