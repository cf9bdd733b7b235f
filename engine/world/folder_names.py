"""A character's folder name: its name with spaces as ``_`` and only ``[A-Za-z0-9_-]``
kept (the vault contract), never empty and never a device name on Windows, so ``../``,
``/``, NUL and ``CON`` can never name a path (pure, no I/O). The world refuses two
characters whose folders would collide; the vault makes the folders.
"""

from __future__ import annotations

import re
from functools import lru_cache

from engine.errors import UnsafeNameError

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
MAX_NAME_LENGTH = 100


@lru_cache(maxsize=1024)
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
    if windows_device(stem):
        raise UnsafeNameError(f"the {what} {name!r} is a device name on Windows (such as "
                              "CON, AUX or NUL) and cannot name a folder")  # fmt: skip
    return stem


def windows_device(name: str) -> bool:
    """Whether ``name`` is one Windows keeps for a device (``CON``, ``aux``, ``NUL``,
    ``COM1``...; also with an extension, ``nul.txt``): no file or folder may have it."""
    return name.split(".", 1)[0].strip().lower() in _WINDOWS_DEVICES


_WINDOWS_DEVICES = frozenset(
    ["con", "prn", "aux", "nul"] + [f"{port}{n}" for port in ("com", "lpt") for n in range(1, 10)]
)
