"""@my-profile, @set-profile, @my-description, @set-description."""

from __future__ import annotations

import pytest
from helpers import memories, run

from engine.sim.simulation import Simulation


def test_my_profile_shows_the_profile(sim: Simulation) -> None:
    assert run(sim, "Ada", "@my-profile").text == "Your profile: A careful gardener."
    assert run(sim, "Pip", "@my-profile").text == "Your profile: (empty)"


def test_my_is_ambiguous(sim: Simulation) -> None:
    result = run(sim, "Ada", "@my")
    assert not result.ok
    assert result.text == "'@my' could mean @my-description and @my-profile."


@pytest.mark.parametrize("args", ["A bold explorer.", "-> A bold explorer."])
def test_set_profile_replaces_it(sim: Simulation, args: str) -> None:
    result = run(sim, "Ada", f"@set-profile {args}")
    assert result.ok
    assert result.text == "Your profile was: A careful gardener.\nIt is now: A bold explorer."
    assert sim.character("Ada").profile == "A bold explorer."
    assert run(sim, "Ada", "@my-profile").text == "Your profile: A bold explorer."
    assert memories(sim, "Pat") == ["Ada pauses in deep contemplation."]


@pytest.mark.parametrize("line", ["@set-profile", "@set-profile ->"])
def test_set_profile_empty_fails(sim: Simulation, line: str) -> None:
    result = run(sim, "Ada", line)
    assert not result.ok
    assert result.text == "Your profile cannot be empty."
    assert sim.character("Ada").profile == "A careful gardener."


def test_my_description_shows_how_others_see_you(sim: Simulation) -> None:
    assert run(sim, "Pip", "@my-description").text == "Others see: A small, curious child."
    assert run(sim, "Bea", "@my-description").text == "Others see: (nothing special)"


def test_set_description_changes_what_others_examine(sim: Simulation) -> None:
    result = run(sim, "Pip", "@set-description -> A child in a red hood.")
    assert result.ok
    assert result.text == "Others now see: A child in a red hood."
    assert sim.character("Pip").description == "A child in a red hood."
    assert memories(sim, "Ada") == ["Pip adjusts their appearance."]
    assert run(sim, "Ada", "examine Pip").text == "Pip (player): A child in a red hood."


@pytest.mark.parametrize("line", ["@set-description", "@set-description ->"])
def test_set_description_empty_fails(sim: Simulation, line: str) -> None:
    result = run(sim, "Pip", line)
    assert not result.ok
    assert result.text == "Your description cannot be empty."
    assert sim.character("Pip").description == "A small, curious child."
