"""``mudsim account add``: an account from a shell, its password set at once.

    mudsim account add --vault V Traveler                   # asked twice at a terminal
    echo 'a long secret' | mudsim account add --vault V Wren --role builder
    mudsim account add --vault V Wren --password 'a long secret'

Without ``--password`` the password is one line of standard input when that is not a
terminal, else asked for twice, not echoed (``getpass``). Surrounding spaces are not
part of a password (the login strips them too). It works while the world is served:
the server reads the accounts at each login. The vault's world is read (not taken) to
refuse an agent's name and to say whether the name is a character yet.
"""

from __future__ import annotations

import getpass
import sys
from pathlib import Path
from typing import TextIO

from engine.errors import UsageError, VaultError
from engine.vault.accounts import (
    Account,
    AccountStore,
    hash_password,
    name_problem,
    new_name_problem,
    password_problem,
)
from engine.vault.vault import Vault
from engine.world.model import Character, Role
from engine.world.unicode_names import name_key, normalized


def add_account(vault_dir: Path, name: str, role: Role | None, password: str | None,
                stdin: TextIO | None = None) -> list[str]:  # fmt: skip
    """Add the account; the report's lines."""
    if vault_dir.exists() and not vault_dir.is_dir():
        raise VaultError(f"the vault {vault_dir} is a file, not a folder")
    name = " ".join(normalized(name).split())
    problem = name_problem(name)
    if problem is not None:
        raise UsageError(f"{problem} (got {name!r})")
    store = AccountStore(vault_dir)
    if store.find(name) is not None:
        raise UsageError(f"{vault_dir} already has an account called {name!r}; change its "
                         f"password with: mudsim account passwd --vault {vault_dir} {name}")  # fmt: skip
    vault = Vault(vault_dir)
    character = _character(vault, name) if vault.is_seeded else None
    if character is not None and character.type != "player":
        raise UsageError(f"{character.name} is an agent in {vault_dir}; accounts are for players")
    if character is None:
        problem = new_name_problem(name)
        if problem is not None:
            raise UsageError(f"{problem} (got {name!r})")
    secret = read_password(name, password, stdin or sys.stdin)
    account = store.add(Account(character.name if character else name, role, hash_password(secret)))
    given = f"the {(role or Role.PLAYER).value} role"
    lines = [f"Added the account {account.name} ({given}) to {store.path}."]
    if not vault.is_seeded:
        lines.append(f"{vault_dir} has no world yet: if no character is called {account.name} "
                     "once it has, the first login makes one at the start room.")  # fmt: skip
    elif character is None:
        lines.append(f"Nobody is called {account.name} yet: the first login makes a player "
                     "character of that name at the start room.")  # fmt: skip
    return lines


def _character(vault: Vault, name: str) -> Character | None:
    """The character called ``name``, or else the one whose name is the same name
    (``Zoe`` for ``Zoë``: they would share a folder), or None."""
    world = vault.load_world(warn=lambda _message: None)
    everyone = list(world.characters.values())
    exact = [c for c in everyone if c.name.casefold() == name.casefold()]
    same = exact or [c for c in everyone if name_key(c.name) == name_key(name)]
    return same[0] if len(same) == 1 else None


def read_password(name: str, given: str | None, stdin: TextIO, *, asking: str = "Password",
                  unchanged: str = "nothing was added") -> str:  # fmt: skip
    """The password: ``given`` (``--password``), else asked twice at a terminal, else one
    line of ``stdin``; a ``UsageError`` ending "``unchanged``" if there is none or it is
    too short (``account add`` and ``account passwd`` alike)."""
    if given is not None:
        secret = given.strip()
    elif stdin.isatty():
        secret = getpass.getpass(f"{asking} for {name}: ").strip()
        if getpass.getpass("The same again: ").strip() != secret:
            raise UsageError(f"the two passwords did not match; {unchanged}")
    else:
        line = stdin.readline()
        if not line:
            raise UsageError("no password: give --password, or one line on standard input")
        secret = line.strip()
    problem = password_problem(secret)
    if problem is not None:
        raise UsageError(f"{problem} {unchanged[:1].upper()}{unchanged[1:]}.")
    return secret
