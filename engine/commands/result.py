"""What a command returns: narrative text for the caller, success, and a hint."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class Result:
    text: str
    ok: bool = True
    hint: str | None = None
    """For a failure: what to try instead."""
    memory_kind: Literal["result", "thought"] = "result"

    @property
    def shown(self) -> str:
        """The text the caller sees."""
        return f"{self.text}\n{self.hint}" if self.hint else self.text


def done(text: str) -> Result:
    return Result(text)


def failed(text: str, hint: str | None = None) -> Result:
    return Result(text, ok=False, hint=hint)
