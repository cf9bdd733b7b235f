"""The Knowledge tab's text (pure): a bank that does not read says so, an empty bank
says when it fills, and the last pass's failure shows."""

from __future__ import annotations

from engine.memory.knowledge import Stamp
from engine.tui.render import knowledge_text
from engine.vault.knowledge_store import PassRecord

NOW = Stamp(sim="2026-01-01T09:00", at="2026-11-23T10:00:00.000000Z")


def test_a_bank_that_does_not_read_is_named_and_the_failed_pass_shows() -> None:
    failed = PassRecord.model_validate(
        {"pass": "20261123-100000", "status": "failed", "started": NOW, "finished": NOW,
         "error": "the extraction reply did not parse"}
    )  # fmt: skip
    text = knowledge_text("Ada", "long-term-memory.json is not a valid knowledge bank", failed, "")
    assert text.splitlines() == [
        "Ada's knowledge",
        "The bank does not read: long-term-memory.json is not a valid knowledge bank",
        "",
        "Last pass 20261123-100000: failed, ended 2026-01-01T09:00 world time, 0 candidates",
        "Error: the extraction reply did not parse",
    ]


def test_an_empty_bank_and_no_pass_yet() -> None:
    assert knowledge_text("Bo", [], None, "") == (
        "Bo's knowledge\nThe bank is empty: it fills at the end of a run and on @consolidate."
        "\n\nNo knowledge pass yet."
    )


def test_the_handbook_tab_says_how_it_was_written_or_why_not() -> None:
    from engine.tui.render import handbook_text
    from engine.vault.handbook_store import HandbookState

    state = HandbookState(method="rules", mode="RULES", updated=NOW,
                          fallback="the model's handbook was not usable (no reply)")  # fmt: skip
    text = handbook_text("Ada", "## Profile\n\nA gardener.\n", ["draw-water"], state)
    assert text.splitlines() == [
        "Ada's handbook",
        "Written by the rules at 2026-01-01T09:00 world time (the model's handbook was not "
        "usable (no reply))",
        "",
        "## Profile",
        "",
        "A gardener.",
        "",
        "Skills: draw-water",
    ]
    assert "No handbook yet" in handbook_text("Bo", None, [], None)
    broken = handbook_text("Bo", None, [], None, problem="handbook.json is not valid JSON")
    assert broken.endswith("The handbook does not read: handbook.json is not valid JSON")
