"""Training capture of a recorded run: @training-status (anyone), @training-toggle (admins)."""

from __future__ import annotations

from engine.commands.context import CommandContext, TrainingCapture
from engine.commands.registry import Command, Invocation, command
from engine.commands.result import Result, done, failed
from engine.world.model import Role

COMMANDS: list[Command] = []

NOT_RECORDED = (
    "This session keeps no run record (it was not started as a recorded run, or "
    "config/record.md says record: false), so no training pairs are captured."
)


def _status(capture: TrainingCapture) -> str:
    state = "on" if capture.on else "off"
    pairs = capture.ok + capture.failed
    return (
        f"Training capture is {state} for run {capture.run}: {pairs} pair"
        f"{'s' * (pairs != 1)} captured this run ({capture.ok} ok, {capture.failed} failed)."
    )


def _no_arguments(verb: str, args: str) -> Result | None:
    if args.strip():
        return failed(f"{verb} takes no arguments.", f"Type '{verb}' alone.")
    return None


@command(
    COMMANDS,
    "@training-status",
    category="query",
    syntax="@training-status",
    help="Say whether this run captures each agent turn as a training pair, and how many "
    "it has captured (ok and failed).",
    example="@training-status",
)
def training_status(ctx: CommandContext, call: Invocation) -> Result:
    refused = _no_arguments("@training-status", call.args)
    if refused is not None:
        return refused
    capture = ctx.training()
    return done(NOT_RECORDED if capture is None else _status(capture))


@command(
    COMMANDS,
    "@training-toggle",
    category="admin",
    role=Role.ADMIN,
    syntax="@training-toggle",
    help="Switch the capture of training pairs on or off for the rest of this run.",
    example="@training-toggle",
)
def training_toggle(ctx: CommandContext, call: Invocation) -> Result:
    refused = _no_arguments("@training-toggle", call.args)
    if refused is not None:
        return refused
    capture = ctx.toggle_training()
    if capture is None:
        return failed(NOT_RECORDED, "Nothing to switch: there is no run record.")
    return done(f"Switched {'on' if capture.on else 'off'}. {_status(capture)}")
