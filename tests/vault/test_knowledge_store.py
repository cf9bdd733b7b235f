"""The knowledge folder: a bank that round-trips and is never overwritten when corrupt,
a commit that a kill at any step leaves old or new, pass records, a log whose torn tail
is ignored, an undo that walks back pass by pass, and no secret in any file."""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from enum import Enum
from pathlib import Path

import pytest
import yaml
from helpers import REPO, mudsim_env
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.errors import VaultError
from engine.memory.knowledge import Earlier, Entry, Stamp
from engine.vault.knowledge_store import BankSummary, KnowledgeStore, PassRecord, UndoOutcome

T0 = Stamp(sim="2026-11-21T10:15", at="2026-11-21T10:15:00.000000Z")
T1 = Stamp(sim="2026-11-21T11:00", at="2026-11-21T11:00:00.000000Z")
NOW = datetime(2026, 11, 21, 10, 15, 0, tzinfo=UTC)
RECORD_KEYS = [
    "pass", "status", "started", "finished", "memories", "notes", "summaries", "candidates",
    "operations", "tier", "capacity_tokens", "capacity_percent", "fallback", "error",
]  # fmt: skip
LOG_KEYS = ["pass", "at", "tier", "op", "id", "before", "after", "candidate"]


@dataclass(frozen=True)
class Change:
    """What a pass changed, as ``engine.memory.knowledge_ops`` reports it."""

    op: str
    id: str
    before: Entry | None = None
    after: Entry | None = None
    candidate: object = None


def entry(n: int, content: str, kind: str = "fact", tags: tuple[str, ...] = ()) -> Entry:
    return Entry.model_validate(
        {"id": f"ltm-{n}-a{n}", "type": kind, "content": content, "tags": list(tags),
         "created": T0, "updated": T0}
    )  # fmt: skip


def edited(old: Entry, content: str) -> Entry:
    earlier = Earlier(content=old.content, tags=old.tags, until=T1, by_pass="p")
    return old.model_copy(update={"content": content, "updated": T1, "history": [earlier]})


def record(pass_id: str, status: str = "changed", **fields: object) -> PassRecord:
    data: dict[str, object] = {"pass": pass_id, "status": status, "started": T0,
                               "finished": T1, "tier": "GENEROUS", "capacity_tokens": 120}  # fmt: skip
    return PassRecord.model_validate(data | fields)


def commit(store: KnowledgeStore, pass_id: str, bank: list[Entry], *changes: Change) -> Path:
    ops: dict[str, int] = {}
    for change in changes:
        ops[change.op] = ops.get(change.op, 0) + 1
    done = record(pass_id, "changed" if changes else "unchanged", operations=ops)
    return store.commit_pass(pass_id, "GENEROUS", changes, done, [])


@pytest.fixture
def store(tmp_path: Path) -> KnowledgeStore:
    return KnowledgeStore(tmp_path / "agents" / "Bo" / "knowledge")


A, B, C = entry(1, "The well is dry."), entry(2, "Ada likes plums.", "preference"), entry(3, "x")


def seeded(store: KnowledgeStore) -> list[Entry]:
    """A bank of A, B, C, saved by a first pass."""
    bank = [A, B, C]
    commit(store, "20261121-090000", bank, *(Change("ADD", e.id, after=e) for e in bank))
    return bank


# -- the bank ----------------------------------------------------------------------------


