"""The export's pure part: rows from a recorded run's tapes, and their text forms."""

from __future__ import annotations

import csv
import io
import json

from hypothesis import given
from hypothesis import strategies as st
from recorded_run import PROMPT_ADA, PROMPT_BO

from engine.lab import export_formats, export_rows
from engine.lab.export_rows import COLUMNS, MADE_BY_COLUMNS, RunWindow, TrainingFilter
from engine.memory.record import MemoryKind, MemoryRecord
from engine.vault.run_store import CALLS, EVENTS, TRAINING, RunFolder


def test_every_row_has_its_kinds_columns_in_order(run: RunFolder) -> None:
    kinds = {
        "events": export_rows.event_rows(run.read(EVENTS)),
        "turns": export_rows.turn_rows(run.read(EVENTS), run.read(CALLS)),
        "calls": export_rows.call_rows(run.read(CALLS)),
        "training": export_rows.training_rows(run.read(TRAINING)),
    }
    for what, rows in kinds.items():
        assert rows, what
        own = tuple(c for c in COLUMNS[what] if c not in MADE_BY_COLUMNS)  # export adds them
        for row in rows:
            assert tuple(row) == own
            assert all(v is None or isinstance(v, str | int | float | bool) for v in row.values())


def test_event_rows_flatten_each_event_and_carry_the_clock(run: RunFolder) -> None:
    events = run.read(EVENTS)
    rows = export_rows.event_rows(events)
    assert [row["n"] for row in rows] == [event["n"] for event in events]
    turn = next(row for row in rows if row["kind"] == "turn")
    assert (turn["actor"], turn["name"], turn["turn"]) == ("ada", "Ada", 1)
    assert turn["sim"] == "2026-01-01T08:00", "a turn event has no clock: the last reading"
    result = next(row for row in rows if row["kind"] == "result" and row["actor"] == "bo")
    assert (result["room"], result["ok"]) == ("yard", False), "the room its command ran in"
    speech = next(row for row in rows if row["kind"] == "event")
    assert (speech["event"], speech["room"], speech["actor"]) == ("speech", "hall", "ada")
    assert rows[-1]["kind"] == "end"
    assert rows[-1]["reason"] == "turns"
    assert all(row["extra"] is None for row in rows)


def test_unknown_event_fields_go_to_extra() -> None:
    [row] = export_rows.event_rows([{"n": 1, "kind": "compaction", "agent": "bo",
                                     "covers": [0, 64], "sim": "x"}])  # fmt: skip
    assert row["actor"] == "bo"
    assert json.loads(str(row["extra"])) == {"covers": [0, 64]}


def test_ordering_gates_are_rows_but_not_transcript_lines() -> None:
    events = [{"n": 1, "kind": "send", "key": "Ada|1|turn|0", "at": "2026-11-25T10:00:00+01:00"},
              {"n": 2, "kind": "event", "event": "speech", "room": "hall", "actor": "ada",
               "text": "Ada says, \"hi\"", "sim": "2026-01-01T08:00"}]  # fmt: skip
    rows = export_rows.event_rows(events)
    assert (rows[0]["key"], rows[0]["at"], rows[0]["extra"]) == (
        "Ada|1|turn|0", "2026-11-25T10:00:00+01:00", None)  # fmt: skip
    page = export_formats.to_markdown("events", rows, "Events")
    assert page == '# Events\n\n## hall\n\n- 2026-01-01T08:00 Ada says, "hi"\n'


def test_turn_rows_join_each_turn_with_its_command_and_calls(run: RunFolder) -> None:
    rows = export_rows.turn_rows(run.read(EVENTS), run.read(CALLS))
    assert [(r["agent"], r["turn"]) for r in rows] == [("Ada", 1), ("Bo", 1), ("Ada", 2),
                                                        ("Bo", 2)]  # fmt: skip
    ada = rows[0]
    assert ada["command"] == 'say hello, "friend"'
    assert (ada["ok"], ada["room"], ada["sim"]) == (True, "hall", "2026-01-01T08:00")
    assert ada["result"] == 'You say, "hello, friend"'
    assert (ada["calls"], ada["prompt_tokens"], ada["completion_tokens"]) == (2, 241, 10)
    assert (ada["latency_s"], ada["retries"]) == (0.75, 1)
    bo = rows[1]
    assert (bo["ok"], bo["result"], bo["calls"]) == (False, "There is no exit west.", 1)
    assert bo["prompt_tokens"] == 80, "its failed summary call is not a turn's"
    skipped = rows[3]
    assert (skipped["command"], skipped["ok"], skipped["result"]) == (None, None, None)
    assert skipped["error"] == "the LLM is unreachable"
    assert (skipped["sim"], skipped["calls"], skipped["retries"]) == ("2026-01-01T08:10", 1, 2)
    turn_calls = [c for c in run.read(CALLS) if c["kind"] == "turn"]
    assert sum(int(r["prompt_tokens"] or 0) for r in rows) == sum(
        c["prompt_tokens"] for c in turn_calls
    )


def test_call_rows_keep_the_prompt_and_split_the_error(run: RunFolder) -> None:
    rows = export_rows.call_rows(run.read(CALLS))
    assert len(rows) == 6
    assert rows[0]["prompt"] == PROMPT_ADA
    assert json.loads(str(rows[0]["options"])) == {"num_predict": 32, "stop": ["\n"]}
    failed = [row for row in rows if row["error_type"]]
    assert [row["kind"] for row in failed] == ["summary", "turn"]
    assert failed[0]["error_type"] == "LLMUnavailableError"
    assert "connection refused" in str(failed[0]["error_message"])


