"""The handbook's three documents and their limits (pure): seed 004's shapes.

An agent's handbook (``agents/<Name>/handbook/``) is consolidated from its knowledge
passes, by the model or by rules (``engine.memory.handbook_rules``):

- ``memory_summary.md``: ``## Profile`` (who the agent is, what it wants, how it goes
  about things, who it knows; at most ``PROFILE_WORDS`` words), ``## General Tips`` (a
  numbered list, at most ``TIPS_MAX`` items, most useful first) and ``## Routing Index``
  (a table ``| Topic | Location | Keywords |`` pointing into MEMORY.md's clusters and the
  skills). Always under ``SUMMARY_TOKENS`` (``SUMMARY_CHARS`` characters: each tip and
  routing cell is cut too); ``EMPTY`` when there is nothing.
- ``MEMORY.md``: topic clusters, each a ``## Topic`` heading, an HTML comment block
  with ``rollout_files:`` (the pass records that contributed) and ``keywords:``, then
  bullets; a cluster over ``CLUSTER_BULLETS`` bullets is split. Never over
  ``MEMORY_BYTES`` (``engine.memory.handbook_rules.bound_memory_md``, whoever wrote it).
- ``skills/<kebab-name>/SKILL.md``: front matter (``name``, ``description``,
  ``keywords``), ``# Skill: ...``, ``## When to Use``, ``## Procedure``, ``## Gotchas``,
  ``## Examples``.

``enforce_limits`` cuts an oversized memory_summary.md down to the limits (a model's
reply, or a person's edit); ``memory_md_problems`` and ``skill_problems`` say what makes
a document unusable; ``prompt_excerpt`` is what a turn's prompt carries.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Final

import yaml

from engine.memory.knowledge import cut_content
from engine.memory.tokens import CHARACTERS, TokenCounter, cut_text
from engine.world.safe_yaml import load_yaml

PROFILE_WORDS: Final = 300
TIPS_MAX: Final = 80
SUMMARY_TOKENS: Final = 5_000
CHARS_PER_TOKEN: Final = 3
"""A cautious estimate (English prose runs about 4 characters a token)."""
SUMMARY_CHARS: Final = SUMMARY_TOKENS * CHARS_PER_TOKEN
"""memory_summary.md stays under this many characters (15,000)."""
PROFILE_CHARS: Final = 3_000
TIP_CHARS: Final = 400
"""A tip at most (an entry's cap), a routing cell at most ``CELL_CHARS``."""
CELL_CHARS: Final = 200
CLUSTER_BULLETS: Final = 20
MEMORY_BYTES: Final = 65_536
"""MEMORY.md in UTF-8 bytes at most, after every write (its ``.prev`` too)."""
EMPTY: Final = "No significant learnings consolidated yet."

PROFILE: Final = "Profile"
TIPS: Final = "General Tips"
ROUTING: Final = "Routing Index"
ROUTING_HEAD: Final = "| Topic | Location | Keywords |\n|-------|----------|----------|"
SUMMARY_FILE: Final = "memory_summary.md"
MEMORY_FILE: Final = "MEMORY.md"
SKILLS_FOLDER: Final = "skills"
SKILL_FILE: Final = "SKILL.md"
SKILL_SECTIONS: Final = ("When to Use", "Procedure", "Gotchas", "Examples")

KEBAB: Final = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
NAME_MAX: Final = 64
_HEADING = re.compile(r"^## +(.+?)\s*$", re.MULTILINE)
_NUMBERED = re.compile(r"^\s*\d+[.)]\s+(.*\S)\s*$")
_COMMENT = re.compile(r"<!--(.*?)-->", re.DOTALL)
_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n?^---[ \t]*(?:\r?\n|\Z)", re.DOTALL | re.MULTILINE)


@dataclass(frozen=True)
class Handbook:
    memory_summary: str
    memory_md: str
    skills: dict[str, str] = field(default_factory=dict)
    """Skill name (kebab-case) -> its SKILL.md."""


def estimate_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def kebab(text: str) -> str:
    """``"Bake Bread!"`` -> ``"bake-bread"`` (ASCII letters and digits; at most
    ``NAME_MAX`` characters; ``"skill"`` when nothing is left)."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    name = "-".join(words)[:NAME_MAX].strip("-")
    return name or "skill"


# --- memory_summary.md -----------------------------------------------------------------


def sections(text: str) -> dict[str, str]:
    """``## Heading`` -> the text under it, up to the next ``##`` (stripped)."""
    found: dict[str, str] = {}
    matches = list(_HEADING.finditer(text))
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        found.setdefault(match.group(1).strip(), text[match.end() : end].strip())
    return found


def numbered_items(text: str) -> list[str]:
    """The items of a numbered list (``1. ...``); a line that continues an item is
    joined to it."""
    items: list[str] = []
    for line in text.splitlines():
        match = _NUMBERED.match(line)
        if match:
            items.append(match.group(1))
        elif line.strip() and items:
            items[-1] += " " + line.strip()
    return items


def render_summary(profile: str, tips: list[str], routes: list[tuple[str, str, str]]) -> str:
    """memory_summary.md from its parts (``routes``: topic, location, keywords)."""
    lines = [f"## {PROFILE}", "", profile.strip() or EMPTY, "", f"## {TIPS}", ""]
    lines += [f"{n}. {' '.join(tip.split())}" for n, tip in enumerate(tips, 1)] or [EMPTY]
    lines += ["", f"## {ROUTING}", "", ROUTING_HEAD]
    lines += [f"| {_cell(t)} | {_cell(loc)} | {_cell(k)} |" for t, loc, k in routes]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return cut_content(text.replace("|", "/"), CELL_CHARS)


def summary_problems(text: str) -> list[str]:
    """What makes a memory_summary.md unusable (its limits are enforced, not checked)."""
    found = sections(text)
    return [f"memory_summary.md has no '## {name}' section" for name in (PROFILE, TIPS, ROUTING)
            if name not in found]  # fmt: skip


def routing_rows(text: str) -> list[tuple[str, str, str]]:
    """The Routing Index's rows (the header and its rule left out)."""
    rows = []
    for line in sections(text).get(ROUTING, "").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or set(cells[0]) <= set("-: ") or cells[0] == "Topic":
            continue
        rows.append((cells[0], cells[1], cells[2]))
    return rows


def enforce_limits(text: str) -> str:
    """memory_summary.md within its limits: the profile cut to ``PROFILE_WORDS`` words
    and ``PROFILE_CHARS`` characters, the tips to ``TIPS_MAX`` items of ``TIP_CHARS``
    (routing cells ``CELL_CHARS``), then tips (the last first) and routing rows dropped
    until the whole is under ``SUMMARY_TOKENS``: ``SUMMARY_CHARS`` characters at most."""
    found = sections(text)
    words = found.get(PROFILE, "").split()
    profile = cut_content(" ".join(words[:PROFILE_WORDS]), PROFILE_CHARS) or EMPTY
    tips = [cut_content(t, TIP_CHARS) for t in numbered_items(found.get(TIPS, ""))
            if t.strip() != EMPTY][:TIPS_MAX]  # fmt: skip
    routes = routing_rows(text)
    rendered = render_summary(profile, tips, routes)
    while estimate_tokens(rendered) >= SUMMARY_TOKENS and (tips or routes):
        if tips:
            tips.pop()
        else:
            routes.pop()
        rendered = render_summary(profile, tips, routes)
    return rendered


def prompt_excerpt(
    text: str, budget_chars: int, *, own: str = "", counter: TokenCounter = CHARACTERS
) -> str:
    """What a turn's prompt carries of memory_summary.md: the profile and the first
    tips, within ``budget_chars`` as ``counter`` counts (characters, or the model's
    tokens: the actor's ``handbook_tokens``), the profile cut at a word if it alone is
    longer; "" when there is nothing learned yet or no budget. ``own``: the profile the
    prompt already opens with, left out where the handbook's profile repeats it."""
    if budget_chars <= 0:
        return ""
    size = len if counter is CHARACTERS else counter.count
    found = sections(text)
    profile = " ".join(found.get(PROFILE, "").split())
    own = " ".join(own.split())
    if own and profile.startswith(own):
        profile = profile[len(own) :].strip()
    tips = [t for t in numbered_items(found.get(TIPS, "")) if t.strip() != EMPTY]
    if profile == EMPTY:
        profile = ""
    if not profile and not tips:
        return ""
    if counter is not CHARACTERS:
        profile = cut_text(profile, budget_chars, counter)
    elif len(profile) > budget_chars:
        profile = profile[:budget_chars].rsplit(" ", 1)[0] + "…"
    lines = [profile] if profile else []
    used = size(profile)
    for number, tip in enumerate(tips, 1):
        line = f"{number}. {' '.join(tip.split())}"
        if used + size(line) + 1 > budget_chars:
            break
        lines.append(line)
        used += size(line) + 1
    return "\n".join(lines)


# --- MEMORY.md ------------------------------------------------------------------------


@dataclass(frozen=True)
class Cluster:
    topic: str
    rollout_files: list[str]
    keywords: list[str]
    bullets: list[str]


def render_cluster(cluster: Cluster) -> str:
    files = "\n".join(f"  - {path}" for path in cluster.rollout_files) or "  []"
    keywords = ", ".join(k.replace(",", " ").replace("]", " ").strip() for k in cluster.keywords)
    bullets = "\n".join(f"- {' '.join(b.split())}" for b in cluster.bullets)
    return (
        f"## {' '.join(cluster.topic.split())}\n\n<!--\nrollout_files:\n{files}\n"
        f"keywords: [{keywords}]\n-->\n\n{bullets}\n"
    )


def render_memory_md(name: str, clusters: list[Cluster]) -> str:
    body = "\n".join(render_cluster(c) for c in clusters) if clusters else EMPTY + "\n"
    return f"# {name}'s memory\n\n{body}"


def memory_md_problems(text: str) -> list[str]:
    """Clusters that lack their comment block, or whose block lacks ``rollout_files:``
    or ``keywords:``."""
    problems = []
    for topic, body in sections(text).items():
        comment = _COMMENT.search(body)
        if comment is None:
            problems.append(f"MEMORY.md cluster '{topic}' has no comment block")
            continue
        for key in ("rollout_files:", "keywords:"):
            if key not in comment.group(1):
                problems.append(f"MEMORY.md cluster '{topic}' has no {key[:-1]}")
    return problems


def split_clusters(text: str) -> str:
    """MEMORY.md with every cluster of more than ``CLUSTER_BULLETS`` bullets split into
    parts (``## Topic (part 2)``), each with the cluster's comment block."""
    matches = list(_HEADING.finditer(text))
    if not matches:
        return text
    out = [text[: matches[0].start()]]
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        body = text[match.end() : end]
        bullets = [line for line in body.splitlines() if line.startswith("- ")]
        if len(bullets) <= CLUSTER_BULLETS:
            out.append(text[match.start() : end])
            continue
        comment = _COMMENT.search(body)
        block = comment.group(0) if comment else ""
        topic = match.group(1).strip()
        for part, start in enumerate(range(0, len(bullets), CLUSTER_BULLETS), 1):
            title = topic if part == 1 else f"{topic} (part {part})"
            chunk = "\n".join(bullets[start : start + CLUSTER_BULLETS])
            out.append(f"## {title}\n\n{block}\n\n{chunk}\n\n")
    return "".join(out).rstrip() + "\n"


def cluster_keywords(text: str) -> dict[str, list[str]]:
    """Each cluster's topic -> its ``keywords`` (for the routing index and recall)."""
    found = {}
    for topic, body in sections(text).items():
        comment = _COMMENT.search(body)
        match = re.search(r"keywords:\s*\[([^\]]*)\]", comment.group(1)) if comment else None
        found[topic] = [k.strip() for k in match.group(1).split(",") if k.strip()] if match else []
    return found


# --- skills ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SkillFront:
    """A SKILL.md's front matter, read by the YAML parser (``engine.world.safe_yaml``):
    folded (``>-``) and literal (``|``) blocks, quoted strings and lists read as YAML
    says. ``problem`` says why it does not read (its ``fields`` then empty); ``raw`` is
    its text either way."""

    fields: dict[str, object]
    problem: str | None = None
    raw: str = ""


def read_skill_front(skill_md: str) -> SkillFront:
    """The front matter between the first two ``---`` lines; no such block is no front
    matter (empty, no problem). Never raises."""
    match = _FRONT.match(skill_md)
    if match is None:
        return SkillFront({})
    raw = match.group(1)
    try:
        data = load_yaml(raw)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return SkillFront({}, f"its front matter is not valid YAML: {problem}{where}", raw)
    if data is None:
        return SkillFront({}, None, raw)
    if not isinstance(data, dict):
        return SkillFront({}, "its front matter is not a set of 'key: value' fields", raw)
    return SkillFront({str(k): v for k, v in data.items()}, None, raw)


def skill_front_matter(skill_md: str) -> dict[str, str]:
    """The front matter's fields as text (a list joined by ``, ``; nothing: ``""``).
    Front matter that does not read loses nothing: its raw text is the ``description``
    (``skill_problems`` says what is wrong with it)."""
    front = read_skill_front(skill_md)
    if front.problem is not None:
        return {"description": " ".join(front.raw.split())}
    return {key: _as_text(value) for key, value in front.fields.items()}


def _as_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return ", ".join(_as_text(item) for item in value)
    return str(value).strip()


def skill_problems(name: str, skill_md: str) -> list[str]:
    """What makes a skill unusable: a name that is not kebab-case, front matter without
    ``name`` (the same name), ``description`` or ``keywords``, or no ``# Skill:``,
    ``## When to Use`` or ``## Procedure``."""
    problems = []
    if not KEBAB.match(name) or len(name) > NAME_MAX:
        problems.append(f"skill name {name!r} is not kebab-case")
    read = read_skill_front(skill_md)
    front = {key: _as_text(value) for key, value in read.fields.items()}
    if read.problem is not None:
        problems.append(f"skill {name!r}: {read.problem}")
    elif not front:
        problems.append(f"skill {name!r} has no front matter")
    else:
        if front.get("name") != name:
            problems.append(f"skill {name!r}: its front matter names {front.get('name')!r}")
        problems += [f"skill {name!r} has no {key}" for key in ("description", "keywords")
                     if read.fields.get(key) is None]  # fmt: skip
    if not re.search(r"^# Skill: +\S", skill_md, re.MULTILINE):
        problems.append(f"skill {name!r} has no '# Skill:' title")
    found = sections(skill_md)
    problems += [f"skill {name!r} has no '## {s}'" for s in SKILL_SECTIONS[:2] if s not in found]
    return problems


def skill_keywords(skill_md: str) -> list[str]:
    """The front matter's ``keywords``: a YAML list, or one text of comma-separated
    words (none when the front matter does not read)."""
    value = read_skill_front(skill_md).fields.get("keywords")
    items = value if isinstance(value, list | tuple) else _as_text(value).split(",")
    return [text for item in items if (text := _as_text(item))]


_NOT_YAML = re.compile("[\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")
"""Characters JSON leaves as they are and YAML refuses (control and non-characters)."""


def _yaml_json(value: object) -> str:
    """``value`` as JSON that YAML reads back the same."""
    text = json.dumps(value, ensure_ascii=False)
    return _NOT_YAML.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


def render_skill(
    name: str, title: str, description: str, keywords: list[str],
    when: str, steps: list[str], gotchas: list[str], examples: list[str],
) -> str:  # fmt: skip
    # JSON strings and lists are YAML too: the front matter reads back whatever they hold
    lines = [
        "---",
        f"name: {_yaml_json(name)}",  # (quoted: a name like "00" or "yes" stays a text)
        f"description: {_yaml_json(' '.join(description.split()))}",
        f"keywords: {_yaml_json([' '.join(k.split()) for k in keywords])}",
        "---",
        "",
        f"# Skill: {' '.join(title.split())}",
        "",
        "## When to Use",
        "",
        " ".join(when.split()),
        "",
        "## Procedure",
        "",
        *[f"{n}. {' '.join(step.split())}" for n, step in enumerate(steps, 1)],
        "",
        "## Gotchas",
        "",
        *([f"- {' '.join(g.split())}" for g in gotchas] or ["- None seen yet."]),
        "",
        "## Examples",
        "",
        *([f"- {' '.join(e.split())}" for e in examples] or ["- None recorded."]),
    ]
    return "\n".join(lines) + "\n"
