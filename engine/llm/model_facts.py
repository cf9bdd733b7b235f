"""What a server says about a model (Ollama's ``/api/show``), in both directions.

``serve-llm`` and the stub write ``details.parameter_size`` the way Ollama does
(``human_number``: ``134.52M``, ``8B``, ``1.5B``); the Ollama backend reads a
``/api/show`` answer into ``ModelFacts``, whose parameter count sets the ``constrain``
default (a model under ``SMALL_MODEL_PARAMETERS`` rarely writes a valid command
unaided) and whose context length is the model's window.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SMALL_MODEL_PARAMETERS = 1_000_000_000
"""Below this many parameters a model is constrained unless its profile says not."""

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMBT]?)\s*$", re.IGNORECASE)
_SCALE = {"": 1, "K": 10**3, "M": 10**6, "B": 10**9, "T": 10**12}


@dataclass(frozen=True)
class ModelFacts:
    parameter_count: int | None = None
    context_length: int | None = None
    """The context the model was trained for (``<arch>.context_length``)."""
    family: str | None = None

    @property
    def small(self) -> bool:
        """Known to be under a billion parameters."""
        return self.parameter_count is not None and self.parameter_count < SMALL_MODEL_PARAMETERS


def human_number(count: int) -> str:
    """Ollama's ``parameter_size``: ``8B``, ``1.5B``, ``134.52M``, ``500K``."""
    for suffix, scale, decimals in (("B", 10**9, 1), ("M", 10**6, 2)):
        if count >= scale:
            number = count / scale
            shown = f"{number:.0f}" if number == math.floor(number) else f"{number:.{decimals}f}"
            return shown + suffix
    return f"{count / 1000:.0f}K" if count >= 1000 else str(count)


def parse_parameter_size(text: object) -> int | None:
    """``"134.52M"`` -> 134520000; None for anything that is not such a size."""
    match = _SIZE.match(text) if isinstance(text, str) else None
    if match is None:
        return None
    return round(float(match.group(1)) * _SCALE[match.group(2).upper()])


def facts_from_show(data: Mapping[str, Any]) -> ModelFacts:
    """Read an ``/api/show`` answer; fields it lacks stay None."""
    info = data.get("model_info")
    info = info if isinstance(info, Mapping) else {}
    details = data.get("details")
    details = details if isinstance(details, Mapping) else {}
    count = _positive(info.get("general.parameter_count"))
    if count is None:
        count = parse_parameter_size(details.get("parameter_size"))
    arch = info.get("general.architecture")
    context = _positive(info.get(f"{arch}.context_length")) if isinstance(arch, str) else None
    if context is None:  # a server that leaves out the architecture: any *.context_length
        lengths = (v for k, v in info.items() if str(k).endswith(".context_length"))
        context = next((n for n in map(_positive, lengths) if n is not None), None)
    family = details.get("family") or (arch if isinstance(arch, str) else None)
    return ModelFacts(count, context, str(family) if family else None)


def _positive(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if value > 0 and math.isfinite(value) else None
