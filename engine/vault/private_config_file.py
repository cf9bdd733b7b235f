"""A private ``config/<name>.md`` file of the vault: a list kept in its front matter,
readable by its owner only (0600), changed under ``logs/<name>.lock``.

``config/accounts.md`` and ``config/bans.md`` are such files. The server reads them at
every login or connection, so the list is parsed again only when the file changed (its
modification time, size or inode); a change is a read-change-write under the lock
(``locked``), written atomically (temporary file, fsync, rename) and 0600. The lock
folder is outside the vault's state. Each store keeps its own words for a lock that
cannot be taken: ``locked`` raises the ``OSError`` or ``filelock.Timeout`` as it comes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final, Generic, TypeVar

from filelock import FileLock
from pydantic import BaseModel, ValidationError

from engine.errors import VaultError
from engine.vault.files import os_reason, read_front_matter, write_front_matter

LOCK_SECONDS: Final = 10
"""How long a change waits for another process's change before it gives up."""

Model = TypeVar("Model", bound=BaseModel)
Item = TypeVar("Item")


class PrivateConfigFile(Generic[Model, Item]):
    """``config/<name>.md`` of the vault at ``root``: its front matter validated as
    ``model``, then made a list by ``items`` (which may raise ``VaultError``); ``body`` is
    the text written under the front matter."""

    def __init__(self, root: Path, name: str, model: type[Model],
                 items: Callable[[Model], list[Item]], body: str) -> None:  # fmt: skip
        self.path = root / "config" / f"{name}.md"
        self.lock_path = root / "logs" / f"{name}.lock"
        self._model = model
        self._items = items
        self._body = body
        self._parsed: tuple[tuple[int, int, int], list[Item]] | None = None
        """The file as last parsed, by its (modification time, size, inode)."""

    def load(self) -> list[Item]:
        """The list, in the file's order (empty when there is no file), parsed again only
        when the file changed."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise VaultError(f"cannot read {self.path}: {os_reason(exc)}") from exc
        key = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        if self._parsed is None or self._parsed[0] != key:
            self._parsed = (key, self._parse())
        return list(self._parsed[1])

    def _parse(self) -> list[Item]:
        meta, _body = read_front_matter(self.path)
        try:
            parsed = self._model.model_validate(meta)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(step) for step in first["loc"]) or "(top level)"
            raise VaultError(f"{self.path}, {field}: {first['msg']}") from exc
        return self._items(parsed)

    def write(self, meta: Mapping[str, Any]) -> None:
        """Replace the file with ``meta`` as its front matter (atomically, 0600)."""
        try:
            write_front_matter(self.path, meta, self._body, private=True)
        except OSError as exc:
            raise VaultError(f"cannot write {self.path}: {os_reason(exc)}") from exc

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold ``logs/<name>.lock`` (its folder made if missing) while a change is read,
        made and written; ``OSError`` or ``filelock.Timeout`` (after ``LOCK_SECONDS``)
        if it cannot be had."""
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(self.lock_path, timeout=LOCK_SECONDS):
            yield