def test_a_commit_round_trips_the_bank_the_log_and_the_record(store: KnowledgeStore) -> None:
    changes = [Change("ADD", A.id, after=A, candidate=0), Change("ADD", B.id, after=B)]
    done = record("20261121-101500", memories=[0, 12], notes=["Plans"], candidates=2,
                  operations={"ADD": 2}, capacity_percent=12.5, summaries=["recent-x.md"])  # fmt: skip
    candidates = [("fact", "The well\nis dry.", ["well", "yard"]), ("preference", "plums", [])]
    path = store.commit_pass("20261121-101500", "GENEROUS", changes, done, candidates)

    assert store.load() == [A, B]
    text = store.bank_path.read_text(encoding="utf-8")
    assert text.startswith('[\n  {\n    "id": "ltm-1-a1",')
    assert store.log()[0].after == A
    logged = [json.loads(line) for line in store.log_path.read_text().splitlines()]
    assert [list(line) for line in logged] == [LOG_KEYS, LOG_KEYS]
    assert [(line["op"], line["id"], line["tier"], line["candidate"]) for line in logged] == [
        ("ADD", A.id, "GENEROUS", 0),
        ("ADD", B.id, "GENEROUS", None),
    ]
    assert path == store.passes_folder / "20261121-101500.md"
    assert store.passes() == [done]
    assert store.last_pass() == done
    _, head, body = path.read_text(encoding="utf-8").split("---\n", 2)
    assert list(yaml.safe_load(head)) == RECORD_KEYS
    assert body.splitlines() == [
        "# Knowledge pass 20261121-101500", "", "## Extracted", "",
        "- (fact) The well is dry. [tags: well, yard]", "- (preference) plums", "",
        "## Operations", "", "- ADD ltm-1-a1: The well is dry.", "- ADD ltm-2-a2: Ada likes plums.",
    ]  # fmt: skip
    assert store.bank_summary() == BankSummary(2, {"fact": 1, "preference": 1}, len(text))


def test_a_record_lists_updates_and_deletes_and_says_when_there_is_nothing(
    store: KnowledgeStore,
) -> None:
    new_a = edited(A, "The well is full again.")
    changes = [Change("UPDATE", A.id, A, new_a), Change("DELETE", B.id, before=B)]
    path = store.write_pass(record("20261121-101500"), [], changes)
    assert path.read_text(encoding="utf-8").split("## ")[1:] == [
        "Extracted\n\nNothing.\n\n",
        "Operations\n\n- UPDATE ltm-1-a1: The well is dry. -> The well is full again.\n"
        "- DELETE ltm-2-a2: Ada likes plums.\n",
    ]
    path = store.write_pass(record("20261121-101501", "failed", error="no reply"), [], [])
    assert path.read_text(encoding="utf-8").endswith("## Operations\n\nNone.\n")


def test_a_missing_folder_is_an_empty_knowledge_folder(store: KnowledgeStore) -> None:
    assert not store.folder.exists()
    assert store.load() == []
    assert store.log() == []
    assert store.passes() == []
    assert store.last_pass() is None
    assert store.undo() is None
    assert store.undone_passes() == set()
    assert store.bank_summary() == BankSummary(0, {}, 0)
    assert store.new_pass_id(NOW) == "20261121-101500"
    store.save([A])
    assert store.load() == [A]


GOOD = json.loads(json.dumps([A.model_dump(mode="json"), B.model_dump(mode="json")]))
CORRUPT = {
    "not JSON": (b'[{"id": "ltm-1-a1",', r"\(not JSON: Expecting .*, line 1\)"),
    "not UTF-8": (b"[\xff]", r"\(not UTF-8 text\)"),
    "a type": (
        json.dumps([GOOD[0], GOOD[1] | {"type": "spell"}]).encode(),
        r"\(entry 2, type: Input should be 'skill', .* \(got 'spell'\)\)",
    ),
    "an extra field": (
        json.dumps([GOOD[0] | {"colour": "red"}]).encode(),
        r"\(entry 1, colour: Extra inputs are not permitted\)",
    ),
    "a missing field": (
        json.dumps([{k: v for k, v in GOOD[0].items() if k != "content"}]).encode(),
        r"\(entry 1, content: Field required\)",
    ),
    "not a list": (b'{"id": 1}', r"\(the top level: Input should be a valid list"),
    "a repeated id": (
        json.dumps([GOOD[0], GOOD[0]]).encode(),
        r"\(entry 2: the id ltm-1-a1 is used",
    ),
    "nested too deep": (b"[" * 100_000, r"\(not JSON: nested too deep\)"),
}


