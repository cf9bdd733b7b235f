"""The chronicle keeps its files open between appends, yet every line lands where an
append that opened the file would have put it."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

from engine.vault import chronicle
from engine.vault.chronicle import ChronicleStore, Entry

DAY = date(2026, 1, 2)


def _add(store: ChronicleStore, text: str, room: str = "hall") -> None:
    store.add(DAY, [Entry(store.world_path(), "World", text),
                    Entry(store.room_path(room), room, text)])  # fmt: skip


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.startswith("- ")]


def test_a_file_removed_or_replaced_meanwhile_is_opened_again(tmp_path: Path) -> None:
    store = ChronicleStore(tmp_path)
    _add(store, "- one")
    world = store.folder / "world.md"
    world.unlink()  # a person removes it while the world runs
    _add(store, "- two")
    assert _lines(world) == ["- two"]
    assert world.read_text().startswith("# World\n\nSimulated date: 2026-01-02\n\n")
    replacement = world.with_suffix(".new")
    replacement.write_text("# World\n\nSimulated date: 2026-01-02\n\n- edited\n")
    os.replace(replacement, world)
    _add(store, "- three")
    assert _lines(world) == ["- edited", "- three"]
    assert _lines(store.folder / "rooms" / "hall.md") == ["- one", "- two", "- three"]
    store.close()


def test_at_most_kept_open_files_stay_open(tmp_path: Path) -> None:
    store = ChronicleStore(tmp_path)
    for n in range(chronicle.KEPT_OPEN + 5):
        _add(store, f"- line {n}", room=f"room{n}")
    assert len(store._open) == chronicle.KEPT_OPEN
    store.close()
    assert not store._open
    _add(store, "- after closing")
    assert _lines(store.folder / "world.md")[-1] == "- after closing"
    store.close()


def test_clear_and_a_new_day_close_what_was_open(tmp_path: Path) -> None:
    store = ChronicleStore(tmp_path)
    _add(store, "- one")
    assert store._open
    store.add(date(2026, 1, 3), [Entry(store.world_path(), "World", "- next day")])
    assert _lines(store.folder / "days" / "2026-01-02" / "world.md") == ["- one"]
    assert _lines(store.folder / "world.md") == ["- next day"]
    store.clear()
    assert not store._open
