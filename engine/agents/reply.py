"""A model's completion as one command line (pure, no I/O).

Thinking (``<think>...</think>``) is dropped; each line then loses echoes of the cue
(``~Name>``, ``Name>``, ``>``) and quotes wrapping all of it, and the first line left
holding something other than a ``#`` comment is the command. A ``| reason`` stays on
the line: the command parser splits it off. A reply that is a JSON object with a
``command`` string (what a model constrained by a JSON schema writes) is that command,
and one cut off by the token limit is what it holds so far.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

_THOUGHT = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)
_OPEN = re.compile(r"<think>", re.IGNORECASE)
_CLOSE = re.compile(r"</think>", re.IGNORECASE)
_QUOTES = frozenset("\"'`")


def drop_thinking(text: str) -> str:
    """Remove ``<think>`` blocks; an unclosed one runs to the end, and a ``</think>``
    with no opening (a template that opened it for the model) ends what came before."""
    text = _THOUGHT.sub("", text)
    opened = _OPEN.search(text)
    if opened:
        text = text[: opened.start()]
    *_, after = _CLOSE.split(text)
    return after


@lru_cache(maxsize=1024)
def _echo(name: str) -> re.Pattern[str]:
    """A leading ``~Name>``, ``Name>`` or ``>`` (the name in any case)."""
    return re.compile(rf"~{re.escape(name)}>|{re.escape(name)}>|>", re.IGNORECASE)


def _unwrap(line: str, echo_pattern: re.Pattern[str]) -> str:
    """Strip cue echoes and whole-line quotes, then whitespace, until nothing changes."""
    line = line.strip()
    while True:
        before = line
        if echo := echo_pattern.match(line):
            line = line[echo.end() :]
        if len(line) >= 2 and line[0] == line[-1] and line[0] in _QUOTES:
            line = line[1:-1]
        line = line.strip()
        if line == before:
            return line


def parse_reply(text: str, name: str) -> str | None:
    """The command line in ``text``, or None when it holds none.

    Each line is unwrapped first; the first one left non-empty and not starting with
    ``#`` wins. The result is one non-empty line, and parsing it again gives it back.
    """
    echo_pattern = _echo(name.strip())
    command = _json_command(text)
    if command is None:
        line = _first_command(text, echo_pattern)
        command = _json_command(line) if line else None
        if command is None:
            return line
    line = _first_command(command, echo_pattern)
    return None if line is None or line.startswith("{") else line


def _first_command(text: str, echo_pattern: re.Pattern[str]) -> str | None:
    for raw in drop_thinking(text).splitlines():
        line = _unwrap(raw, echo_pattern)
        if line and not line.startswith("#"):
            return line
    return None


_CUT_JSON = re.compile(r'\{\s*"command"\s*:\s*"((?:[^"\\]|\\.)*)')
"""A ``{"command": "...`` cut off by a token limit: the string so far."""


def _json_command(text: str) -> str | None:
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        data = json.loads(stripped)
    except RecursionError:  # a reply nested thousands deep holds no command
        return None
    except ValueError:
        cut = _CUT_JSON.match(stripped)
        if cut is None:
            return None
        try:
            return str(json.loads(f'"{cut.group(1)}"'))
        except ValueError:
            return None
    command = data.get("command") if isinstance(data, dict) else None
    return command if isinstance(command, str) else None


RECENT_COMMANDS = 3
"""A command equal to one of the agent's last this-many commands is a repeat: the thinker
asks again, the grammar does not offer it, the play bench does not count it sensible."""


def repeat_key(line: str) -> str:
    """The command part (before the first ``|``), lower-cased with whitespace collapsed:
    equal keys mean the same command was typed again."""
    return " ".join(line.partition("|")[0].lower().split())


ECHO_WORDS = 6
"""A reply that shares this many words in a row with its prompt repeats the transcript."""
_ECHO_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_CUE = re.compile(r"~?[^\W\d_][\w-]*>")


def _ngrams(words: list[str], size: int) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + size]) for i in range(len(words) - size + 1)}


def echoes_transcript(line: str, prompt: str) -> bool:
    """The command ``line`` copies its prompt instead of acting: it holds a cue
    (``~Ash>``, ``Ash>``) after its verb, or ``ECHO_WORDS`` words in a row from the
    prompt. The engine's example turns (the prompt's lines that start with ``~``) are
    there to be copied and do not count."""
    command = line.partition("|")[0]
    _, _, rest = command.strip().partition(" ")
    if _CUE.search(rest):
        return True
    words = [w.lower() for w in _ECHO_WORD.findall(rest)]
    if len(words) < ECHO_WORDS:
        return False
    source = "\n".join(row for row in prompt.splitlines() if not row.startswith("~"))
    prompt_words = [w.lower() for w in _ECHO_WORD.findall(source)]
    return bool(_ngrams(words, ECHO_WORDS) & _ngrams(prompt_words, ECHO_WORDS))
