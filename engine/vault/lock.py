"""One process owns a vault: a lock file at ``<vault>/.lock`` held for the process's life."""

from __future__ import annotations

from pathlib import Path

from filelock import FileLock, Timeout

from engine.errors import VaultLockedError


class VaultLock:
    def __init__(self, root: Path) -> None:
        self.path = root / ".lock"
        self._lock = FileLock(self.path, timeout=0)

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire()
        except Timeout as exc:
            raise VaultLockedError(
                f"the vault {self.path.parent} is in use by another mudsim process "
                f"(lock file {self.path}); stop that one first, or use another --vault"
            ) from exc

    def release(self) -> None:
        self._lock.release()

    @property
    def held(self) -> bool:
        return self._lock.is_locked
