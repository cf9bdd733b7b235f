"""Low-level file writing for the vault: atomic replace and front-matter documents.

Every write goes to a temporary file in the same folder, is fsynced, then renamed over
the target, so a reader sees the old file or the new one, never half of one.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import frontmatter
import yaml

from engine.errors import VaultError


def atomic_write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically (temp file + fsync + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_json(path: Path, data: Any) -> None:
    atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


class _ReadableDumper(yaml.SafeDumper):
    """Multi-line text as a ``|`` block; whitespace-only strings (stop sequences such as
    a newline) double-quoted so they read as ``"\\n"``."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
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


def write_front_matter(path: Path, meta: Mapping[str, Any], body: str) -> None:
    atomic_write_text(path, dump_front_matter(meta, body))


def read_front_matter(path: Path) -> tuple[dict[str, Any], str]:
    """Read a markdown document's front matter and body; raise ``VaultError`` naming it."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise VaultError(f"cannot read {path}: {exc}") from exc
    try:
        post = frontmatter.loads(text)
    except yaml.YAMLError as exc:
        raise VaultError(f"{path} has invalid front matter: {_first_line(exc)}") from exc
    if not isinstance(post.metadata, dict):
        raise VaultError(f"{path} has front matter that is not a mapping")
    return dict(post.metadata), str(post.content)


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise VaultError(f"cannot read {path}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise VaultError(f"{path} is not valid JSON (line {exc.lineno}): {exc.msg}") from exc


def _first_line(exc: Exception) -> str:
    return " ".join(str(exc).split())
