"""Low-level file writing for the vault: atomic replace and front-matter documents.

Every write goes to a temporary file in the same folder (``.<name>.<random>.tmp``), is
fsynced, then renamed over the target, so a reader sees the old file or the new one,
never half of one. The folder is fsynced after the rename, and after creating a folder,
so the new name survives a power cut too. A kill between the temporary file and the
rename leaves the temporary file behind; the vault's owner removes such files when it
opens the vault (``remove_stale_temp_files``).
"""

from __future__ import annotations

import errno
import functools
import json
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import frontmatter
import yaml
from frontmatter.default_handlers import YAMLHandler

from engine.errors import VaultError
from engine.world.safe_yaml import load_yaml


def atomic_write_text(path: Path, text: str, *, private: bool = False) -> None:
    """Replace ``path`` with ``text`` atomically (temp file + fsync + rename + fsync of
    the folder); ``private``: readable by its owner only (0600), as secrets are."""
    make_folder(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        if hasattr(os, "fchmod"):  # mkstemp makes 0600; a vault file is an ordinary file
            os.fchmod(fd, 0o600 if private else file_mode())
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_folder(path.parent)


@functools.cache
def file_mode() -> int:
    """The mode a new file gets from ``open``: 0666 less the process's umask (read once:
    ``os.umask`` can only be read by setting it, so it is set straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def make_folder(folder: Path) -> None:
    """Create ``folder`` and its missing parents, fsyncing the parent of each one made."""
    missing: list[Path] = []
    while not folder.is_dir() and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    for new in reversed(missing):
        try:
            new.mkdir(exist_ok=True)
        except OSError as exc:
            raise VaultError(f"cannot create the folder {new}: {os_reason(exc)}") from exc
        fsync_folder(new.parent)


_CANNOT_FSYNC_FOLDERS = {errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EBADF}
"""What file systems that do not fsync folders answer (they need no folder fsync)."""


def fsync_folder(folder: Path) -> None:
    """Make ``folder``'s entries durable: a file created or renamed in it survives a power
    cut once this returns. A real failure (EIO) is a ``VaultError``: the name may be lost.
    Where folders cannot be opened (Windows: NTFS journals its metadata) or the file
    system does not fsync them, there is nothing to do."""
    if os.name == "nt":
        return
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        raise VaultError(f"cannot open the folder {folder} to fsync it: {os_reason(exc)}") from exc
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in _CANNOT_FSYNC_FOLDERS:
            raise VaultError(f"fsync of {folder} failed: {os_reason(exc)}") from exc
    finally:
        os.close(fd)


_TEMP_NAME = re.compile(r"\..+\.[a-z0-9_]{8}\.tmp", re.DOTALL)
"""``.<name>.<8 random characters>.tmp``: what ``atomic_write_text`` writes first."""


def is_temp_name(name: str) -> bool:
    """Whether ``name`` is an atomic write's temporary file."""
    return _TEMP_NAME.fullmatch(name) is not None


def remove_stale_temp_files(root: Path) -> list[Path]:
    """Remove the temporary files that interrupted atomic writes left under ``root``
    (hidden folders such as ``.obsidian`` or ``.git`` are not ours and are skipped), and
    return them. Only the vault's owner may call this, with the lock held: another
    process's write in progress would lose its temporary file."""
    removed: list[Path] = []
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(name for name in subfolders if not name.startswith("."))
        for name in sorted(names):
            if is_temp_name(name):
                path = Path(folder, name)
                try:
                    path.unlink(missing_ok=True)
                except OSError as exc:
                    raise VaultError(
                        f"cannot remove {path}, left by an interrupted write: {os_reason(exc)}"
                    ) from exc
                removed.append(path)
    return removed


def os_reason(exc: OSError) -> str:
    """What went wrong, in the OS's words (\"No space left on device\")."""
    return exc.strerror or str(exc)


def atomic_write_json(path: Path, data: Any) -> None:
    atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


_FAST_DUMPER: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
"""libyaml's emitter where PyYAML has it (4x faster; the same text, checked on random
strings), else PyYAML's own."""


class _ReadableDumper(_FAST_DUMPER):  # type: ignore[valid-type,misc]
    """Multi-line text as a ``|`` block; whitespace-only strings (stop sequences such as
    a newline) double-quoted so they read as ``"\\n"``."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\x85" in value:  # NEL: a line break to YAML, folded to a space unless escaped
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    if "\n" in value:
        style = '"' if not value.strip() else "|"
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_ReadableDumper.add_representer(str, _represent_str)


def dump_yaml(data: Any) -> str:
    return yaml.dump(data, Dumper=_ReadableDumper, sort_keys=False, allow_unicode=True, width=100)


def dump_front_matter(meta: Mapping[str, Any], body: str) -> str:
    """A markdown document: YAML front matter (keys in the given order), then ``body``."""
    head = dump_yaml(dict(meta))
    return f"---\n{head}---\n{body.rstrip()}\n"


def write_front_matter(path: Path, meta: Mapping[str, Any], body: str, *,
                       private: bool = False) -> None:  # fmt: skip
    atomic_write_text(path, dump_front_matter(meta, body), private=private)


def read_front_matter(path: Path) -> tuple[dict[str, Any], str]:
    """Read a markdown document's front matter and body; raise ``VaultError`` naming it."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise VaultError(f"cannot read {path}: {exc}") from exc
    try:
        meta, body = frontmatter.parse(text, handler=_SAFE_YAML)
    except yaml.YAMLError as exc:
        raise VaultError(f"{path} has invalid front matter: {_first_line(exc)}") from exc
    if not isinstance(meta, dict):
        raise VaultError(f"{path} has front matter that is not a mapping")
    if not all(isinstance(key, str) for key in meta):
        raise VaultError(f"{path} has front matter whose keys are not all words")
    return dict(meta), str(body)


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise VaultError(f"cannot read {path}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise VaultError(f"{path} is not valid JSON (line {exc.lineno}): {exc.msg}") from exc
    except RecursionError as exc:
        raise VaultError(f"{path} is not valid JSON: nested too deep") from exc


class _SafeYAMLHandler(YAMLHandler):
    """Front matter read by the depth-limited pure-Python loader (libyaml's C loader,
    frontmatter's default, crashes the process on deeply nested input)."""

    def load(self, fm: str, **kwargs: object) -> Any:
        return load_yaml(fm)


_SAFE_YAML = _SafeYAMLHandler()


def _first_line(exc: Exception) -> str:
    return " ".join(str(exc).split())