def test_training_keeps_failures_marked_and_each_pair_once(run: RunFolder) -> None:
    rows = export_rows.training_rows(run.read(TRAINING))
    assert rows == [
        {"prompt": PROMPT_ADA, "completion": 'say hello, "friend"', "agent": "Ada",
         "verb": "say", "ok": True, "replayed": False},
        {"prompt": PROMPT_BO, "completion": "go west", "agent": "Bo", "verb": "go", "ok": False,
         "replayed": False},
    ]  # fmt: skip
    assert len(run.read(TRAINING)) == 3, "Ada's second turn repeated its first"


LINES = [
    {"agent": "Ada", "prompt": "p1", "reply": "say hi", "command": "say hi", "verb": "say",
     "ok": True},
    {"agent": "Ada", "prompt": "p2", "reply": "go north", "command": "go north", "verb": "go",
     "ok": False},
    {"agent": "Bo", "prompt": "p3", "reply": "  look  ", "command": "look", "verb": "look",
     "ok": True},
    {"agent": "Bo", "prompt": "p4", "reply": None, "command": "Go south", "verb": "go",
     "ok": True},
    {"agent": "Bo", "prompt": "p3", "reply": "  look  ", "command": "look", "verb": "look",
     "ok": False},
]  # fmt: skip


def _prompts(keep: TrainingFilter) -> list[str]:
    return [str(row["prompt"]) for row in export_rows.training_rows(LINES, keep)]


def test_each_training_filter() -> None:
    assert _prompts(TrainingFilter()) == ["p1", "p2", "p3", "p4"]
    assert _prompts(TrainingFilter(successful_only=True)) == ["p1", "p3", "p4"]
    assert _prompts(TrainingFilter(agent="bo")) == ["p3", "p4"]
    assert _prompts(TrainingFilter(verb="GO")) == ["p2", "p4"]
    assert _prompts(TrainingFilter(min_reply_chars=7)) == ["p2", "p4"], "spaces not counted"
    assert _prompts(TrainingFilter(True, "Bo", "go", 8)) == ["p4"]
    completions = [r["completion"] for r in export_rows.training_rows(LINES)]
    assert completions[3] == "Go south", "no reply kept: the command"


def test_chat_lines_are_a_user_and_an_assistant_turn() -> None:
    rows = export_rows.training_rows(LINES[:1])
    assert export_rows.chat_lines(rows) == [
        {"messages": [{"role": "user", "content": "p1"},
                      {"role": "assistant", "content": "say hi"}]}
    ]  # fmt: skip


def test_memories_carry_the_run_they_were_recorded_in() -> None:
    def record(seq: int, at: str) -> MemoryRecord:
        return MemoryRecord(seq, at, MemoryKind.RESULT, f"m{seq}", "hall", ["Bo", "Pip"])

    windows = [RunWindow("a", "2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z"),
               RunWindow("b", "2026-01-02T00:00:00Z", None)]  # fmt: skip
    journal = [record(0, "2025-12-31T00:00:00Z"), record(1, "2026-01-01T00:30:00Z"),
               record(2, "2026-01-03T00:00:00Z")]  # fmt: skip
    rows = export_rows.memory_rows({"Ada": journal}, windows)
    assert [row["run"] for row in rows] == [None, "a", "b"]
    assert tuple(rows[0]) == COLUMNS["memories"]
    assert (rows[0]["occupants"], rows[0]["kind"], rows[0]["agent"]) == ("Bo, Pip", "result", "Ada")


TEXT = st.text(st.characters(codec="utf-8"))


@given(st.lists(st.tuples(TEXT, TEXT), max_size=5))
def test_csv_reads_back_any_text(pairs: list[tuple[str, str]]) -> None:
    rows = [{"prompt": p, "completion": c, "agent": "A,b", "verb": '"x"', "ok": True}
            for p, c in pairs]  # fmt: skip
    text = export_formats.to_csv(rows, COLUMNS["training"])
    back = list(csv.DictReader(io.StringIO(text, newline="")))
    assert (
        text.splitlines()[0]
        == "prompt,completion,agent,verb,ok,replayed,mudsim_version,git_commit,git_dirty"
    )
    assert [(r["prompt"], r["completion"]) for r in back] == pairs
    assert all((r["agent"], r["verb"], r["ok"]) == ("A,b", '"x"', "True") for r in back)


@given(st.lists(st.dictionaries(st.sampled_from(["a", "b"]), TEXT | st.integers()), max_size=5))
def test_jsonl_is_one_object_a_line(rows: list[dict[str, object]]) -> None:
    text = export_formats.to_jsonl(rows)
    lines = text.split("\n")
    assert lines.pop() == ""
    assert [json.loads(line) for line in lines] == rows


@given(TEXT)
def test_markdown_code_holds_any_backticks(text: str) -> None:
    row = {"agent": "Ada", "prompt": text, "completion": text, "verb": "say", "ok": True}
    page = export_formats.to_markdown("training", [row], "Training")
    fences = [line.removesuffix("text") for line in page.split("\n")]
    fence = max(len(line) for line in fences if line.startswith("```") and set(line) == {"`"})
    assert "`" * fence not in text
