"""Commands: the parser, the registry, and one module per command family."""

from __future__ import annotations

from engine.commands import (
    account,
    admin,
    building,
    chronicle,
    clock,
    handbook,
    identity,
    knowledge,
    memory,
    moderation,
    movement,
    query,
    social,
    training,
)
from engine.commands.context import CommandContext
from engine.commands.parser import ParsedLine, parse_line
from engine.commands.registry import Command, Invocation, Registry, Resolution
from engine.commands.result import Result

__all__ = [
    "Command",
    "CommandContext",
    "Invocation",
    "ParsedLine",
    "Registry",
    "Resolution",
    "Result",
    "default_registry",
    "parse_line",
]


def default_registry() -> Registry:
    """Every built-in command."""
    registry = Registry()
    families = (
        social, movement, memory, knowledge, handbook, identity, query, building, admin, clock,
        chronicle, training, account, moderation,
    )  # fmt: skip
    for family in families:
        registry.extend(family.COMMANDS)
    return registry
