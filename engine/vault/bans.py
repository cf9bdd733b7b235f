"""``config/bans.md``: names and addresses that may not log in to the served world.

    ---
    bans:
    - target: Mallory                 # a name: its letter case and accents aside
      until: '2026-11-28T16:00:00Z'   # or null: until @unban
      reason: spamming the square
      by: Pat
    - target: 203.0.113.0/24          # an address, or a network of them
      until: null
      reason: ''
      by: Pat
    ---

``@ban`` and ``@unban`` (admins) change it, and ``mudsim ban`` from a shell
(``engine.telnet.bans_cli``); the server reads it at each new connection (an address)
and at each login (a name), parsing it again only when it changed. A ban
whose time is up counts no more and is dropped at the next change. It is written as
``accounts.md`` is: atomically, by a read-change-write under ``logs/bans.lock``.
"""

from __future__ import annotations

import contextlib
import ipaddress
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Final

from filelock import Timeout
from pydantic import BaseModel, ConfigDict

from engine.errors import VaultError
from engine.vault.private_config_file import LOCK_SECONDS, PrivateConfigFile
from engine.world.unicode_names import name_key

_DURATION = re.compile(r"(\d{1,6})([smhdw])")
_UNIT_SECONDS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}
FOREVER_WORDS: Final = frozenset({"forever", "permanent", "permanently"})

_BODY = """\
# Bans

Names and addresses that may not log in to the served world (`@ban`, `@unban`; from
a shell, `mudsim ban list|add|remove`). A `target` is a name (an account's or a
character's, letter case aside) or an address (`203.0.113.7`) or a network
(`203.0.113.0/24`); `until` is when the ban ends (UTC), or `null` for until it is lifted.
"""


def parse_duration(word: str) -> timedelta | None:
    """``30m``, ``2h``, ``7d``, ``1w``, ``90s`` as a time span; None if ``word`` is not one."""
    found = _DURATION.fullmatch(word.strip().lower())
    if found is None or int(found.group(1)) == 0:
        return None
    return timedelta(seconds=int(found.group(1)) * _UNIT_SECONDS[found.group(2)])


def address_target(target: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    """``target`` as a network (one address is a network of one), or None: it is a name."""
    try:
        return ipaddress.ip_network(target.strip(), strict=False)
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class Ban:
    target: str
    until: datetime | None
    """When it ends (UTC); None: until it is lifted."""
    reason: str = ""
    by: str = ""

    @property
    def network(self) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
        return address_target(self.target)

    def active(self, now: datetime) -> bool:
        return self.until is None or now < self.until

    def covers_name(self, name: str) -> bool:
        """Whether this bans the name ``name``: the same name (``name_key``: letter case,
        width and Latin accents aside, so ``Ｍａｌｌöｒｙ`` is ``Mallory``)."""
        return self.network is None and name_key(self.target) == name_key(name)

    def covers_address(self, address: str) -> bool:
        network = self.network
        if network is None:
            return False
        try:
            return ipaddress.ip_address(address) in network
        except ValueError:
            return False

    def describe(self) -> str:
        """``Mallory, until 2026-11-28 16:00 UTC (spamming)``."""
        until = "until lifted" if self.until is None else (
            f"until {self.until.strftime('%Y-%m-%d %H:%M')} UTC")  # fmt: skip
        return f"{self.target}, {until}" + (f" ({self.reason})" if self.reason else "")


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    target: str
    until: datetime | None = None
    reason: str = ""
    by: str = ""


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")

    bans: list[_Entry] = []


class BanStore:
    """The bans of the vault at ``root`` (``config/bans.md``)."""

    def __init__(self, root: Path) -> None:
        self._file = PrivateConfigFile(root, "bans", _File, _bans, _BODY)
        self.path = self._file.path

    def load(self) -> list[Ban]:
        """Every ban in the file, the lapsed ones too (none when there is no file)."""
        return self._file.load()

    def active(self, now: datetime | None = None) -> list[Ban]:
        now = now or datetime.now(UTC)
        return [ban for ban in self.load() if ban.active(now)]

    def name_ban(self, name: str, now: datetime | None = None) -> Ban | None:
        return next((b for b in self.active(now) if b.covers_name(name)), None)

    def address_ban(self, address: str, now: datetime | None = None) -> Ban | None:
        return next((b for b in self.active(now) if b.covers_address(address)), None)

    def add(self, ban: Ban, now: datetime | None = None) -> None:
        """Ban ``ban.target`` (a ban of the same target is replaced; those lapsed by
        ``now`` are dropped)."""
        with self._locked():
            kept = [b for b in self.active(now) if b.target.casefold() != ban.target.casefold()]
            self._write([*kept, ban])

    def remove(self, target: str, now: datetime | None = None) -> Ban | None:
        """Lift the ban of ``target`` (the one removed, or None: there was none)."""
        with self._locked():
            bans = self.active(now)
            found = next((b for b in bans if b.target.casefold() == target.strip().casefold()),
                         None)  # fmt: skip
            if found is not None:
                self._write([b for b in bans if b is not found])
            return found

    def _write(self, bans: list[Ban]) -> None:
        entries = [{"target": b.target,
                    "until": b.until.strftime("%Y-%m-%dT%H:%M:%SZ") if b.until else None,
                    "reason": b.reason, "by": b.by} for b in bans]  # fmt: skip
        self._file.write({"bans": entries})

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold ``logs/bans.lock`` while a change is read, made and written."""
        try:
            with self._file.locked():
                yield
        except Timeout as exc:
            raise VaultError(
                f"{self.path} stayed locked by another process for {LOCK_SECONDS} s"
            ) from exc
        except OSError as exc:
            raise VaultError(f"cannot lock {self.path}: {exc.strerror or exc}") from exc


def _bans(parsed: _File) -> list[Ban]:
    return [Ban(e.target, _utc(e.until), e.reason, e.by) for e in parsed.bans]


def _utc(when: datetime | None) -> datetime | None:
    if when is None:
        return None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
