"""The quality gate for the summarizer's replies (pure).

    verdict = judge_summary(reply, prompt, sources=memories, limit=1050)
    verdict.summary or verdict.problem     # the cleaned summary, or why it is none

``judge_summary`` cleans a reply (``clean_summary``: think blocks, cue echoes,
preambles) and stores it only if it is a summary. It is not one when it is (in the
order checked, each with a one-line reason):

- empty, or cut off at the token limit (the backend said ``done_reason`` "length");
- machine noise: control characters or terminal escapes, or chat-template and special
  tokens (``<|im_start|>``, ``[INST]``, ``<end_of_turn>``, ``### Response:`` ...);
- markup: a line with no letter or digit ("###", "...", "---") or a heading ("# ...");
- a refusal or an AI disclaimer in any sentence ("I cannot summarize ...", "As an AI",
  "I'm an AI", "no memories to summarize");
- talk to the asker: a question (outside quoted speech) or an offer of help;
- too little: fewer than ``MIN_WORDS`` words, or no sentence (four words or more with a
  function word: a list of names is not one);
- an echo of the instructions (``ECHO_WORDS`` words in a row of them, the prompt's
  character name left out of both) or of one of the prompt's headings;
- a copy: with ``copies_allowed`` off (a chunk's summary), at least ``COPY_SHARE`` of
  its words lie in runs of ``COPY_WORDS`` words copied from ``sources``;
- a loop: one sentence, or one run of eight words, three or more times;
- midway: it stops mid-sentence (no closing punctuation after a word such as "the" or
  "and": cut off, whatever the backend said);
- foreign: written in another script or language than ``sources``
  (``engine.memory.language``);
- ungrounded: not grounded in ``sources`` and ``names`` (``engine.memory.grounding``:
  most of its content words are theirs, and every name, number and quoted phrase);
- a merge (``merge`` given) that keeps nothing of one of its two parts, or is one of
  them again nearly word for word;
- too long: more than ``limit`` characters (what the agent's prompt shows whole).

The structural checks come first and are cheap; the measured ones (language,
grounding, the merge's parts) follow. ``sources`` are always what the summary's facts
must come from: a chunk's raw memories; for a merge, the old long-term summary (itself
grounded when it was stored) and the recent summary with the raw memories it covers.
Stored junk never vouches for new junk.

A rejected reply is a failed attempt for the compactor; after enough of them on one step
it falls back to an extractive summary (``engine.memory.extractive``).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from engine.memory.faithfulness import unfaithful
from engine.memory.grounding import grounding, keeps_both, near_copy
from engine.memory.language import foreign, is_english, language_code
from engine.memory.summary_prompts import clean_summary
from engine.memory.wording import sentences, word_count, words

__all__ = ["judge_summary", "sentences", "words"]

EMPTY: Final = "the summarizer's reply was empty"
CUT_OFF: Final = "the summarizer's reply was cut off at its token limit (num_predict)"
MIDWAY: Final = "the summarizer's reply ends in the middle of a sentence"
NOISE: Final = "the summarizer's reply holds control characters or escapes"
TEMPLATE: Final = "the summarizer's reply holds chat-template or special tokens"
MARKUP: Final = "the summarizer's reply holds markup, not sentences"
REFUSAL: Final = "the summarizer's reply is a refusal or an AI disclaimer, not a summary"
ASKS_BACK: Final = "the summarizer's reply speaks to the asker (a question or an offer)"
TOO_SHORT: Final = "the summarizer's reply is too short to be a summary"
NO_SENTENCE: Final = "the summarizer's reply has no sentence"
ECHO: Final = "the summarizer's reply repeats the prompt's instructions"
COPY: Final = "the summarizer's reply is mostly a copy of the memories"
FOREIGN: Final = "the summarizer's reply is not in its memories' language"
UNGROUNDED: Final = "the summarizer's reply is not grounded in its memories"
UNFAITHFUL: Final = "the summarizer's reply says what its memories do not"
LOSES_A_PART: Final = "the merged summary does not keep both summaries it merges"
ONE_PART_AGAIN: Final = "the merged summary is one of the two it merges, nearly word for word"
LOOP: Final = "the summarizer's reply repeats itself"
TOO_LONG: Final = "the summarizer's reply is longer than the prompt can show whole"

MIN_WORDS: Final = 8
ECHO_WORDS: Final = 4
"""An echo shares this many words in a row with the prompt's instructions."""
COPY_WORDS: Final = 6
COPY_SHARE: Final = 0.5
LOOP_REPEATS: Final = 3
"""A sentence (or a run of ``LOOP_WORDS`` words) this many times is a loop."""
LOOP_WORDS: Final = 8

