"""One process owns a vault: a lock file at ``<vault>/.lock`` held for the process's life.

The lock is an ``flock`` on that file, which the system lets go of when the process
ends, however it ends (a SIGKILL too): so whether a live process owns a vault can be
asked without owning it (``owned``, what ``mudsim status`` asks before it believes a
mark such as ``in_flight`` that only a live owner keeps true).
"""

from __future__ import annotations

import os
from pathlib import Path

from filelock import FileLock, Timeout

from engine.errors import VaultLockedError

GRACE = 0.25
"""Seconds a process taking the lock tries again before it says the vault is in use
(``owned`` holds the lock for an instant when nobody else does)."""


class VaultLock:
    def __init__(self, root: Path) -> None:
        self.path = root / ".lock"
        self._lock = FileLock(self.path, timeout=GRACE)

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire(timeout=GRACE, poll_interval=0.01)
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


def owned(root: Path) -> bool | None:
    """Whether a live process holds the vault at ``root`` (this one included): True, False,
    or None where the system cannot say (no ``flock``, a lock file it may not read).
    It takes a shared lock for an instant and gives it back, so it never waits and never
    writes; a process taking the vault at that instant waits for it (``GRACE``)."""
    try:
        import fcntl
    except ImportError:  # Windows: no flock
        return None
    path = root / ".lock"
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False  # never taken
    except OSError:
        return None
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            return None
        fcntl.flock(descriptor, fcntl.LOCK_UN)
        return False
    finally:
        os.close(descriptor)
