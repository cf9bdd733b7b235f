"""The handbook written by rules, with no model (pure): always available, deterministic,
and the default for the embedded model.

- **Profile**: the agent's own profile and description (``agent.md``), then what it
  prefers (its ``preference`` entries, newest first), then who it knows (the world's
  other characters its entries name, most named first); at most ``PROFILE_WORDS`` words.
- **General Tips**: the other entries, ranked by type (mistakes first, seed 000's
  order), then how often retrieval used them, then how recently they changed (in
  simulation time); at most ``TIPS_MAX``.
- **MEMORY.md**: one cluster per topic, a topic being an entry's most common tag in the
  whole bank (entries without tags go under their type); keywords are the tags that
  occur together in the cluster; ``rollout_files`` the pass records its entries came
  from (the newest ``ROLLOUT_MAX``). Never over ``MEMORY_BYTES`` (64 KiB):
  ``bound_memory_md`` keeps the newest, then most used, clusters (the model's: those
  citing the newest pass records), a cluster that does not fit whole cut to its first
  bullets, and ends on a line saying how many clusters and bullets it left out and
  naming their topics (the bank keeps them all). It bounds the model's MEMORY.md, and
  ``engine.vault.handbook_store`` every MEMORY.md it writes or keeps as ``.prev``.
- **Skills**: a ``procedure`` (or ``skill``) entry seen in ``SKILL_PASSES`` or more
  different passes becomes ``skills/<kebab>/SKILL.md``. A pass "saw" it when it created
  or updated the entry, or when it extracted a candidate of that type carrying the
  entry's words (``PassEvidence``: a repeated procedure is usually an exact duplicate
  that changes no entry, but each pass record lists it). Its steps are the entry's
  own, split at "then", ";" and ","; a step that begins with a command of the world is
  shown as that command.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from engine.memory.handbook import (
    EMPTY,
    MEMORY_BYTES,
    PROFILE_WORDS,
    TIPS_MAX,
    Cluster,
    Handbook,
    enforce_limits,
    kebab,
    render_memory_md,
    render_skill,
    render_summary,
    sections,
    split_clusters,
)
from engine.memory.knowledge import KNOWLEDGE_TYPES, Entry, KnowledgeType
from engine.memory.knowledge_candidates import carries

SKILL_PASSES = 3
"""Different passes a procedure must be seen in to become a skill (seed 004)."""
SKILL_TYPES: frozenset[KnowledgeType] = frozenset({"procedure", "skill"})
KEYWORDS_MAX = 8
ROLLOUT_MAX = 20
"""Pass records a rules cluster cites at most (its newest)."""
TOPIC_CHARS = 80
KEYWORD_CHARS = 40
LEFT_OUT_BYTES = 600
"""Kept free in a bounded MEMORY.md for its last line (what it left out)."""
GOTCHAS_MAX = 5
_STEP_SPLIT = re.compile(r"\s*(?:;|,?\s+then\s+|,\s+and\s+|,\s+|\.\s+)\s*", re.IGNORECASE)
_LEAD = re.compile(r"^(?:to|how to|in order to)\s+", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_][\w'-]*")


@dataclass(frozen=True)
class PassEvidence:
    """What one pass record says it extracted."""

    pass_id: str
    path: str
    """The record's path as the handbook cites it (``knowledge/passes/<id>.md``)."""
    extracted: tuple[tuple[str, str], ...] = ()
    """(type, content) of each candidate it extracted."""


@dataclass(frozen=True)
class Agent:
    """Who the handbook is for."""

    name: str
    profile: str = ""
    description: str = ""
    others: tuple[str, ...] = ()
    """The names of the world's other characters (for "who it knows")."""
    verbs: frozenset[str] = frozenset()
    """The world's command verbs (procedure steps that begin with one are commands)."""


def rules_handbook(
    agent: Agent, entries: Sequence[Entry], evidence: Sequence[PassEvidence]
) -> Handbook:
    """The whole handbook for ``entries``, within every limit of ``engine.memory.handbook``."""
    paths = {e.pass_id: e.path for e in evidence}
    skills = _skills(agent, entries, evidence, paths)
    ranked = _clusters(entries, paths)
    clusters = [cluster for cluster, _ in ranked]
    rank = {_topic(cluster.topic): key for cluster, key in ranked}
    memory_md = bound_memory_md(split_clusters(render_memory_md(agent.name, clusters)),
                                rank=rank)  # fmt: skip
    kept = {_PART.sub("", topic) for topic in sections(memory_md)}
    routes = [(c.topic, f"MEMORY.md > {c.topic}", ", ".join(c.keywords)) for c in clusters
              if _topic(c.topic) in kept]  # fmt: skip
    routes += [(name, f"skills/{name}/SKILL.md", ", ".join(words))
               for name, (_, words) in skills.items()]  # fmt: skip
    summary = render_summary(_profile(agent, entries), _tips(entries), routes)
    return Handbook(
        memory_summary=enforce_limits(summary),
        memory_md=memory_md,
        skills={name: text for name, (text, _) in skills.items()},
    )


