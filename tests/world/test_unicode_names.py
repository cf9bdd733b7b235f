"""Names beyond ASCII: what makes two names one, which new names are fit, and the
folder each gets (ASCII only, one per name)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.errors import UnsafeNameError
from engine.vault.accounts import new_name_problem
from engine.world.folder_names import legacy_folder_name, safe_name, windows_device
from engine.world.unicode_names import fold_latin, name_key, script_problem

SAFE = re.compile(r"[A-Za-z0-9_-]+")
# Letters that matter: accents, strokes, case, other scripts, look-alikes, full width.
NAMEISH = st.text(
    alphabet=st.sampled_from([*"aAeEoOzZëËéÉöŁłßxn李明山たカИванРорΩωέ9_-", "Ｚ", "ｏ", "\u0308"]),
    max_size=10,
)


@pytest.mark.parametrize("other", ["Zoe", "ZOE", "zoë", "Zoé", "Ｚｏｅ", "Zoe\u0308", " Zoë "])
def test_zoe_with_or_without_its_dots_is_one_name(other: str) -> None:
    assert name_key(other) == name_key("Zoë") == "zoe"
    assert safe_name(other).lower() == "zoe"


@pytest.mark.parametrize(("one", "another"), [("Zoe", "Zoey"), ("Ivan", "Иван"), ("李", "李明")])
def test_different_names_stay_different(one: str, another: str) -> None:
    assert name_key(one) != name_key(another)
    assert safe_name(one).lower() != safe_name(another).lower()


def test_latin_letters_are_spelled_in_ascii_and_other_scripts_kept() -> None:
    assert fold_latin("Łukasz Żółw Straße Ærø") == "Lukasz Zolw Strasse AEro"
    assert fold_latin("李明 हिन्दी") == "李明 हिन्दी"  # a Devanagari mark is part of its letter


@pytest.mark.parametrize("name", ["Zoë", "José", "Łukasz", "李", "李明", "山田たろう", "Иван",
                                  "Рома", "Ωμέγα", "हिन्दी", "Ｚｏｅ", "Wren-2"])  # fmt: skip
def test_names_beyond_ascii_are_fit_for_new_characters(name: str) -> None:
    assert new_name_problem(name) is None
    assert SAFE.fullmatch(safe_name(name))


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("Zое", "mixes letters of different scripts (Cyrillic and Latin)"),  # Cyrillic о, е
        ("ωmega", "mixes letters of different scripts (Greek and Latin)"),
        ("Рор", "would read as the Latin name 'Pop'"),  # all Cyrillic, all Latin look-alikes
        ("ΑΒΕ", "would read as the Latin name 'ABE'"),
        ("xn--7qv", "begins as the folders of names in other scripts do"),
        ("Cön", "is a device name on Windows"),  # its folder would be Con
        ("Ｃｏｎ", "is a device name on Windows"),
        ("Mé", "is a word the world reads as something else"),
        ("Zo\x00e", "A new name has 2 to 24 characters"),
        ("Zo\u202ee", "A new name has 2 to 24 characters"),
        ("../Zoë", "A new name has 2 to 24 characters"),
        ("Zoë Smith", "A new name has 2 to 24 characters"),
        ("é", "A new name has 2 to 24 characters"),
    ],
)
def test_names_that_could_pass_for_another_or_break_a_path_are_refused(name: str, why: str) -> None:
    problem = new_name_problem(name)
    assert problem is not None
    assert why in problem, problem


@given(NAMEISH, NAMEISH)
def test_two_fit_names_share_a_folder_exactly_when_they_are_one_name(one: str, two: str) -> None:
    if new_name_problem(one) is not None or new_name_problem(two) is not None:
        return
    assert (safe_name(one).lower() == safe_name(two).lower()) == (name_key(one) == name_key(two))


@given(st.one_of(NAMEISH, st.text(max_size=40)))
def test_every_folder_is_ascii_safe_and_its_own_folder(name: str) -> None:
    try:
        folder = safe_name(name)
    except UnsafeNameError:
        return
    assert SAFE.fullmatch(folder), folder
    assert not windows_device(folder)
    assert safe_name(folder) == folder


@given(NAMEISH)
def test_a_fit_name_is_one_script_and_no_latin_look_alike(name: str) -> None:
    if new_name_problem(name) is None:
        assert script_problem(name) is None


@pytest.mark.parametrize(
    ("name", "legacy"), [("Zoë", "Zo"), ("Łukasz", "ukasz"), ("Ada", "Ada"), ("李", None)]
)
def test_the_folder_an_older_mudsim_gave_a_name(name: str, legacy: str | None) -> None:
    assert legacy_folder_name(name) == legacy
