"""``config/bans.md`` (``engine.vault.bans``): lengths, networks, bans that lapse, a
broken file."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.errors import VaultError
from engine.vault.bans import Ban, BanStore, parse_duration


@pytest.mark.parametrize(
    ("word", "seconds"),
    [("90s", 90), ("30m", 1800), ("2h", 7200), ("7d", 604_800), ("1w", 604_800), ("2H", 7200)],
)
def test_a_length_is_a_number_and_a_unit(word: str, seconds: int) -> None:
    assert parse_duration(word) == timedelta(seconds=seconds)


@pytest.mark.parametrize("word", ["0h", "2", "h", "-2h", "2y", "spamming", "1.5h"])
def test_other_words_are_no_length(word: str) -> None:
    assert parse_duration(word) is None


@given(st.ip_addresses(v=4))
def test_a_network_ban_covers_exactly_its_addresses(address: object) -> None:
    ban = Ban("10.1.0.0/16", None)
    assert ban.covers_address(str(address)) == str(address).startswith("10.1.")
    assert not ban.covers_name("10.1.0.0/16")


def test_names_are_matched_without_case_and_never_as_addresses() -> None:
    ban = Ban("Mallory", None)
    assert ban.covers_name("mALLORY")
    assert not ban.covers_address("Mallory")
    assert not ban.covers_address("not an address")


def test_a_ban_lapses_and_a_later_change_drops_it(tmp_path: Path) -> None:
    store = BanStore(tmp_path)
    now = datetime.now(UTC)
    store.add(Ban("Mallory", now + timedelta(hours=1), "spam", "Pat"))
    store.add(Ban("Trent", now - timedelta(seconds=1), "", "Pat"))  # over already
    assert store.name_ban("mallory") is not None
    assert store.name_ban("Trent") is None
    assert store.name_ban("Mallory", now + timedelta(hours=2)) is None
    store.add(Ban("10.0.0.0/8", None))
    assert [b.target for b in BanStore(tmp_path).load()] == ["Mallory", "10.0.0.0/8"]
    assert store.address_ban("10.9.9.9") is not None
    assert store.remove("MALLORY") is not None
    assert store.remove("Mallory") is None


def test_a_broken_bans_file_is_one_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "config" / "bans.md"
    path.parent.mkdir()
    path.write_text("---\nbans: [{target: x, colour: red}]\n---\n")
    with pytest.raises(VaultError, match=r"bans\.md, bans\.0\.colour"):
        BanStore(tmp_path).load()