_FUNCTION_WORDS: Final = frozenset({
    "i", "me", "my", "we", "us", "our", "he", "him", "his", "she", "her", "they", "them",
    "their", "it", "its", "the", "a", "an", "and", "but", "or", "to", "of", "in", "on",
    "at", "with", "was", "were", "is", "are", "had", "has", "have", "for", "from", "then",
    "that", "this", "by", "as", "not", "so",
})  # fmt: skip
_HEADING = re.compile(r"^[A-Z][A-Z ]*:$")
_CONTROL_EXTRA = frozenset("\u200b\u200c\u200d\u200e\u200f\u2028\u2029\ufeff") | frozenset(
    chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
)
_ESCAPE_TEXT = re.compile(r"\\(?:x1b|033|e|u001b)\[?", re.IGNORECASE)
_TEMPLATE = re.compile(
    r"<\|[^|<>\n]{1,40}\|>|</?s>|\[/?INST\]|<</?SYS>>|<(?:start|end)_of_turn>|"
    r"<(?:bos|eos|pad|unk|eot|sep|cls|mask)>|</?(?:system|user|assistant)>|"
    r"^\s*#*\s*(?:instruction|response|human|assistant|user|system|input|output)\s*:",
    re.IGNORECASE | re.MULTILINE,
)
_AS_AN_AI = re.compile(
    r"\bas an? (?:ai|a\.i\.|artificial intelligence|(?:large |ai )?language model|"
    r"(?:ai |virtual )?assistant|llm|chatbot)\b",
    re.IGNORECASE,
)
_I_AM_AN_AI = re.compile(
    r"\bi(?:['’]m| am) (?:just |only |merely |simply )?(?:an? )?(?:ai|a\.i\.|"
    r"artificial intelligence|(?:large )?language model|llm|chatbot|(?:ai |virtual )?"
    r"assistant|computer program|machine)\b|"
    r"\bi (?:do not|don['’]t|cannot|can['’]t) (?:have|access|recall) (?:any )?"
    r"(?:personal )?(?:memories|experiences|feelings|access)\b|"
    r"\bi (?:do not|don['’]t|cannot|can['’]t|no longer) (?:remember|recall) (?:anything|much|"
    r"any of)\b|"
    r"\b(?:no|any|not enough) (?:memories|information|text|content|context|data|details) "
    r"(?:to|for me to) (?:summari[sz]e|work with|combine|go on)\b|"
    r"\bnothing (?:here )?to summari[sz]e\b|"
    r"\bthere (?:are|were|is|was) no (?:memories|summaries|information)\b",
    re.IGNORECASE,
)
_REFUSAL_OPENING = re.compile(
    r"^(?:i['’]?m sorry|i am sorry|sorry|my apologies|i apologi[sz]e|"
    r"(?:unfortunately,?\s+)?i (?:can(?:no|['’])t|cannot|am unable to|am not able to|"
    r"won['’]t|will not|must decline)|(?:unfortunately,?\s+)?i['’]m (?:unable|not able) to)\b",
    re.IGNORECASE,
)
_ABOUT_THE_TASK = re.compile(
    r"\b(?:summar\w*|assist\w*|help (?:you|with (?:that|this|these|your))|request|"
    r"provide|comply|fulfil\w*|complete (?:this|the|that)|these memories|this task|"
    r"that task|this request|the memories|the summaries|do that)\b",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|«[^»\n]*»")
_OFFER = re.compile(
    r"\b(?:let me know|i hope (?:this|that) helps|feel free to|is there anything else|"
    r"would you like|do you want me|shall i|should i (?:continue|go on)|please (?:provide|"
    r"share|give|clarify|let)|if you (?:need|want|would like))\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class MergeParts:
    """What a merge folds: the old long-term summary, and the recent summary with the
    raw memories it covers."""

    older: str
    recent: str
    recent_memories: Sequence[str] = ()


@dataclass(frozen=True)
class Verdict:
    summary: str | None
    """The cleaned summary when the reply passed, else None."""
    problem: str | None
    """Why the reply was rejected (one line), else None."""
    cleaned: str | None = None
    """The cleaned reply when it failed only for its length (``TOO_LONG``): it may be
    compressed within the limit instead of asked for again."""

    @property
    def accepted(self) -> bool:
        return self.summary is not None


def judge_summary(
    reply: str,
    prompt: str,
    *,
    sources: Sequence[str] = (),
    names: Sequence[str] = (),
    limit: int | None = None,
    merge: MergeParts | None = None,
    truncated: bool = False,
) -> Verdict:
    """Accept ``reply`` to ``prompt`` as a summary of ``sources`` (a chunk's memories; with
    ``merge``, its parts are the sources), ``names`` being what it may also name (the
    agent's profile, the world's names), or say in one line why not."""
    if truncated:
        return Verdict(None, CUT_OFF)
    text = clean_summary(reply.replace("\r\n", "\n").replace("\r", "\n"))
    if text is None:
        return Verdict(None, EMPTY)
    if merge is not None:
        sources = [merge.older, merge.recent, *merge.recent_memories]
    problem = (
        (NOISE if has_noise(text) else None)
        or (TEMPLATE if _TEMPLATE.search(text) else None)
        or (MARKUP if has_markup(text) else None)
        or (REFUSAL if is_refusal(text) else None)
        or (ASKS_BACK if asks_back(text) else None)
        or (TOO_SHORT if word_count(text) < MIN_WORDS else None)
        or (NO_SENTENCE if not has_sentence(text) else None)
        or (ECHO if echoes_instructions(text, prompt) else None)
        or (COPY if merge is None and copied_share(text, sources) >= COPY_SHARE else None)
        or (LOOP if is_loop(text) else None)
        or (MIDWAY if ends_midway(text) else None)
        or _measured(text, sources, names, merge, agent=_agent(prompt))
    )
    if problem:
        return Verdict(None, problem)
    if limit is not None and len(text) > limit:
        return Verdict(None, TOO_LONG, cleaned=text)
    return Verdict(text, None)


def _agent(prompt: str) -> str:
    """Whose memories the prompt's instructions say they are."""
    named = _NAME.search(prompt.split("\n\n", 1)[0])
    return named.group(1) if named else ""


def _measured(
    text: str,
    sources: Sequence[str],
    names: Sequence[str],
    merge: MergeParts | None,
    *,
    agent: str,
) -> str | None:
    """The measured checks: language, grounding, and a merge's two parts."""
    if not sources:
        return None
    other = foreign(text, sources)
    if other:
        return f"{FOREIGN} ({other})"
    spoken = language_code(text)
    why = grounding(text, sources, names, language=spoken).why_not()
    if why:
        return f"{UNGROUNDED}: it {why}"
    english = spoken == "en"
    memories, summaries = (
        (merge.recent_memories, [merge.older, merge.recent]) if merge else (sources, [])
    )
    why = unfaithful(text, memories, names, agent=agent, english=english, summaries=summaries)
    if why:
        return f"{UNFAITHFUL}: it {why}"
    if merge is not None:
        lost = keeps_both(text, merge.older, merge.recent, merge.recent_memories)
        if lost:
            return f"{LOSES_A_PART}: it {lost}"
        if near_copy(text, [merge.older, merge.recent]):
            return ONE_PART_AGAIN
    return None


def has_noise(text: str) -> bool:
    """Control characters (but tab and newline), format characters that hide text, or a
    terminal escape written out (``\\x1b[``)."""
    for char in text:
        if char in "\n\t":
            continue
        if unicodedata.category(char) == "Cc" or char in _CONTROL_EXTRA:
            return True
    return bool(_ESCAPE_TEXT.search(text))


_LIST_OR_EMPHASIS: Final = re.compile(r"^\s*(?:[-*•+]\s|\d+[.)]\s)|\*\*|__|\s[-*•]\s+[A-Z]")


def has_markup(text: str) -> bool:
    """A line with no letter or digit, a heading line (``# ...``), a list item (``- ``,
    ``* ``, ``1. ``, or such a marker between two items on one line) or emphasis
    (``**``, ``__``)."""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and (
            not words(stripped) or stripped.startswith("#") or _LIST_OR_EMPHASIS.search(stripped)
        ):
            return True
    return False


def has_sentence(text: str) -> bool:
    """Some sentence of four words or more, with an English function word in it when
    the text is English (prose, not a list of names or keywords)."""
    english = is_english(text)
    for sentence in sentences(text):
        found = words(sentence)
        if word_count(sentence) >= 4 and (not english or any(w in _FUNCTION_WORDS for w in found)):
            return True
    return False


_DANGLING: Final = frozenset({
    "the", "a", "an", "and", "or", "but", "to", "of", "in", "on", "at", "with", "from",
    "that", "my", "his", "her", "their", "our", "your", "its", "for", "by", "into", "as",
    "than", "i", "we", "he", "she", "they", "was", "were", "is", "are", "had", "have",
})  # fmt: skip


_CLOSING: Final = ".!?…。！？\"”’')»」"


def ends_midway(text: str) -> bool:
    """The text stops without closing its last sentence (no full stop, question or
    exclamation mark, ellipsis or closing quote): a reply cut off, whatever the backend
    said."""
    return bool(words(text)) and text.rstrip()[-1:] not in _CLOSING


def is_refusal(text: str) -> bool:
    """True when ``text`` speaks as an AI anywhere, says there is nothing to summarize,
    or a sentence of it opens with an apology or a "cannot" about the task."""
    if _AS_AN_AI.search(text) or _I_AM_AN_AI.search(text):
        return True
    return any(
        _REFUSAL_OPENING.match(sentence) and _ABOUT_THE_TASK.search(sentence)
        for sentence in sentences(text)
    )


def asks_back(text: str) -> bool:
    """A question outside quoted speech, or an assistant's offer ("Let me know if ...")."""
    unquoted = _QUOTED.sub('""', text)
    if _OFFER.search(unquoted):
        return True
    return any(sentence.rstrip("\"'”)»").endswith("?") for sentence in sentences(unquoted))


def _shingles(tokens: list[str], size: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + size]) for i in range(len(tokens) - size + 1)}