# --- the profile and the tips ---------------------------------------------------------


def _profile(agent: Agent, entries: Sequence[Entry]) -> str:
    parts = [" ".join(f"{agent.profile} {agent.description}".split())]
    prefers = [e.content for e in _newest(e for e in entries if e.type == "preference")]
    if prefers:
        parts.append("What I prefer: " + " ".join(_sentence(p) for p in prefers))
    known = _known(agent.others, entries)
    if known:
        parts.append("People I know: " + ", ".join(known) + ".")
    words = " ".join(p for p in parts if p).split()
    return " ".join(words[:PROFILE_WORDS]) or EMPTY


def _known(others: Iterable[str], entries: Sequence[Entry]) -> list[str]:
    """The other characters the entries name, most named first."""
    counts: Counter[str] = Counter()
    for name in others:
        pattern = re.compile(rf"(?<!\w){re.escape(name.casefold())}(?!\w)")
        for entry in entries:
            text = " ".join([entry.content, *entry.tags]).casefold()
            counts[name] += len(pattern.findall(text))
    return [name for name, count in counts.most_common() if count > 0]


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if text.endswith((".", "!", "?")) else text + "."


def _newest(entries: Iterable[Entry]) -> list[Entry]:
    return sorted(entries, key=lambda e: (e.updated.sim, e.updated.at), reverse=True)


def tip_order(entry: Entry) -> tuple[int, int, str, str]:
    """Mistakes first (seed 000's type order), then the most used, then the newest."""
    return (KNOWLEDGE_TYPES.index(entry.type), -entry.access_count,
            _inverted(entry.updated.sim), _inverted(entry.updated.at))  # fmt: skip


def _inverted(text: str) -> str:
    """A key that sorts ``text`` descending (for ISO times: the newest first)."""
    return "".join(chr(0x10FFFF - ord(c)) for c in text)


def _tips(entries: Sequence[Entry]) -> list[str]:
    seen: set[str] = set()
    tips = []
    for entry in sorted((e for e in entries if e.type != "preference"), key=tip_order):
        key = " ".join(entry.content.split()).casefold()
        if key not in seen:
            seen.add(key)
            tips.append(" ".join(entry.content.split()))
    return tips[:TIPS_MAX]


# --- MEMORY.md ------------------------------------------------------------------------


Rank = tuple[str, str, int]
"""A rules cluster's rank: its newest entry's change (world time, wall time), its uses."""


def _clusters(entries: Sequence[Entry], paths: dict[str, str]) -> list[tuple[Cluster, Rank]]:
    counts = Counter(tag for entry in entries for tag in entry.tags)
    groups: dict[str, list[Entry]] = defaultdict(list)
    for entry in entries:
        topic = max(entry.tags, key=lambda t: counts[t]) if entry.tags else entry.type + "s"
        groups[topic].append(entry)
    clusters = []
    for topic, members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        tags = Counter(tag for entry in members for tag in entry.tags)
        keywords = [topic] + [t for t, _ in tags.most_common() if t != topic]
        passes = list(dict.fromkeys(p for entry in members for p in entry.source.passes))
        newest = set(sorted(passes, key=_pass_key)[-ROLLOUT_MAX:])
        cited = [paths.get(p, f"knowledge/passes/{p}.md") for p in passes if p in newest]
        cluster = Cluster(
            topic=_cut(topic[:1].upper() + topic[1:], TOPIC_CHARS),
            rollout_files=cited,
            keywords=[_cut(k, KEYWORD_CHARS) for k in keywords[:KEYWORDS_MAX]],
            bullets=[_bullet(entry) for entry in sorted(members, key=tip_order)],
        )
        last = max(members, key=lambda e: (e.updated.sim, e.updated.at)).updated
        clusters.append((cluster, (last.sim, last.at, sum(e.access_count for e in members))))
    return clusters


# --- MEMORY.md's size -----------------------------------------------------------------

