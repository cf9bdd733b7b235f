"""Turning names into file names that can never leave their folder (pure, no I/O).

A character's folder is its name with spaces as ``_`` and only ``[A-Za-z0-9_-]`` kept
(the vault contract). Note titles follow the same rule. Whatever is left must be
non-empty, so ``../``, ``/``, NUL and the empty string can never name a path.
"""

from __future__ import annotations

import re

from engine.errors import UnsafeNameError

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
MAX_NAME_LENGTH = 100


def safe_name(name: str, *, what: str = "name") -> str:
    """Return ``name`` as a file-name stem, or raise if nothing usable is left.

    Examples: ``"The Traveler"`` -> ``"The_Traveler"``; ``"../etc"`` -> ``"etc"``;
    ``"../"`` raises ``UnsafeNameError``.
    """
    stem = _UNSAFE.sub("", name.strip().replace(" ", "_"))[:MAX_NAME_LENGTH]
    if not stem.strip("_-"):
        raise UnsafeNameError(
            f"the {what} {name!r} has no letters or digits to make a file name from"
        )
    return stem
