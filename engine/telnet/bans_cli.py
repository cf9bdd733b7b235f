"""``mudsim ban``: the served world's bans from a shell, for an admin who locked
themselves out (a ban of their own network) or is not logged in.

    mudsim ban list --vault V
    mudsim ban add --vault V Mallory --for 2h --reason "spamming the square"
    mudsim ban add --vault V 203.0.113.0/24
    mudsim ban remove --vault V 203.0.113.0/24

The same file and the same refusals as ``@ban`` and ``@unban`` in the world
(``engine.commands.moderation``): a name that is no account and no character is refused
unless ``--force``; a network wider than a /8 (a /104) is refused. It works while the
world is served: the bans are ``config/bans.md``, changed under its own lock
(``logs/bans.lock``), not the vault's, and the server reads them at each connection and
login, so a ban lifted here lets the next connection in. Whoever is connected stays so
(a ban from here throws nobody out: ``@boot`` does). Each change is logged, as ``@ban``'s
are, in ``logs/telnet.log`` and ``logs/mudsim.log``, by the shell's user.
"""

from __future__ import annotations

import getpass
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from engine.errors import UsageError, VaultError
from engine.vault.accounts import AccountStore
from engine.vault.bans import FOREVER_WORDS, Ban, BanStore, address_target, parse_duration
from engine.vault.run_log import attach_run_log, detach_run_log
from engine.vault.vault import Vault

MAX_ADDRESSES = 2**24
"""The widest network a ban may name (a /8, or a /104), as for ``@ban``."""

log = logging.getLogger("mudsim.telnet")


def ban_length(word: str) -> timedelta | None:
    """``--for``: ``30m``, ``2h``, ``7d``, ``1w`` or ``forever`` (None); ``ValueError``
    for anything else."""
    if word.strip().lower() in FOREVER_WORDS:
        return None
    length = parse_duration(word)
    if length is None:
        raise ValueError(f"expected a length such as 30m, 2h, 7d, 1w or forever, got {word!r}")
    return length


def list_bans(vault_dir: Path, now: datetime | None = None) -> list[str]:
    """The bans in force, a line each."""
    bans = BanStore(_vault(vault_dir)).active(now or datetime.now(UTC))
    if not bans:
        return ["Nobody is banned."]
    return [f"Bans ({len(bans)}):", *(f"- {ban.describe()}" for ban in bans)]


def add_ban(vault_dir: Path, target: str, length: timedelta | None, reason: str = "", *,
            force: bool = False, now: datetime | None = None) -> list[str]:  # fmt: skip
    """Ban ``target`` (a name, an address or a network) for ``length`` (None: until
    lifted); the report's lines."""
    root = _vault(vault_dir)
    target = " ".join(target.split())
    if not target:
        raise UsageError("ban whom? Give a name, an address or a network (203.0.113.0/24)")
    network = address_target(target)
    if network is not None and network.num_addresses > MAX_ADDRESSES:
        raise UsageError(f"{target} is too wide a network to ban (at most a /8 or a /104); "
                         "nothing was banned")  # fmt: skip
    if network is None and not force and not _known(root, target):
        raise UsageError(f"no account or character is called {target}: nothing was banned "
                         f"(check the name, or add --force to ban it anyway)")  # fmt: skip
    now = now or datetime.now(UTC)
    made = Ban(target if network is None else str(network), None if length is None else now + length,
               " ".join(reason.split()), f"{shell_user()} (mudsim ban)")  # fmt: skip
    with _unchanged_on_error():
        BanStore(root).add(made, now)
    with logged(root):
        log.warning("%s (mudsim ban, from a shell) banned %s", shell_user(), made.describe())
    at = "login" if network is None else "connection"
    return [f"Banned: {made.describe()}.",
            f"A served world keeps it out from the next {at} on; whoever is connected now "
            "stays (@boot, in the world, closes a connection)."]  # fmt: skip


def remove_ban(vault_dir: Path, target: str, now: datetime | None = None) -> list[str]:
    """Lift the ban of ``target``; the report's lines."""
    root = _vault(vault_dir)
    network = address_target(target)
    with _unchanged_on_error():
        lifted = BanStore(root).remove(str(network) if network is not None else target,
                                       now or datetime.now(UTC))  # fmt: skip
    if lifted is None:
        raise UsageError(f"{target.strip()} is not banned in {vault_dir} (mudsim ban list "
                         f"--vault {vault_dir} lists the bans)")  # fmt: skip
    with logged(root):
        log.warning("%s (mudsim ban, from a shell) lifted the ban of %s", shell_user(),
                    lifted.describe())  # fmt: skip
    return [f"The ban of {lifted.target} is lifted; a served world lets it in from its next "
            "connection or login."]  # fmt: skip


def _vault(vault_dir: Path) -> Path:
    """The vault's folder, which must be there: bans are not written into a folder
    mudsim did not make (a mistyped --vault)."""
    if not vault_dir.is_dir():
        raise VaultError(f"{vault_dir} is no vault (no such folder)")
    Vault(vault_dir).refuse_foreign()
    return vault_dir


@contextmanager
def _unchanged_on_error() -> Iterator[None]:
    """A bans file that cannot be read, locked or written: one line, saying so."""
    try:
        yield
    except VaultError as exc:
        raise VaultError(f"{exc}; nothing was changed") from exc


def _known(root: Path, name: str) -> bool:
    """Whether ``name`` is an account's or a character's (letter case aside)."""
    wanted = name.casefold()
    names = [account.name for account in AccountStore(root).load()]
    vault = Vault(root)
    if vault.is_seeded:
        world = vault.load_world(warn=lambda _message: None)
        names += [character.name for character in world.characters.values()]
    return any(known.casefold() == wanted for known in names)


def shell_user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name anywhere (a container with no passwd entry)
        return "a shell user"


@contextmanager
def logged(root: Path) -> Iterator[None]:
    """The ``mudsim.telnet`` log to ``logs/telnet.log`` and ``logs/mudsim.log`` while the
    block runs (appended to: a served world writes there too)."""
    from engine.telnet.server import attach_connection_log, detach_connection_log

    handlers = attach_connection_log(root)
    run_log = attach_run_log(root)
    try:
        yield
    finally:
        detach_run_log(run_log)
        detach_connection_log(handlers)
