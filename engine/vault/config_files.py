"""The vault's ``config/*.md`` files: front matter holds the settings, the body says
what they mean. A new vault gets every file written with its defaults."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ValidationError

from engine.config import (
    AIDefaultsConfig,
    LimitsConfig,
    LLMConfig,
    MemoryCompactionConfig,
    RecordConfig,
    Settings,
)
from engine.errors import VaultError
from engine.vault.files import read_front_matter, write_front_matter

_LLM_BODY = """\
# LLM settings

Which servers the agents think with, and the options each kind of call uses.

- `endpoints`: a list of `{url, kind, model, slots, price_in, price_out}` (the prices:
  money per million tokens in and out, for `mudsim cost`; 0 by default). `kind` is `ollama` (`/api/generate`),
  `openai` (`/v1/completions`: vLLM, llama.cpp server) or `local` (the embedded model).
  `slots` is how many requests that server runs at once. An empty list means: use
  `--llm`, else `MUDSIM_LLM_URL`, else `http://localhost:11434`, else the embedded
  model if it is installed.
- `profiles`: per role (`actor` takes turns, `summarizer` compacts memories,
  `consolidator` builds the knowledge bank, its handbook and dreams), a `model` and Ollama
  `options`. An `embedder` profile with a `model` (`nomic-embed-text`) turns on
  semantic retrieval: what an agent brings to mind is also compared by embeddings.
  `num_ctx` is fixed per profile (changing it reloads the model); every prompt is fitted
  to its profile's `num_ctx` less its `num_predict`, in tokens as the model counts them
  (the embedded model's own tokenizer; for a server, a conservative estimate). Summaries
  stop on a blank line, never on a single newline.
- `knowledge_tokens` (actor only): the most tokens a turn's prompt gives what the agent
  brings to mind after its memories (prior knowledge, relevant notes, past
  experiences); unset (`null`): 400 for the embedded model, 2,000 otherwise; 0: none.
- `notes_tokens`, `summary_tokens`, `handbook_tokens` (actor only): the most tokens the
  relevant notes may take of `knowledge_tokens` (150), each summary (300; and never
  more than a quarter of a turn prompt's room) and the handbook's profile and tips
  (300, counted as the model counts); 0 means no limit of their own (for the
  handbook: none).
- `constrain` (actor only): `true` makes the model write only valid commands for where
  the agent stands (Ollama: `format` with a JSON schema); `false` never; unset (`null`)
  means on for the embedded model and for a model the server reports (`/api/show`)
  as under a billion parameters, off for larger ones and for servers that do not say.
- `bypass_limit` (default 4): agent turns go before summaries, but a waiting summary
  lets at most this many turn calls go first, then it runs, so memory keeps up however
  busy the agents keep a one-slot server.
- `timeout` (default 300): seconds one attempt of a call may take in all, however
  slowly the server dribbles its reply; then it is retried (at most 4 tries).

Model: `--model` > `MUDSIM_MODEL` > the character's `model` > the profile > gemma3:4b.
"""

_MEMORY_BODY = """\
# Memory compaction

Every memory is appended to the agent's journal. When more than
`immediate_window + recent_window` memories are not yet summarised, the oldest
`recent_window` of them become the short-term summary and the previous short-term
summary is merged into the long-term one. With 64 and 64 this happens at 129, 193,
257 ... memories. A character's own `immediate_window` / `recent_window` in the world
file win over these defaults.

A summary the model writes is stored only if it is grounded in the memories it
summarizes (its words, names and numbers are theirs, in their language); otherwise, after
three tries, or at once while the summarizer fails, the summary is made extractively
from the memories themselves (`method: extractive` in its front matter). Whatever
arrives, no character ever has more than `immediate_window + 2 * recent_window` memories
unsummarised (a player: `+ 4 * recent_window`): past that, the due chunk is summarized
extractively at once. `players: extractive` makes a player's summaries that way always
(no model call); `players: llm` asks the model as for agents; unset, a served world
(`mudsim serve`) is extractive and every other run asks the model.

# Knowledge passes

Every `consolidate_every` memories (and at the end of every run, and on
`@consolidate`) an agent's knowledge pass reads what it noted, lived and said since the
last pass, extracts typed entries and consolidates them into
`agents/<Name>/knowledge/long-term-memory.json`. The bank's capacity tier (GENEROUS
under 30%, SELECTIVE to 50%, HEAVY_CUT beyond) is its size in tokens over
`knowledge_context` (unset: the consolidator profile's `num_ctx`). `knowledge: false`
starts no pass at all (not at the end of a run, nor on `@consolidate`): the bank, and the
handbook written after a pass, stay as they are (an experiment without knowledge).

Secrets never reach a knowledge prompt, the bank, its log, its pass records or the
handbook: credential shapes (API keys and tokens of every vendor detect-secrets knows,
private keys, JWTs, URL passwords, `password=...`) and secrets told in prose ("the
password is swordfish", "my PIN is 4512", "the code to the safe is 4512") are
`[redacted]`. `fiction_secrets: true` keeps the prose ones, for a world whose story
has safes and passwords; credential shapes go whatever it says.

# Dreams

`dream` (an agent may type it like any command) asks the consolidator for a dream made
of a shuffled sample of the agent's past, its newest memories and its knowledge; the
dream is appended to its note "Dreams" and remembered as a thought. An agent dreams at
most once every `dream_interval` minutes of world time (1440: a day; 0: no wait).

# The handbook

After a pass that changed the bank (or extracted anything), the agent's handbook in
`agents/<Name>/handbook/` is written: `memory_summary.md` (profile, general tips,
routing index), `MEMORY.md` (topic clusters) and `skills/<name>/SKILL.md` (procedures
seen in 3 or more passes). `handbook`: `llm` (the consolidator writes it; a reply that
is not a usable handbook is asked once more, then the rules write it), `rules` (no
model: deterministic, from the bank) or `auto` (`llm`, but `rules` when the agents think
with the embedded model). The actor profile's `handbook_tokens` bounds what a turn's
prompt carries of it (the profile and the first tips; 0 turns it off).
"""

_AI_BODY = """\
# Agent defaults

- `think_interval`: seconds an agent waits after acting before it thinks again
  (a character's own `think_interval` in the world file wins).
"""

_LIMITS_BODY = """\
# Input limits

- `max_command_chars`: a command line (a player's or an agent's) longer than this is
  refused with one line, and nothing of it is remembered or heard by anyone.
- `max_note_bytes`: a note that would grow past this many bytes (UTF-8) is refused.
"""

_RECORD_BODY = """\
# The run record

Every `run`, `do` and `play` keeps its record in `vault/runs/<run id>/`: `run.json`
(what the run was and why it ended), `calls.jsonl` (every LLM call: who, what for, the
prompt and options, the reply, tokens, seconds, retries, errors), `events.jsonl`
(everything that happened, in commit order, with the scheduling decisions),
`draws.jsonl` (the wall-clock readings and random tokens it used), `training.jsonl`
(each agent turn as a prompt/reply pair) and what a replay needs (`start/`, `end.json`).
`mudsim replay`, `fork`, `export` and `cost` read it.

- `record` (true): false keeps no record (long runs on a small disk).
- `record_prompts` (true): false keeps the calls' metadata but not the prompts' text
  (a replay then cannot check the prompts; training pairs, which are prompts, follow
  `training`).
- `training` (true): false captures no training pairs (`@training-toggle` switches it
  for the run).
"""

FILES: dict[str, tuple[type[BaseModel], str]] = {
    "llm.md": (LLMConfig, _LLM_BODY),
    "memory_compaction.md": (MemoryCompactionConfig, _MEMORY_BODY),
    "ai_defaults.md": (AIDefaultsConfig, _AI_BODY),
    "limits.md": (LimitsConfig, _LIMITS_BODY),
    "record.md": (RecordConfig, _RECORD_BODY),
}
_FIELDS = {
    "llm.md": "llm",
    "memory_compaction.md": "memory_compaction",
    "ai_defaults.md": "ai_defaults",
    "limits.md": "limits",
    "record.md": "record",
}


def write_missing_defaults(config_dir: Path) -> None:
    """Write each config file that does not exist yet, with its defaults."""
    for name, (model, body) in FILES.items():
        path = config_dir / name
        if not path.exists():
            write_front_matter(path, model().model_dump(mode="json"), body)


def load_settings(config_dir: Path) -> Settings:
    """Read every config file present (missing ones keep their defaults)."""
    values: dict[str, BaseModel] = {}
    for name, (model, _) in FILES.items():
        path = config_dir / name
        if not path.exists():
            continue
        meta, _body = read_front_matter(path)
        try:
            values[_FIELDS[name]] = model.model_validate(meta)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(step) for step in first["loc"]) or "(top level)"
            raise VaultError(f"{path}, {field}: {first['msg']}") from exc
    return Settings.model_validate(values)