@pytest.mark.parametrize("case", list(CORRUPT))
def test_a_corrupt_bank_is_one_error_naming_it_and_is_never_overwritten(
    store: KnowledgeStore, case: str
) -> None:
    data, problem = CORRUPT[case]
    store.folder.mkdir(parents=True)
    store.bank_path.write_bytes(data)
    expected = rf"^{re.escape(str(store.bank_path))} is not a valid knowledge bank {problem}.*; it is left as it is"
    for attempt in (
        store.load,
        store.bank_summary,
        lambda: store.save([A]),
        lambda: commit(store, "20261121-101500", [A], Change("ADD", A.id, after=A)),
    ):
        with pytest.raises(VaultError, match=expected) as caught:
            attempt()
        assert "\n" not in str(caught.value)
    assert store.bank_path.read_bytes() == data
    assert not store.log_path.exists()
    assert not store.passes_folder.exists()


def test_a_corrupt_bank_is_not_undone_over(store: KnowledgeStore) -> None:
    seeded(store)
    store.bank_path.write_text("[oops", encoding="utf-8")
    with pytest.raises(VaultError, match="is not a valid knowledge bank"):
        store.undo()
    assert store.bank_path.read_text(encoding="utf-8") == "[oops"
    assert store.undone_passes() == set()


def test_a_bank_that_cannot_be_read_is_an_error_naming_it(store: KnowledgeStore) -> None:
    store.bank_path.mkdir(parents=True)
    with pytest.raises(VaultError, match=rf"^cannot read {store.bank_path}: Is a directory$"):
        store.load()


def test_a_bank_with_one_id_twice_is_refused_before_anything_is_written(
    store: KnowledgeStore,
) -> None:
    with pytest.raises(ValueError, match="ltm-1-a1 more than once"):
        store.save([A, B, A])
    with pytest.raises(ValueError, match="the record is pass 20261121-101501, not 20261121"):
        store.commit_pass("20261121-101500", "GENEROUS", [], record("20261121-101501"), [])
    assert not store.folder.exists()


def test_an_add_whose_id_is_taken_is_left_out_and_the_record_says_what_applied(
    store: KnowledgeStore,
) -> None:
    commit(
        store, "20261121-101500", [A, A], Change("ADD", A.id, after=A), Change("ADD", A.id, after=A)
    )
    assert store.load() == [A]
    assert [line.op for line in store.log()] == ["ADD"]
    assert store.last_pass() == record("20261121-101500", operations={"ADD": 1})


# -- a write that fails, a kill at a crash point ----------------------------------------


