"""Resolving a typed verb to a command: exact, alias, prefix, edit distance, roles."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein

from engine.commands import Command, Invocation, Registry, Result, default_registry
from engine.commands.context import CommandContext
from engine.commands.registry import MAX_EDIT_DISTANCE
from engine.world.model import Role

REGISTRY = default_registry()


def resolved(verb: str, role: Role = Role.PLAYER) -> tuple[str | None, str, tuple[str, ...]]:
    found = REGISTRY.resolve(verb, role)
    return (found.command.key if found.command else None, found.how, found.candidates)


def noop(ctx: CommandContext, call: Invocation) -> Result:
    return Result("nothing happens")


def make(key: str, *, aliases: tuple[str, ...] = (), category: str = "social") -> Command:
    return Command(key, noop, category, key, "does nothing", key, aliases)


def test_exact_name() -> None:
    assert resolved("look") == ("look", "exact", ())
    assert resolved("examine") == ("examine", "exact", ())
    assert resolved("@my-profile") == ("@my-profile", "exact", ())


def test_exact_name_is_case_insensitive() -> None:
    assert resolved("LOOK") == ("look", "exact", ())


def test_alias() -> None:
    assert resolved("l") == ("look", "exact", ())
    assert resolved("ex") == ("examine", "exact", ())
    assert resolved("?") == ("help", "exact", ())
    assert resolved("@tp", Role.BUILDER) == ("@teleport", "exact", ())


def test_unique_prefix() -> None:
    assert resolved("exa") == ("examine", "prefix", ())
    assert resolved("rec") == ("recall", "prefix", ())
    assert resolved("emot") == ("emote", "prefix", ())
    assert resolved("g") == ("go", "prefix", ())
    assert resolved("@di", Role.BUILDER) == ("@dig", "prefix", ())


def test_exact_beats_prefix_and_distance() -> None:
    registry = Registry()
    registry.extend([make("wave"), make("waves"), make("wavelength"), make("wade")])
    found = registry.resolve("wave", Role.PLAYER)
    assert (found.command and found.command.key, found.how) == ("wave", "exact")
    found = registry.resolve("wavel", Role.PLAYER)
    assert (found.command and found.command.key, found.how) == ("wavelength", "prefix")


def test_prefix_beats_distance() -> None:
    registry = Registry()
    registry.extend([make("hop"), make("hopscotch")])
    # `hops` is one edit from `hop` but a prefix of `hopscotch` only.
    found = registry.resolve("hops", Role.PLAYER)
    assert (found.command and found.command.key, found.how) == ("hopscotch", "prefix")


def test_ambiguous_prefix_lists_the_candidates() -> None:
    assert resolved("wh") == (None, "ambiguous", ("where", "who"))
    key, how, candidates = resolved("@set")
    assert (key, how) == (None, "ambiguous")
    assert candidates == ("@set-description", "@set-profile")


def test_edit_distance_one_and_two() -> None:
    assert resolved("lokk") == ("look", "distance", ())
    assert resolved("thnik") == ("think", "distance", ())
    assert resolved("hepl") == ("help", "distance", ())
    assert Levenshtein.distance("emotte", "emote") == 1
    assert resolved("emotte") == ("emote", "distance", ())
    assert Levenshtein.distance("lookxy", "look") == 2
    assert resolved("lookxy") == ("look", "distance", ())


def test_edit_distance_three_is_no_match() -> None:
    assert Levenshtein.distance("lookxyz", "look") == 3
    assert resolved("lookxyz") == (None, "none", ())
    assert resolved("sayyyy") == (None, "none", ())
    assert resolved("xyzzy") == (None, "none", ())
    assert MAX_EDIT_DISTANCE == 2


def test_equal_distance_is_ambiguous() -> None:
    assert resolved("wo") == (None, "ambiguous", ("go", "who"))


def test_a_short_word_two_edits_away_or_a_prose_word_is_not_corrected() -> None:
    assert resolved("hoo") == (None, "none", ())  # two edits from go, look and who
    assert resolved("rom") == (None, "none", ())  # two from go and rooms
    assert resolved("so") == (None, "none", ())  # prose ("So I went..."), not "go"
    assert resolved("there") == (None, "none", ())  # prose, not "where"


def test_forbidden_for_a_lower_role() -> None:
    found = REGISTRY.resolve("@dig", Role.PLAYER)
    assert found.how == "forbidden"
    assert found.command is not None
    assert found.command.key == "@dig"
    assert resolved("@tp", Role.PLAYER) == ("@teleport", "forbidden", ())
    assert resolved("@save", Role.BUILDER) == ("@save", "forbidden", ())
    assert resolved("@imp", Role.BUILDER) == ("@impersonate", "forbidden", ())


def test_allowed_for_the_role_or_higher() -> None:
    assert resolved("@dig", Role.BUILDER) == ("@dig", "exact", ())
    assert resolved("@dig", Role.ADMIN) == ("@dig", "exact", ())
    assert resolved("@save", Role.ADMIN) == ("@save", "exact", ())


def test_prefix_and_distance_only_consider_allowed_commands() -> None:
    assert resolved("@di", Role.PLAYER) == (None, "none", ())
    assert resolved("@digg", Role.PLAYER) == (None, "none", ())
    assert resolved("@digg", Role.BUILDER) == ("@dig", "distance", ())
    assert resolved("@imp", Role.ADMIN) == ("@impersonate", "exact", ())
    assert resolved("@impe", Role.ADMIN) == ("@impersonate", "prefix", ())
    _, how, candidates = resolved("@", Role.PLAYER)
    assert how == "ambiguous"
    assert "@dig" not in candidates
    assert "@save" not in candidates


def test_registering_a_duplicate_name_raises() -> None:
    registry = default_registry()
    with pytest.raises(ValueError, match="look"):
        registry.add(make("look"))
    with pytest.raises(ValueError, match="'l'"):
        registry.add(make("glance", aliases=("l",)))
    with pytest.raises(ValueError, match="'say'"):
        registry.add(make("speak", aliases=("say",)))


def test_a_command_whose_alias_repeats_its_key_is_refused() -> None:
    registry = Registry()
    with pytest.raises(ValueError, match="twice"):
        registry.add(make("wave", aliases=("wave",)))


def test_a_refused_registration_changes_nothing() -> None:
    registry = default_registry()
    before = dict(registry.commands)
    with pytest.raises(ValueError, match="'l'"):
        registry.add(make("glance", aliases=("l",)))
    assert registry.commands == before
    assert registry.get("glance") is None
    assert registry.resolve("glance", Role.ADMIN).command is None


def test_unknown_category_is_refused() -> None:
    registry = Registry()
    with pytest.raises(ValueError, match="category"):
        registry.add(make("wave", category="dancing"))
    assert registry.get("wave") is None


def test_every_default_command_is_reachable_by_its_names() -> None:
    for command in REGISTRY.commands.values():
        for name in command.names:
            found = REGISTRY.resolve(name, Role.ADMIN)
            assert found.command is command
            assert found.how == "exact"


# -- properties -------------------------------------------------------------------

verbs = st.one_of(
    st.text(max_size=20),
    st.sampled_from(sorted({n for c in REGISTRY.commands.values() for n in c.names})).flatmap(
        lambda name: st.sampled_from(
            [name, name[:-1], name[1:], name + "x", name.upper(), name[:2], name + "zz"]
        )
    ),
)


@given(verbs, st.sampled_from(list(Role)))
def test_resolve_never_raises_and_respects_roles(verb: str, role: Role) -> None:
    found = REGISTRY.resolve(verb, role)
    assert found.how in ("exact", "prefix", "distance", "none", "ambiguous", "forbidden")
    if found.how in ("none", "ambiguous"):
        assert found.command is None
    else:
        assert found.command is not None
    if found.how == "forbidden":
        assert found.command is not None
        assert not role.allows(found.command.role)
    elif found.command is not None:
        assert role.allows(found.command.role)
    if found.how == "ambiguous":
        assert len(found.candidates) >= 2
        for key in found.candidates:
            assert role.allows(REGISTRY.commands[key].role)
    else:
        assert found.candidates == ()
