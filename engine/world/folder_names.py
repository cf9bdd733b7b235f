"""A character's folder name (pure, no I/O): only ``[A-Za-z0-9_-]``, never empty and
never a device name on Windows, so ``../``, ``/``, NUL and ``CON`` can never name a path.

The name is taken in NFKC with Latin accents and strokes dropped
(``engine.world.unicode_names.fold_latin``); spaces become ``_`` and what is not
``[A-Za-z0-9_-]`` goes: ``The Traveler`` -> ``The_Traveler``, ``Zoë`` -> ``Zoe``,
``Łukasz`` -> ``Lukasz``, ``Ｗｒｅｎ`` -> ``Wren``. A name that keeps letters of
another script (``李``, ``Иван``) is written as IDNA writes such a name: ``xn--`` and
the Punycode of the name in lower case (``李`` -> ``xn--7qv``), so every letter counts
and the folder still holds only ASCII. Two names with one folder (in any case) are
one name: the world refuses the second. The vault makes the folders, and moves those an
older mudsim named (``legacy_folder_name``) to these names.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from engine.errors import UnsafeNameError
from engine.world.unicode_names import fold_latin

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
MAX_NAME_LENGTH = 100
PUNYCODE_PREFIX = "xn--"
"""How a folder of a name in another script begins (no name of ASCII letters may)."""


@lru_cache(maxsize=1024)
def safe_name(name: str, *, what: str = "name") -> str:
    """Return ``name`` as a file-name stem, or raise if nothing usable is left.

    Examples: ``"The Traveler"`` -> ``"The_Traveler"``; ``"../etc"`` -> ``"etc"``;
    ``"Zoë"`` -> ``"Zoe"``; ``"李"`` -> ``"xn--7qv"``; ``"../"`` raises
    ``UnsafeNameError``.
    """
    text = fold_latin(name).strip().replace(" ", "_")
    if any(not ch.isascii() and unicodedata.category(ch)[0] in "LN" for ch in text):
        kept = "".join(ch for ch in text.casefold() if _lettered(ch) or ch in "_-")
        stem = (PUNYCODE_PREFIX + kept.encode("punycode").decode("ascii"))[:MAX_NAME_LENGTH]
    else:
        stem = _UNSAFE.sub("", text)[:MAX_NAME_LENGTH]
    return _checked(stem, name, what)


def legacy_folder_name(name: str) -> str | None:
    """The folder mudsim gave ``name`` before names could hold other letters (only the
    ASCII letters, digits, ``_`` and ``-`` of it kept: ``Zoë`` -> ``Zo``), or None when
    that left nothing usable."""
    stem = _UNSAFE.sub("", name.strip().replace(" ", "_"))[:MAX_NAME_LENGTH]
    try:
        return _checked(stem, name, "name")
    except UnsafeNameError:
        return None


def _lettered(ch: str) -> bool:
    """A letter, a digit or a mark (of any script)."""
    return unicodedata.category(ch)[0] in "LNM"


def _checked(stem: str, name: str, what: str) -> str:
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
