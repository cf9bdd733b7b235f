"""A scripted backend that ships with the product: for tests, demos and benchmarks.

    ScriptedBackend(["look", "say Hello"])            # each agent: in order, then cycles
    ScriptedBackend(["look"], fail_first=2)           # two failures, then replies
    ScriptedBackend.from_spec("look;say Hello")       # what `--llm fake:look;say Hello` builds
    ScriptedBackend.from_spec("summaries=faithful;look")  # summaries in the memories' words
    ScriptedBackend.from_spec("script=shared;look;say Hi")  # one walk for all agents

Turns get the script, each agent's from its own start: an agent's calls walk it in
order (a re-ask after a rejected reply is the next line), whatever the other agents
asked, so ``say Hello;look`` makes every agent say Hello, then look. The agent is the
request's own ``agent`` field, which every turn request carries (``Thinker``); requests
without one share one walk, and so do all of them with ``shared`` (``script=shared`` in
a spec): each line goes to the next turn asked, whoever asks, so with as many turns as
lines every line is said once, by one agent (a probe's village run wants that).

Summary requests get one fixed first-person summary, which ends by naming the words its
memories use most (``fake_summary``: so it is about them, as the quality gate asks);
knowledge passes get ``knowledge`` (both phases) and handbook requests ``handbook`` (by
default nothing usable, so the rules write the handbook).

It records every prompt it was given, so tests can check what an agent saw.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from engine.errors import LLMUnavailableError
from engine.llm.embedding import bag_of_words
from engine.llm.request import Generation, LLMRequest
from engine.memory.extractive import extractive_merge, extractive_summary
from engine.memory.summary_prompts import CHARS_PER_WORD, CHUNK_CUE, summary_budget
from engine.memory.wording import STOPWORDS, words

FAITHFUL = "<faithful>"
"""As ``summary``: each summary keeps the memories' own words (``faithful_summary``), so
what a summary holds can be checked word for word (the recall probe's oracle does). A
chunk's such summary is a copy of memory lines, which the quality gate does not take
from a model: after its rejections the compactor makes the same summary extractively."""
FAITHFUL_SPEC = "summaries=faithful"
"""In ``--llm fake:...``: the summaries are ``FAITHFUL``."""
SHARED_SPEC = "script=shared"
"""In ``--llm fake:...``: one walk through the script for all agents (``shared``)."""
DEFAULT_SCRIPT = ("look", "say Hello.", "think What a quiet place.")
DEFAULT_SUMMARY = "I looked around, said hello to whoever was near, and kept my thoughts to myself."
_AT_MOST = re.compile(r"Use at most (\d+) words")
_OWN_WORDS = frozenset({"most", "remember", "looked", "around", "said", "hello", "whoever",
                        "near", "kept", "thoughts", "myself", "summary", "none", "lately"})  # fmt: skip


class ScriptedBackend:
    def __init__(
        self,
        replies: Sequence[str] = DEFAULT_SCRIPT,
        *,
        fail_first: int = 0,
        summary: str = DEFAULT_SUMMARY,
        knowledge: str = "[]",
        handbook: str = "",
        shared: bool = False,
    ) -> None:
        if not replies:
            raise ValueError("a scripted backend needs at least one reply")
        self.replies = list(replies)
        self.summary = summary
        """What every summarizer request gets (the script is for turns)."""
        self.knowledge = knowledge
        """What every knowledge-pass request gets (default: nothing was learned)."""
        self.handbook = handbook
        """What every handbook request gets (default: an empty reply)."""
        self.fail_first = fail_first
        self.shared = shared
        """One walk through the script for all agents, instead of one each."""
        self.prompts: list[str] = []
        self.requests: list[LLMRequest] = []
        self.embedded: list[str] = []
        """Every text ``embed`` was given."""
        self._next: dict[str | None, int] = {}
        """Agent name -> how far its calls have walked the script."""

    @classmethod
    def from_spec(cls, spec: str) -> ScriptedBackend:
        """``"look;say Hi"`` -> replies ``["look", "say Hi"]``; empty -> the default script;
        a part ``summaries=faithful`` makes the summaries keep the memories' words, a part
        ``script=shared`` deals the script across all agents (``shared``)."""
        parts = [part.strip() for part in spec.split(";") if part.strip()]
        replies = [part for part in parts if part not in (FAITHFUL_SPEC, SHARED_SPEC)]
        summary = FAITHFUL if FAITHFUL_SPEC in parts else DEFAULT_SUMMARY
        return cls(replies or DEFAULT_SCRIPT, summary=summary, shared=SHARED_SPEC in parts)

    async def generate(self, request: LLMRequest) -> Generation:
        started = time.perf_counter()
        prompt = request.prompt()
        self.prompts.append(prompt)
        self.requests.append(request)
        if self.fail_first > 0:
            self.fail_first -= 1
            raise LLMUnavailableError("scripted failure")
        if request.role == "consolidator":
            text = self.knowledge
        elif request.role == "handbook":
            text = self.handbook
        elif request.role != "actor":
            text = self.summary
            if text == FAITHFUL:
                text = faithful_summary(prompt, asked_length(prompt, request.options))
            elif text == DEFAULT_SUMMARY:
                text = fake_summary(prompt)
        else:
            text = self.next_reply(request.agent)
        return Generation(
            text=text,
            prompt_tokens=len(prompt) // 4,
            completion_tokens=max(1, len(text) // 4),
            latency=time.perf_counter() - started,
            done_reason="stop",
        )

    def next_reply(self, agent: str | None) -> str:
        """The next line of ``agent``'s own walk through the script (of the one walk, when
        ``shared``)."""
        walk = None if self.shared else agent
        step = self._next.get(walk, 0)
        self._next[walk] = step + 1
        return self.replies[step % len(self.replies)]

    async def embed(self, texts: list[str], model: str = "") -> list[list[float]]:
        """A hashed bag of words per text (``engine.llm.embedding.bag_of_words``)."""
        self.embedded.extend(texts)
        return [bag_of_words(text) for text in texts]

    async def aclose(self) -> None:
        return None


def asked_length(prompt: str, options: Mapping[str, Any]) -> int:
    """The characters a summary may take: what ``num_predict`` allows, and no more than
    the prompt asks for ("Use at most N words", at ``CHARS_PER_WORD``)."""
    budget = summary_budget(options)
    asked = _AT_MOST.search(prompt)
    return min(budget, int(asked.group(1)) * CHARS_PER_WORD) if asked else budget


def fake_summary(prompt: str) -> str:
    """ "I remember ..." and the (up to) six words the prompt's memories use most, or for a
    merge up to three of each summary's, so that the summary is about them, in their words (the
    gate finds it grounded); ``DEFAULT_SUMMARY`` when they have too few (pure)."""
    lines = prompt.splitlines()
    if "MEMORIES:" in lines:
        top = _most_used("\n".join(lines[lines.index("MEMORIES:") + 1 :]), 6)
        if len(top) < 2:
            return DEFAULT_SUMMARY
        return f"I remember {', '.join(top[:-1])} and {top[-1]}, again and again."
    old_text, new_text = _section(lines, "OLDER SUMMARY:"), _section(lines, "RECENT SUMMARY:")
    old_words, new_words = set(words(old_text)), set(words(new_text))
    ranked = _most_used(old_text, None)
    rare = [w for w in reversed(ranked) if w not in new_words]  # the rarest: what only it says
    older = list(dict.fromkeys(_only_first(ranked[:30], new_words)[:3] + rare[:2]))
    recent = _only_first([w for w in _most_used(new_text, 30) if w not in older], old_words)[:3]
    if not older or not recent:
        return DEFAULT_SUMMARY
    return f"I remember {_listed(older)}, and lately {_listed(recent)}."  # keeps both


def _listed(found: list[str]) -> str:
    return found[0] if len(found) == 1 else f"{', '.join(found[:-1])} and {found[-1]}"


def _only_first(found: list[str], elsewhere: set[str]) -> list[str]:
    """``found``, the words not in ``elsewhere`` first (what only that summary says)."""
    return [w for w in found if w not in elsewhere] + [w for w in found if w in elsewhere]


def _most_used(text: str, count: int | None) -> list[str]:
    """The ``count`` (None: all) words of four letters or more ``text`` uses most, most
    used first, stopwords aside."""
    found = Counter(w for w in words(text.replace(CHUNK_CUE, "")) if len(w) > 3
                    and w not in STOPWORDS and w not in _OWN_WORDS)  # fmt: skip
    return [word for word, _ in found.most_common(count)]


def faithful_summary(prompt: str, budget: int) -> str:
    """A summary in the memories' own words: a chunk's most informative memories, or a
    merge of the two summaries, as the extractive fallback makes them (pure)."""
    lines = prompt.splitlines()
    if "MEMORIES:" in lines:
        start = lines.index("MEMORIES:") + 1
        memories = [line for line in lines[start:] if line.strip() and line != CHUNK_CUE]
        return extractive_summary(memories, budget)
    older, recent = _section(lines, "OLDER SUMMARY:"), _section(lines, "RECENT SUMMARY:")
    return extractive_merge(older, recent, budget)


def _section(lines: list[str], heading: str) -> str:
    if heading not in lines:
        return ""
    body = []
    for line in lines[lines.index(heading) + 1 :]:
        if not line.strip():
            break
        body.append(line)
    return "\n".join(body)