def test_a_commit_whose_plan_cannot_be_written_leaves_everything_as_it_was(
    store: KnowledgeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    seeded(store)
    before = {p.name: p.read_bytes() for p in store.folder.rglob("*") if p.is_file()}

    def refuse(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(VaultError, match=r"^cannot write .*\.committing\.json: No space left"):
        commit(store, "20261121-101500", [A], Change("DELETE", B.id, before=B))
    with pytest.raises(VaultError, match=r"^cannot write .*20261121-101501\.md: No space left"):
        store.write_pass(record("20261121-101501"), [], [])
    monkeypatch.undo()
    after = {p.name: p.read_bytes() for p in store.folder.rglob("*") if p.is_file()}
    assert after == before
    assert store.last_pass() == record("20261121-090000", operations={"ADD": 3})
    assert store.undo() == UndoOutcome("20261121-090000", restored=0, removed=3)


def test_a_commit_whose_bank_cannot_be_written_is_finished_by_the_next_reader(
    store: KnowledgeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    seeded(store)
    real = os.replace

    def refuse_the_bank(src: str, dst: str) -> None:
        if Path(dst).name == "long-term-memory.json":
            raise OSError(28, "No space left on device")
        real(src, dst)

    monkeypatch.setattr(os, "replace", refuse_the_bank)
    with pytest.raises(VaultError, match=rf"^cannot write {store.bank_path}: No space left"):
        commit(store, "20261121-101500", [A, C], Change("DELETE", B.id, before=B))
    monkeypatch.undo()
    assert store.plan_path.exists(), "the pass is committed: its plan waits to be applied"
    assert store.load() == [A, C]
    assert not store.plan_path.exists()
    assert [(x.pass_id, x.op) for x in store.log()][-1] == ("20261121-101500", "DELETE")
    assert store.last_pass() == record("20261121-101500", operations={"DELETE": 1})
    assert store.undo() == UndoOutcome("20261121-101500", restored=1, removed=0)
    assert store.load() == [A, B, C]


def test_a_log_that_cannot_be_appended_to_stops_the_commit_first(store: KnowledgeStore) -> None:
    store.log_path.mkdir(parents=True)
    with pytest.raises(VaultError, match=rf"^cannot read {store.log_path}: Is a directory"):
        commit(store, "20261121-101500", [A], Change("ADD", A.id, after=A))
    assert not store.bank_path.exists()
    assert not store.plan_path.exists()
    with pytest.raises(VaultError, match=rf"^cannot read {store.log_path}"):
        store.undo()


CRASH_SCRIPT = """
import sys
from dataclasses import dataclass
from pathlib import Path
from engine.memory.knowledge import Entry
from engine.vault.knowledge_store import KnowledgeStore, PassRecord

@dataclass
class Change:
    op: str
    id: str
    before: Entry | None
    after: Entry | None
    candidate: object = None

store = KnowledgeStore(Path(sys.argv[1]))
old = store.load()
stamp = old[0].created
new = Entry(id="ltm-9-a9", type="skill", content="Bo can shoe a horse.", created=stamp,
            updated=stamp)
changed = old[0].model_copy(update={"content": "The well is full."})
changes = [Change("ADD", new.id, None, new), Change("UPDATE", changed.id, old[0], changed)]
done = PassRecord.model_validate({"pass": "20261121-101500", "status": "changed",
                                  "started": stamp, "finished": stamp})
store.commit_pass(done.pass_id, "TIGHT", changes, done, [])
"""


def killed_commit(store: KnowledgeStore, crash_at: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CRASH_SCRIPT, str(store.folder)], cwd=REPO,
        env=mudsim_env(crash_at), capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stderr


@pytest.mark.parametrize(
    ("crash_at", "committed"),
    [
        ("knowledge-after-plan", True),
        ("knowledge-after-log", True),
        ("knowledge-after-bank", True),
        ("knowledge-after-record", True),
    ],
)
def test_a_kill_at_any_point_of_a_commit_leaves_the_pass_wholly_in_and_undoable(
    store: KnowledgeStore, crash_at: str, committed: bool
) -> None:
    old = seeded(store)
    killed_commit(store, crash_at)
    bank = store.load()  # the next reader finishes the commit
    assert not store.plan_path.exists()
    assert [e.id for e in bank] == ["ltm-1-a1", "ltm-2-a2", "ltm-3-a3", "ltm-9-a9"]
    assert bank[0].content == "The well is full."
    ops = [(line.pass_id, line.op) for line in store.log()]
    assert ops.count(("20261121-101500", "ADD")) == 1, "the log's lines are appended once"
    assert ops[-2:] == [("20261121-101500", "ADD"), ("20261121-101500", "UPDATE")]
    last = store.last_pass()
    assert last is not None
    assert last.pass_id == "20261121-101500"
    assert last.operations == {"ADD": 1, "UPDATE": 1}
    assert store.undo() == UndoOutcome("20261121-101500", restored=1, removed=1)
    assert store.load() == old
    assert store.undo() == UndoOutcome("20261121-090000", restored=0, removed=3)


UNDO_SCRIPT = """
import sys
from pathlib import Path
from engine.vault.knowledge_store import KnowledgeStore

print(KnowledgeStore(Path(sys.argv[1])).undo())
"""


@pytest.mark.parametrize("crash_at", ["undo-after-plan", "undo-after-log", "undo-after-bank"])
def test_a_kill_at_any_point_of_an_undo_leaves_it_wholly_done_once(
    store: KnowledgeStore, crash_at: str
) -> None:
    old = seeded(store)
    commit(store, "20261121-101500", [A, C], Change("DELETE", B.id, before=B))
    done = subprocess.run(
        [sys.executable, "-c", UNDO_SCRIPT, str(store.folder)], cwd=REPO,
        env=mudsim_env(crash_at), capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert store.load() == old
    assert [line.op for line in store.log()].count("UNDO") == 1
    assert store.undone_passes() == {"20261121-101500"}
    assert store.undo() == UndoOutcome("20261121-090000", restored=0, removed=3)
    assert store.load() == []


def test_without_a_kill_the_script_commits_everything(store: KnowledgeStore) -> None:
    seeded(store)
    done = subprocess.run(
        [sys.executable, "-c", CRASH_SCRIPT, str(store.folder)], cwd=REPO, env=mudsim_env(),
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(store.load()) == 4
    last = store.last_pass()
    assert last is not None
    assert last.pass_id == "20261121-101500"


# -- undo --------------------------------------------------------------------------------


def test_undo_after_an_add_removes_it(store: KnowledgeStore) -> None:
    seeded(store)
    new = entry(4, "Bo can shoe a horse.", "skill")
    commit(store, "20261121-101500", [A, B, C, new], Change("ADD", new.id, after=new))
    assert store.undo() == UndoOutcome("20261121-101500", restored=0, removed=1)
    assert store.load() == [A, B, C]
    assert store.undone_passes() == {"20261121-101500"}
    undo = store.log()[-1]
    assert (undo.pass_id, undo.op, undo.id, undo.before, undo.after) == (
        "20261121-101500", "UNDO", None, None, None,
    )  # fmt: skip


def test_undo_after_an_update_puts_the_old_content_back(store: KnowledgeStore) -> None:
    seeded(store)
    new_b = edited(B, "Ada likes pears now.")
    commit(store, "20261121-101500", [A, new_b, C], Change("UPDATE", B.id, B, new_b))
    assert store.load()[1].history[0].content == "Ada likes plums."
    assert store.undo() == UndoOutcome("20261121-101500", restored=1, removed=0)
    assert store.load() == [A, B, C]


def test_undo_after_a_delete_puts_it_back_where_it_was(store: KnowledgeStore) -> None:
    seeded(store)
    commit(store, "20261121-101500", [A, C], Change("DELETE", B.id, before=B))
    assert store.log()[-1].before == B, "the tombstone is in the log"
    assert store.undo() == UndoOutcome("20261121-101500", restored=1, removed=0)
    assert store.load() == [A, B, C]


def test_undo_after_a_mixed_pass_applies_the_inverses_newest_first(store: KnowledgeStore) -> None:
    seeded(store)
    new, new_a = entry(4, "Plums grow by the wall."), edited(A, "The well is full.")
    changes = [
        Change("ADD", new.id, after=new),
        Change("UPDATE", A.id, A, new_a),
        Change("DELETE", A.id, before=new_a),  # updated, then deleted, in one pass
        Change("DELETE", C.id, before=C),
    ]
    commit(store, "20261121-101500", [B, new], *changes)
    assert store.undo() == UndoOutcome("20261121-101500", restored=3, removed=1)
    assert store.load() == [A, B, C]


def test_undo_twice_walks_back_two_passes_then_there_is_nothing(store: KnowledgeStore) -> None:
    seeded(store)
    new_a = edited(A, "The well is full.")
    commit(store, "20261121-101500", [new_a, B, C], Change("UPDATE", A.id, A, new_a))
    commit(store, "20261121-101600", [new_a, B, C])  # changed nothing: never a target
    new = entry(4, "Bo can shoe a horse.")
    commit(store, "20261121-101700", [new_a, B, C, new], Change("ADD", new.id, after=new))
    assert store.undo() == UndoOutcome("20261121-101700", restored=0, removed=1)
    assert store.undo() == UndoOutcome("20261121-101500", restored=1, removed=0)
    assert store.load() == [A, B, C]
    assert store.undo() == UndoOutcome("20261121-090000", restored=0, removed=3)
    assert store.load() == []
    assert store.undo() is None
    assert store.undone_passes() == {"20261121-090000", "20261121-101500", "20261121-101700"}
    assert [r.pass_id for r in store.passes()][-1] == "20261121-101700", "records stay as written"


def test_nothing_to_undo_when_no_pass_changed_anything(store: KnowledgeStore) -> None:
    commit(store, "20261121-101500", [])
    assert store.log() == []
    assert store.undo() is None
    assert store.load() == []


def test_an_entry_a_person_removed_is_put_back_at_the_end_by_number(
    store: KnowledgeStore,
) -> None:
    seeded(store)
    new_b = edited(B, "Ada likes pears now.")
    commit(store, "20261121-101500", [A, new_b, C], Change("UPDATE", B.id, B, new_b))
    store.save([C])  # a person edited the bank since
    assert store.undo() == UndoOutcome("20261121-101500", restored=1, removed=0)
    assert store.load() == [B, C]


class Op(str, Enum):  # noqa: UP042 - the mixin whose str() is "Op.ADD", not "ADD"
    ADD = "ADD"


def test_an_enum_op_is_logged_by_its_value(store: KnowledgeStore) -> None:
    commit(store, "20261121-101500", [A], Change(Op.ADD, A.id, after=A))
    assert store.log()[0].op == "ADD"
    assert "- ADD ltm-1-a1" in (store.passes_folder / "20261121-101500.md").read_text()


OPS = st.lists(st.lists(st.tuples(st.sampled_from(["ADD", "UPDATE", "DELETE"]), st.integers(0, 99)),
                        max_size=4), min_size=1, max_size=5)  # fmt: skip


@settings(max_examples=40)
@given(OPS)
def test_undoing_every_pass_walks_back_through_every_bank_there_was(
    passes: list[list[tuple[str, int]]],
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = KnowledgeStore(Path(folder) / "knowledge")
        bank: list[Entry] = []
        banks, changed, number = [], [], 0
        for index, ops in enumerate(passes):
            before, changes = list(bank), []
            for op, pick in ops:
                if op == "ADD" or not bank:
                    number += 1
                    new = entry(number, f"Entry {number}.")
                    bank.append(new)
                    changes.append(Change("ADD", new.id, after=new))
                    continue
                at = pick % len(bank)
                old = bank[at]
                if op == "UPDATE":
                    bank[at] = edited(old, f"{old.content} Again.")
                    changes.append(Change("UPDATE", old.id, old, bank[at]))
                else:
                    del bank[at]
                    changes.append(Change("DELETE", old.id, before=old))
            commit(store, f"20261121-1015{index:02d}", list(bank), *changes)
            banks.append(before)
            changed.append(bool(changes))
        for before, did in reversed(list(zip(banks, changed, strict=True))):
            if did:
                assert store.undo() is not None
                assert store.load() == before
        assert store.undo() is None
        assert store.load() == []


# -- the log -----------------------------------------------------------------------------


def test_a_torn_last_line_is_ignored_and_cut_before_the_next_append(
    store: KnowledgeStore, caplog: pytest.LogCaptureFixture
) -> None:
    seeded(store)
    whole = store.log_path.read_bytes()
    for torn in (b'{"pass": "20261121-101500", "op": "AD', b'{"pass": "x"}\n', b"[1,\n"):
        store.log_path.write_bytes(whole + torn)
        assert len(store.log()) == 3
    with caplog.at_level(logging.WARNING, logger="mudsim.vault"):
        commit(store, "20261121-101500", [A, B], Change("DELETE", C.id, before=C))
    assert "a torn last line (4 bytes) was cut off" in caplog.text
    assert store.log_path.read_bytes().startswith(whole)
    assert [line.op for line in store.log()] == ["ADD", "ADD", "ADD", "DELETE"]
    assert store.undo() == UndoOutcome("20261121-101500", restored=1, removed=0)


def test_a_bad_line_before_the_last_is_an_error_naming_it(store: KnowledgeStore) -> None:
    seeded(store)
    lines = store.log_path.read_text(encoding="utf-8").splitlines(keepends=True)
    update = {"pass": "p", "at": "now", "op": "UPDATE", "id": A.id, "after": GOOD[0]}
    for bad, problem in [
        ("not json\n", "not JSON"),
        (json.dumps(update) + "\n", "UPDATE needs before with the id ltm-1-a1"),
        ('{"pass": "p"}\n', "at: Field required"),
    ]:
        store.log_path.write_text(lines[0] + bad + "".join(lines[1:]), encoding="utf-8")
        expected = rf"^{store.log_path}, line 2: not a knowledge log line \(.*{problem}"
        with pytest.raises(VaultError, match=expected):
            store.undo()
        assert store.load() == [A, B, C]
        assert store.new_pass_id(NOW) == "20261121-101500", "ids are still found, leniently"


# -- pass records and ids ----------------------------------------------------------------


def test_pass_ids_are_utc_seconds_with_a_suffix_on_collision(store: KnowledgeStore) -> None:
    assert store.new_pass_id(NOW) == "20261121-101500"
    paris = timezone(timedelta(hours=1))
    assert store.new_pass_id(datetime(2026, 11, 21, 11, 15, tzinfo=paris)) == "20261121-101500"
    for expected in ("20261121-101500", "20261121-101500-2", "20261121-101500-3"):
        pass_id = store.new_pass_id(NOW)
        assert pass_id == expected
        store.write_pass(record(pass_id, "failed"), [], [])
    assert len(store.new_pass_id()) == 15
    with pytest.raises(ValueError, match="timezone-aware"):
        store.new_pass_id(datetime(2026, 11, 21, 10, 15))


def test_records_are_ordered_by_id_and_the_last_completed_one_is_found(
    store: KnowledgeStore,
) -> None:
    ids = ["20261121-101500", "20261121-101500-2", "20261121-101500-10", "20261121-101501"]
    for pass_id, status in zip(ids, ["changed", "unchanged", "changed", "failed"], strict=True):
        store.write_pass(record(pass_id, status), [], [])
    assert [r.pass_id for r in store.passes()] == ids
    last = store.last_pass()
    assert last is not None
    assert last.pass_id == "20261121-101500-10"
    failed = store.last_pass(completed_only=False)
    assert failed is not None
    assert failed.status == "failed"


def test_a_record_that_does_not_read_is_skipped_with_a_warning(
    store: KnowledgeStore, caplog: pytest.LogCaptureFixture
) -> None:
    good = record("20261121-101500")
    store.write_pass(good, [], [])
    folder = store.passes_folder
    (folder / "20261121-101600.md").write_text("---\nstatus: [unclosed\n---\n", encoding="utf-8")
    (folder / "20261121-101700.md").write_text("---\npass: 20261121-101700\n---\n")
    (folder / "20261121-101800.md").write_bytes(b"\xff\xfe")
    mismatched = (folder / "20261121-101500.md").read_text().replace("101500", "101900", 1)
    (folder / "20261121-101900-2.md").write_text(mismatched, encoding="utf-8")
    bad_range = (folder / "20261121-101500.md").read_text().replace(
        "memories: null", "memories:\n- 5\n- 2"
    ).replace("101500", "102000", 1)  # fmt: skip
    (folder / "20261121-102000.md").write_text(bad_range, encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="mudsim.vault"):
        assert store.passes() == [good]
        assert store.last_pass() == good
    messages = caplog.messages
    assert len(messages) == 10
    assert "101600.md is skipped:" in messages[0]
    assert "invalid front matter" in messages[0]
    assert "101700.md is skipped: not a pass record (status: Field required)" in messages[1]
    assert "101800.md is skipped: cannot read" in messages[2]
    assert "101900-2.md is skipped: it records pass 20261121-101900" in messages[3]
    assert "memories [5, 2] is not a range" in messages[4]


# -- secrets -----------------------------------------------------------------------------

SECRETS = ["sk-proj-Zx81AbCdEfGhIjKlMnOp", "hunter2hunter2", "ghp_" + "Q7" * 18, "s3cretPa55"]


def test_a_secret_never_reaches_a_file_under_knowledge(store: KnowledgeStore) -> None:
    key, password, token, other = SECRETS
    leaky = entry(1, f"Bo's key is {key}.", tags=(f"password={password}",))
    leaky = leaky.model_copy(
        update={"history": [Earlier(content=f"token: {token}", tags=[], until=T1, by_pass="p")]}
    )
    edited_leaky = edited(leaky, f"The key was {key}, and pwd={other}")
    changes = [
        Change("ADD", leaky.id, after=leaky, candidate={"content": f"api_key={other}"}),
        Change("UPDATE", leaky.id, leaky, edited_leaky, candidate=f"Bearer {token}"),
    ]
    done = record("20261121-101500", notes=[f"secret={other}"], error=f"password: {password}",
                  fallback=f"saw {key}")  # fmt: skip
    candidates = [("fact", f"key {key}", [f"secret={other}"])]
    store.commit_pass("20261121-101500", "GENEROUS", changes, done, candidates)
    store.save([*store.load(), entry(2, f"db at postgres://bo:{password}@db/mill")])
    assert store.undo() is not None

    files = [path for path in store.folder.rglob("*") if path.is_file() and path.name != ".lock"]
    assert (store.folder / ".lock").read_bytes() == b"", "the commit lock holds nothing"
    assert {path.name for path in files} == {
        "long-term-memory.json", "log.jsonl", "20261121-101500.md",
    }  # fmt: skip
    for path in files:
        data = path.read_bytes()
        for secret in SECRETS:
            assert secret.encode() not in data, f"{secret} in {path.name}"
        assert b"[redacted]" in data
    added = store.log()[0].after
    assert added is not None
    assert added.content == "Bo's key is sk-[redacted]."


def test_a_plan_that_does_not_read_is_one_error_and_is_left_as_it_is(
    store: KnowledgeStore,
) -> None:
    old = seeded(store)
    store.plan_path.write_text('{"what": "pass", "log": [', encoding="utf-8")
    for look in (store.load, store.log, store.passes, lambda: store.record_access({"x": (1, "t")})):
        with pytest.raises(VaultError, match=r"interrupted knowledge commit that cannot be read"):
            look()
    assert store.plan_path.read_text(encoding="utf-8") == '{"what": "pass", "log": ['
    store.plan_path.unlink()  # moved away, as the message says: the commit is dropped
    assert store.load() == old


def test_uses_counted_while_a_plan_waits_land_on_the_planned_bank(store: KnowledgeStore) -> None:
    seeded(store)
    store.plan_pass("20261121-101500", "GENEROUS", [Change("DELETE", B.id, before=B)],
                    record("20261121-101500", operations={"DELETE": 1}), [])  # fmt: skip
    assert store.record_access({A.id: (2, "2026-11-21T12:00")}) == 1
    bank = store.load()
    assert [e.id for e in bank] == [A.id, C.id]
    assert bank[0].access_count == 2
    assert not store.plan_path.exists()