_NAME = re.compile(r"\bof (.+?)(?:'s past| in first person)")


def echoes_instructions(text: str, prompt: str) -> bool:
    """True when ``text`` repeats ``ECHO_WORDS`` words of the prompt's instructions in a
    row (the character's name, which a summary may well use, left out of both), or
    one of the prompt's headings as a line of its own."""
    instructions = prompt.split("\n\n", 1)[0]
    named = _NAME.search(instructions)
    name = set(words(named.group(1))) if named else set()
    ours = [w for w in words(instructions) if w not in name]
    theirs = [w for w in words(text) if w not in name]
    if _shingles(ours, ECHO_WORDS) & _shingles(theirs, ECHO_WORDS):
        return True
    headings = {line.strip() for line in prompt.splitlines() if _HEADING.match(line.strip())}
    return any(line.strip() in headings for line in text.splitlines())


def copied_share(text: str, sources: Sequence[str]) -> float:
    """The share of ``text``'s words that lie in a run of ``COPY_WORDS`` words found
    word for word in one of ``sources`` (0 with no sources)."""
    tokens = words(text)
    if not sources or len(tokens) < COPY_WORDS:
        return 0.0
    known: set[tuple[str, ...]] = set()
    for source in sources:
        known |= _shingles(words(source), COPY_WORDS)
    covered = [False] * len(tokens)
    for start in range(len(tokens) - COPY_WORDS + 1):
        if tuple(tokens[start : start + COPY_WORDS]) in known:
            covered[start : start + COPY_WORDS] = [True] * COPY_WORDS
    return sum(covered) / len(tokens)


def is_loop(text: str) -> bool:
    """True when one sentence, or one run of ``LOOP_WORDS`` words, comes back
    ``LOOP_REPEATS`` or more times (runs counted where they do not overlap)."""
    said = Counter(" ".join(words(s)) for s in sentences(text))
    said.pop("", None)
    if said and max(said.values()) >= LOOP_REPEATS:
        return True
    tokens = words(text)
    starts: dict[tuple[str, ...], list[int]] = {}
    for index in range(len(tokens) - LOOP_WORDS + 1):
        starts.setdefault(tuple(tokens[index : index + LOOP_WORDS]), []).append(index)
    return any(_apart(found) >= LOOP_REPEATS for found in starts.values())


def _apart(starts: list[int]) -> int:
    """How many of ``starts`` (ascending) are at least ``LOOP_WORDS`` apart, greedily."""
    count, last = 0, -LOOP_WORDS
    for start in starts:
        if start >= last + LOOP_WORDS:
            count, last = count + 1, start
    return count