_SECTION = re.compile(r"^## +(.+?)\s*$", re.MULTILINE)
_PART = re.compile(r" \(part \d+\)$")
_PART_NUMBER = re.compile(r" \(part (\d+)\)$")
_CITED = re.compile(r"knowledge/passes/(\d{8}-\d{6}(?:-\d+)?)\.md")


def bound_memory_md(
    text: str, limit: int = MEMORY_BYTES, rank: Mapping[str, Rank] | None = None
) -> str:
    """``text`` (a MEMORY.md) within ``limit`` UTF-8 bytes: as it is when it fits; else
    its clusters, the first part of each before any second part and the highest ranked
    first (``rank``: topic -> its rank; None: the newest pass record the cluster
    cites), each kept whole, or cut to the bullets that fit, or left out (a later part
    of a cluster whose first part is out goes too); the kept stay in their order, the
    text before them is cut to an eighth of ``limit``, and a last line says how many
    clusters and bullets were left out and names their topics. Always within
    ``limit``, whatever the text (a line too long is cut, or left out)."""
    if _bytes(text) <= limit:
        return text
    found = list(_SECTION.finditer(text))
    whole = (text[: found[0].start()] if found else text).rstrip("\n")
    head = _cut_bytes(whole, (limit // 8 if found else limit - LEFT_OUT_BYTES) - 2)
    bullets_out = _bullets(whole) - _bullets(head)
    head = head.rstrip("\n") + "\n\n" if head.strip() else ""
    ends = [m.start() for m in found[1:]] + [len(text)] * bool(found)
    blocks = [text[m.start() : e].rstrip("\n") + "\n\n" for m, e in zip(found, ends, strict=True)]
    topics = [_topic(_PART.sub("", m.group(1))) for m in found]
    parts = [int(p[0]) if (p := _PART_NUMBER.findall(m.group(1))) else 1 for m in found]

    def key(i: int) -> tuple[int, tuple[object, ...], int]:  # every cluster's first part first
        known = rank.get(topics[i]) if rank is not None else _cited(blocks[i])
        return (-parts[i], known or (), -i)

    room = limit - _bytes(head) - LEFT_OUT_BYTES
    kept: dict[int, str] = {}
    shown_topics: set[str] = set()
    firsts = {topic for topic, part in zip(topics, parts, strict=True) if part == 1}
    for i in sorted(range(len(blocks)), key=key, reverse=True):
        after_first = topics[i] in shown_topics or topics[i] not in firsts
        shown, left = _fitted(blocks[i], room if parts[i] == 1 or after_first else -1)
        bullets_out += left
        if shown:
            kept[i], room = shown, room - _bytes(shown)
            shown_topics.add(topics[i])
    gone = [t for t in dict.fromkeys(topics) if t not in shown_topics]
    body = head + "".join(kept[i] for i in sorted(kept))
    note = (f"(Left out to keep MEMORY.md within {limit:,} bytes: {len(gone)} clusters and"
            f" {bullets_out} bullets; the knowledge bank keeps them.")  # fmt: skip
    named = f" Topics left out: {', '.join(gone)}" if gone else ""
    return body + _cut_bytes(note + named, LEFT_OUT_BYTES - 8).rstrip("\n") + ")\n"


def _fitted(block: str, room: int) -> tuple[str, int]:
    """(``block``, or its head and the bullets that fit in ``room`` bytes, "" when none
    does; the bullets left out)."""
    lines = block.splitlines()
    bullets = [n for n, line in enumerate(lines) if line.startswith("- ")]
    if _bytes(block) <= room:
        return block, 0
    first = bullets[0] if bullets else len(lines)
    shown = "\n".join(lines[:first]).rstrip("\n") + "\n\n"
    kept = 0
    for line in lines[first:]:
        if line.startswith("- ") and _bytes(shown) + _bytes(line) + 2 <= room:
            shown += line + "\n"
            kept += 1
    return (shown + "\n", len(bullets) - kept) if kept else ("", len(bullets))


def _bullets(text: str) -> int:
    return sum(line.startswith("- ") for line in text.splitlines())


def _cited(block: str) -> tuple[tuple[str, int], ...]:
    """The newest pass record a cluster cites, as a sortable key (() for none)."""
    ids = [_pass_key(m.group(1)) for m in _CITED.finditer(block)]
    return (max(ids),) if ids else ()


def _pass_key(pass_id: str) -> tuple[str, int]:
    """``YYYYMMDD-HHMMSS[-n]`` in the order passes ran (``-2`` after the bare id)."""
    number = pass_id[16:]
    return (pass_id[:15], int(number) if number.isdigit() else 1)


def _topic(text: str) -> str:
    return " ".join(text.split())


def _bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _cut_bytes(text: str, limit: int) -> str:
    """``text`` within ``limit`` UTF-8 bytes, at its last line break that fits (or in
    its first line when none does)."""
    if _bytes(text) <= limit:
        return text
    piece = text.encode("utf-8", "surrogatepass")[: max(0, limit - 3)].decode("utf-8", "ignore")
    line_end = piece.rfind("\n")
    return piece[: line_end + 1] if line_end > 0 else piece + "…"


def _bullet(entry: Entry) -> str:
    when = entry.created.sim[:10]
    changed = entry.updated.sim[:10]
    dates = f"learned {when}" + (f", updated {changed}" if changed != when else "")
    return f"{' '.join(entry.content.split())} ({entry.type}; {dates})"


# --- skills ---------------------------------------------------------------------------


def skill_passes(entry: Entry, evidence: Sequence[PassEvidence]) -> list[str]:
    """The different passes that saw ``entry`` (see the module docstring)."""
    seen = dict.fromkeys(entry.source.passes)
    for record in evidence:
        if any(kind in SKILL_TYPES and _same(content, entry.content)
               for kind, content in record.extracted):  # fmt: skip
            seen.setdefault(record.pass_id)
    return list(seen)


def supported_skill(
    skill_md: str, entries: Sequence[Entry], evidence: Sequence[PassEvidence]
) -> bool:
    """A skill (the model's) carries a procedure entry seen in ``SKILL_PASSES`` passes."""
    return any(
        entry.type in SKILL_TYPES
        and carries(skill_md, entry.content)
        and len(skill_passes(entry, evidence)) >= SKILL_PASSES
        for entry in entries
    )


def _same(a: str, b: str) -> bool:
    return carries(a, b) and carries(b, a)


def _skills(
    agent: Agent, entries: Sequence[Entry], evidence: Sequence[PassEvidence],
    paths: dict[str, str],
) -> dict[str, tuple[str, list[str]]]:  # fmt: skip
    """Skill name -> (its SKILL.md, its keywords)."""
    made: dict[str, tuple[str, list[str]]] = {}
    mistakes = [e for e in entries if e.type == "mistake"]
    for entry in sorted(entries, key=lambda e: e.created.at):
        if entry.type not in SKILL_TYPES:
            continue
        passes = skill_passes(entry, evidence)
        if len(passes) < SKILL_PASSES:
            continue
        title, steps = _title_and_steps(entry.content)
        name = _unique(kebab(title)[:40].strip("-") or "skill", made)
        words = [w.casefold() for w in _WORD.findall(title) if len(w) > 2]
        keywords = list(dict.fromkeys([*entry.tags, *words]))[:KEYWORDS_MAX]
        gotchas = [" ".join(m.content.split()) for m in mistakes
                   if set(m.tags) & set(entry.tags)][:GOTCHAS_MAX]  # fmt: skip
        cited = ", ".join(paths.get(p, f"knowledge/passes/{p}.md") for p in passes)
        text = render_skill(
            name=name,
            title=title[:1].upper() + title[1:],
            description=_cut(" ".join(entry.content.split()), 200),
            keywords=keywords,
            when=f"When you want to {title[:1].lower() + title[1:]}"
            + (f" ({', '.join(entry.tags)})." if entry.tags else "."),
            steps=[_step(step, agent.verbs) for step in steps],
            gotchas=gotchas,
            examples=[f"{agent.name} did this in {len(passes)} different passes: {cited}."],
        )
        made[name] = (text, keywords)
    return made


def _title_and_steps(content: str) -> tuple[str, list[str]]:
    """ "To bake bread: go kitchen, then knead" -> ("bake bread", ["go kitchen", "knead"])."""
    text = " ".join(content.split())
    head, colon, rest = text.partition(":")
    if not colon or len(head) > 80:
        head, rest = " ".join(text.split()[:6]), text
    title = _LEAD.sub("", head).strip(" .") or "routine"
    steps = [s.strip(" .") for s in _STEP_SPLIT.split(rest) if s.strip(" .")]
    return title, steps or [text]


def _step(step: str, verbs: frozenset[str]) -> str:
    first = step.split(" ", 1)[0].lower()
    return f"`{step}`" if first in verbs else step


def _unique(name: str, taken: Mapping[str, object]) -> str:
    candidate, number = name, 2
    while candidate in taken:
        candidate, number = f"{name}-{number}", number + 1
    return candidate


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + "…"
