"""``mudsim account passwd``: an account's password changed from a shell.

    mudsim account passwd --vault V Traveler                # asked twice at a terminal
    echo 'a new long secret' | mudsim account passwd --vault V Traveler
    mudsim account passwd --vault V Traveler --password 'a new long secret'

The password is read as ``account add`` reads it (``--password``; else one line of
standard input when that is not a terminal; else asked for twice, not echoed), with the
same rule (at least 8 characters, surrounding spaces not part of it). It works while the
world is served: the accounts file is changed under its own lock (``logs/accounts.lock``)
and the server reads it at each login, so the next login asks for the new password;
whoever is connected stays so. The change is logged (``logs/telnet.log`` and
``logs/mudsim.log``) with the shell's user, never with the password. A vault folder
that is not there is refused, never made.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import TextIO

from engine.errors import MudsimError, UsageError, VaultError
from engine.telnet.accounts_cli import read_password
from engine.telnet.bans_cli import logged, shell_user
from engine.vault.accounts import AccountStore, hash_password

UNCHANGED = "nothing was changed"

log = logging.getLogger("mudsim.telnet")


def change_password(vault_dir: Path, name: str, password: str | None,
                    stdin: TextIO | None = None) -> list[str]:  # fmt: skip
    """Set the password of the account called ``name``; the report's lines."""
    if not vault_dir.is_dir():
        raise VaultError(f"{vault_dir} is no vault (no such folder)")
    store = AccountStore(vault_dir)
    account = store.find(" ".join(name.split()))
    if account is None:
        raise UsageError(f"{vault_dir} has no account called {name!r} (mudsim account add "
                         "makes one)")  # fmt: skip
    secret = read_password(
        account.name,
        password,
        stdin or sys.stdin,
        asking="New password",
        unchanged=f"the password is as it was: {UNCHANGED}",
    )
    try:
        store.set_password(account.name, hash_password(secret))
    except MudsimError as exc:
        raise VaultError(f"{exc}; {UNCHANGED}") from exc
    with logged(vault_dir):
        log.warning("%s (mudsim account passwd, from a shell) changed the password of %s",
                    shell_user(), account.name)  # fmt: skip
    return [f"Changed the password of {account.name} in {store.path}.",
            "A served world asks for it from the next login; whoever is connected now "
            "stays so."]  # fmt: skip
