"""A note's title as a file name that can never leave its folder (pure, no I/O).

A note's file keeps its title's letters in any script (``note_file_stem``); whatever is
left must be non-empty, so ``../``, ``/``, NUL and the empty string can never name a
path. A character's folder name is the world's rule: ``engine.world.folder_names``.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

from engine.errors import UnsafeNameError
from engine.world.folder_names import windows_device

_NOT_A_WORD_CHARACTER = re.compile(r"[^\w-]")  # \w: letters and digits of every script, _
MAX_NOTE_STEM_BYTES = 180
"""A note's file-name stem in UTF-8 (file systems allow 255 bytes; room for the hash)."""


def note_title(title: str) -> str:
    """A title as notes keep it: NFC (a composed and a decomposed "Café" are one note)."""
    return unicodedata.normalize("NFC", title.strip())


def note_file_stem(title: str, *, hashed: bool = False) -> str:
    """The file-name stem of the note called ``title``: its letters and digits in any
    script, spaces as ``_`` (``Plans for spring`` -> ``Plans_for_spring``, ``日本`` ->
    ``日本``). When that does not give the title back exactly (other characters dropped,
    an ``_`` of its own, a Windows device name such as ``con``, a cut), or ``hashed``
    is asked for (``NoteStore`` does when another note holds the same name but for
    case, which macOS and Windows would not tell apart), eight hex digits of the
    title's hash follow: two different titles never share a file (``Café``, ``Cafè``,
    ``Caf`` and ``Caf!`` are four notes).
    """
    title = note_title(title)
    stem = _NOT_A_WORD_CHARACTER.sub("", title.replace(" ", "_")).strip("_-")
    if not stem:
        raise UnsafeNameError(
            f"the note title {title!r} has no letters or digits to make a file name from"
        )
    while len(stem.encode("utf-8")) > MAX_NOTE_STEM_BYTES:
        stem = stem[:-1]
    faithful = stem.replace("_", " ") == title and "_" not in title
    if faithful and not hashed and not windows_device(stem):
        return stem
    digest = hashlib.sha256(title.encode("utf-8")).hexdigest()[:8]
    return f"{stem}-{digest}"
