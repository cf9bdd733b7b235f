"""Character folders an older mudsim named, moved to their names of today.

Before names could hold letters beyond ASCII, a character's folder kept only the ASCII
letters, digits, ``_`` and ``-`` of its name (``Zoë`` -> ``agents/Zo``); today its letters
are spelled in ASCII or Punycode (``agents/Zoe``; ``engine.world.folder_names``). Whoever
takes the vault's lock (``Vault.lock``) moves such a folder to its new name, then writes
the new name into ``world/world.yaml``'s list of folders. A kill between the two steps
is finished by the next lock: a folder already moved is known by the name in its
``agent.md``. A folder whose new name is taken (an older vault could hold both ``Zoe``
and ``Zoë``) stays where it is, and loading the world says so. ASCII names never moved.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import yaml

from engine.errors import UnsafeNameError, VaultError
from engine.vault.files import atomic_write_text, dump_yaml, fsync_folder, read_front_matter
from engine.world.folder_names import legacy_folder_name, safe_name
from engine.world.safe_yaml import load_yaml


def move_legacy_folders(root: Path) -> dict[str, str]:
    """Move the folders under ``root/agents`` named by the older rule to their names and
    list those in ``world/world.yaml``; the old name -> the new one, for each character
    whose folder changed name (now or by an earlier lock). Only the lock's owner calls it."""
    agents = root / "agents"
    renamed: dict[str, str] = {}
    moved = False
    for agent_file in sorted(agents.glob("*/agent.md")) if agents.is_dir() else []:
        names = _names(agent_file)
        if names is None:
            continue
        legacy, new = names
        here = agent_file.parent.name
        if here == legacy and not (agents / new).exists():
            try:
                os.rename(agents / legacy, agents / new)
            except OSError as exc:
                raise VaultError(f"cannot move {agents / legacy} to {agents / new}: {exc}") from exc
            moved, here = True, new
        if here == new:
            renamed[legacy] = new
    if moved:
        fsync_folder(agents)
    _list_new_names(root, renamed)
    return renamed


def _names(agent_file: Path) -> tuple[str, str] | None:
    """(the old folder name, the new one) of the character ``agent_file`` describes, or
    None when they are one (or the file is unreadable: loading it says why)."""
    try:
        raw = agent_file.read_bytes()
    except OSError:
        return None
    if raw.isascii() and b"\\" not in raw:  # an ASCII name (not even an escaped letter)
        return None
    try:
        name = read_front_matter(agent_file)[0].get("name")
        if not isinstance(name, str):
            return None
        new = safe_name(name, what="character name")
    except (VaultError, UnsafeNameError):
        return None
    legacy = legacy_folder_name(name)
    return None if legacy is None or legacy == new else (legacy, new)


def _list_new_names(root: Path, renamed: dict[str, str]) -> None:
    """Write the new names into ``world/world.yaml``'s ``characters`` in place of old
    ones whose folder is gone."""
    path = root / "world" / "world.yaml"
    if not renamed or not path.is_file():
        return
    try:
        text = path.read_text(encoding="utf-8")
        data = load_yaml(text)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):  # loading the world says why
        return
    folders = data.get("characters") if isinstance(data, dict) else None
    if not isinstance(folders, list):
        return
    agents = root / "agents"
    listed = [
        renamed[f] if isinstance(f, str) and f in renamed and not (agents / f).exists() else f
        for f in folders
    ]
    if listed == folders:
        return
    header = "".join(itertools.takewhile(lambda line: line.startswith("#"),
                                         text.splitlines(keepends=True)))  # fmt: skip
    atomic_write_text(path, header + dump_yaml({**data, "characters": listed}))
