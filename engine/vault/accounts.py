"""``config/accounts.md``: who may log in over telnet (``mudsim serve``), and how.

Each account names a player character, may give it a role, and holds its password's
scrypt hash, never the password::

    ---
    accounts:
    - name: Traveler
      role: admin
      password: scrypt$16384$8$1$<salt, base64>$<hash, base64>
    - name: Wren
      role: null          # a player: roles live in accounts
      password: ''        # pending: the next login as Wren chooses it (asked twice)
    ---

A hash is ``hashlib.scrypt`` (n=2**14, r=8, p=1, 32 bytes) with a 16-byte random salt of
its own; checking one derives the key again and compares in constant time
(``hmac.compare_digest``). The parameters are read back from the hash, within bounds,
so a hand-edited file cannot make a login cost gigabytes.

The file is written like every vault config file (temporary file, fsync, rename), but
readable by its owner only (0600), by a
read-change-write under ``logs/accounts.lock`` (outside the vault's state), so the
running server (``@account``, a first login choosing its password) and ``mudsim account
add`` from a shell never lose each other's change. The server reads the file at each
login: an account added from the shell counts at once.

Names are hostile input: ``new_name_problem`` says what is wrong with one (length,
characters, a reserved word, letters that would let it pass for another name) in one
sentence. A name is taken in NFKC (``Ｗｒｅｎ`` typed is ``Wren``) and kept so; an
account answers to its name in any letter case, and the store refuses a second account
for a name that is the same one (``engine.world.unicode_names.name_key``: ``Zoe`` when
``Zoë`` has one).
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import hmac
import re
import secrets
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from filelock import Timeout
from pydantic import BaseModel, ConfigDict

from engine.errors import MudsimError, UnsafeNameError, VaultError
from engine.vault.private_config_file import LOCK_SECONDS, PrivateConfigFile
from engine.world.folder_names import PUNYCODE_PREFIX, safe_name
from engine.world.model import Role
from engine.world.unicode_names import name_key, normalized, script, script_problem

SCRYPT_N: Final = 2**14
SCRYPT_R: Final = 8
SCRYPT_P: Final = 1
SALT_BYTES: Final = 16
KEY_BYTES: Final = 32
MAX_SCRYPT_N: Final = 2**20
"""Bounds on what a stored hash may ask for (memory is 128 * n * r bytes)."""
MAX_SCRYPT_R: Final = 32
MAX_SCRYPT_P: Final = 16

MIN_PASSWORD: Final = 8
MAX_PASSWORD: Final = 128
MAX_NAME: Final = 40
"""The longest account name (an existing character's name with spaces may be long)."""

MIN_NEW_NAME: Final = 2
MAX_NEW_NAME: Final = 24
_NEW_NAME_TAIL = re.compile(r"[0-9_-]")
RESERVED_NAMES: Final = frozenset(
    {"me", "here", "quit", "exit", "new", "all", "everyone", "someone", "nobody", "you"}
)
"""Words commands read as something else (``examine me``) or the login reads as a wish."""

_BODY = """\
# Accounts

Who may log in over telnet (`mudsim serve`, `mudsim run --telnet`). Each account names
a player character (a new name gets a new player character at the start room on its
first login), gives it its `role` at each login (`player`, `builder` or `admin`; `null`
is `player`: roles live here, not in the character), and holds its password's scrypt
hash, never the password. An empty `password` is pending: the next login as that name chooses it.

Manage accounts with `mudsim account add --vault DIR NAME [--role R] [--password PW]`
from a shell, or in the world (admins) with `@account add|remove|password|list`.
"""


class AccountError(MudsimError):
    """An account that should exist does not, or one that should not does."""


@dataclass(frozen=True, slots=True)
class Account:
    name: str
    role: Role | None = None
    """The role its character acts with, given at each login (None: ``player``)."""
    password: str = ""
    """The scrypt hash (``scrypt$n$r$p$salt$hash``); empty: chosen at the next login."""

    @property
    def pending(self) -> bool:
        """No password yet: the next login as this name chooses one."""
        return not self.password


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    role: Role | None = None
    password: str = ""


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")

    accounts: list[_Entry] = []


# -- passwords (pure) ------------------------------------------------------------------
def hash_password(password: str, salt: bytes | None = None) -> str:
    """The scrypt hash of ``password`` with a fresh random salt (or ``salt``)."""
    salt = secrets.token_bytes(SALT_BYTES) if salt is None else salt
    key = _derive(password, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)
    return "$".join(("scrypt", str(SCRYPT_N), str(SCRYPT_R), str(SCRYPT_P), _b64(salt), _b64(key)))


def verify_password(password: str, stored: str) -> bool:
    """Whether ``password`` is the one ``stored`` hashes (constant-time compare). A hash
    that is malformed or asks for more than the bounds allow never matches."""
    parts = stored.split("$")
    if len(parts) != 6 or parts[0] != "scrypt":
        return False
    try:
        n, r, p = int(parts[1]), int(parts[2]), int(parts[3])
        salt = base64.b64decode(parts[4], validate=True)
        expected = base64.b64decode(parts[5], validate=True)
    except ValueError:
        return False
    if not (1 < n <= MAX_SCRYPT_N and n & (n - 1) == 0 and 0 < r <= MAX_SCRYPT_R
            and 0 < p <= MAX_SCRYPT_P and salt and expected):  # fmt: skip
        return False
    try:
        key = _derive(password, salt, n, r, p, len(expected))
    except ValueError:  # OpenSSL refused the parameters
        return False
    return hmac.compare_digest(key, expected)


@functools.cache
def dummy_hash() -> str:
    """What a login that names nobody is checked against, so a wrong name costs what a
    wrong password costs (the time does not tell which names exist)."""
    return hash_password("not a password anyone has", salt=b"\0" * SALT_BYTES)


def _derive(password: str, salt: bytes, n: int, r: int, p: int, length: int = KEY_BYTES) -> bytes:
    memory = 128 * n * r * p + 2**20
    return hashlib.scrypt(password.encode("utf-8"), salt=salt, n=n, r=r, p=p,
                          maxmem=memory, dklen=length)  # fmt: skip


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def password_problem(password: str) -> str | None:
    """Why ``password`` cannot be one (one sentence), or None."""
    if len(password) < MIN_PASSWORD:
        return f"A password needs at least {MIN_PASSWORD} characters."
    if len(password) > MAX_PASSWORD:
        return f"A password may have at most {MAX_PASSWORD} characters."
    if any(not ch.isprintable() for ch in password):
        return "A password may hold only printable characters."
    return None


# -- names (pure) ----------------------------------------------------------------------
def new_name_problem(name: str) -> str | None:
    """Why ``name`` (taken in NFKC) cannot be a new character's name (one sentence), or
    None: 2-24 characters, a letter first (of any script: ``Zoë``, ``李``), then
    letters, digits, ``-`` or ``_``; letters of one script, not only letters that look
    Latin in another (``engine.world.unicode_names.script_problem``); not a reserved
    word, a device name on Windows or a name its folder would not tell apart."""
    name = normalized(name)
    if not _shaped_as_a_name(name):
        return (
            f"A new name has {MIN_NEW_NAME} to {MAX_NEW_NAME} characters (or one Chinese, "
            "Japanese or Korean one): a letter first, then letters, digits, '-' or '_' "
            "(no spaces)."
        )
    if name_key(name) in RESERVED_NAMES:
        return f"'{name}' is a word the world reads as something else; pick another name."
    if name.casefold().startswith(PUNYCODE_PREFIX):
        return f"'{name}' begins as the folders of names in other scripts do; pick another name."
    problem = script_problem(name)
    if problem is not None:
        return problem
    try:
        safe_name(name, what="name")
    except UnsafeNameError:
        return f"'{name}' is a device name on Windows and cannot name a folder; pick another name."
    return None


def _shaped_as_a_name(name: str) -> bool:
    """2-24 characters (one will do when it is a Han character, kana or Hangul: a whole
    syllable): a letter first, then letters (with their marks: NFKC leaves some apart,
    as in Hindi), ASCII digits, ``-`` or ``_``."""
    shortest = 1 if script(name[:1]) == "CJK" else MIN_NEW_NAME
    if not (shortest <= len(name) <= MAX_NEW_NAME and unicodedata.category(name[0])[0] == "L"):
        return False
    return all(unicodedata.category(ch)[0] in "LM" or _NEW_NAME_TAIL.fullmatch(ch) for ch in name)


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot even be looked up as an account (too long, not printable)."""
    name = normalized(name)
    if not name.strip():
        return "Type a name."
    if len(name) > MAX_NAME:
        return f"A name has at most {MAX_NAME} characters."
    if any(not ch.isprintable() for ch in name):
        return "A name holds only printable characters."
    return None


def _folded(name: str) -> str:
    return normalized(name).casefold()


def _account_named(accounts: list[Account], name: str) -> Account | None:
    """The account called ``name`` (NFKC, letter case aside), else the one whose name is
    the same name (``name_key``), else None."""
    wanted = _folded(name)
    found = next((a for a in accounts if _folded(a.name) == wanted), None)
    if found is not None:
        return found
    same = [a for a in accounts if name_key(a.name) == name_key(name)]
    return same[0] if len(same) == 1 else None


# -- the file --------------------------------------------------------------------------
class AccountStore:
    """The accounts of the vault at ``root`` (``config/accounts.md``)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._file = PrivateConfigFile(root, "accounts", _File, self._accounts, _BODY)
        self.path = self._file.path

    def load(self) -> list[Account]:
        """Every account, in the file's order (none when there is no file). The file is
        parsed again only when it changed (a login reads it; a vault may hold many)."""
        return self._file.load()

    def _accounts(self, parsed: _File) -> list[Account]:
        accounts = [Account(e.name, e.role, e.password) for e in parsed.accounts]
        seen: set[str] = set()
        for account in accounts:
            if _folded(account.name) in seen:
                raise VaultError(f"{self.path} names the account {account.name!r} twice")
            seen.add(_folded(account.name))
        return accounts

    def find(self, name: str) -> Account | None:
        """The account called ``name`` (NFKC, letter case aside), or else the one account
        whose name is the same name (``Zoe`` finds ``Zoë``), or None."""
        return _account_named(self.load(), name)

    def add(self, account: Account) -> Account:
        """Add ``account``, its name in NFKC (the account made); ``AccountError`` if that
        name, or the same name otherwise spelled (``Zoe`` for ``Zoë``), has one already."""
        account = Account(normalized(account.name), account.role, account.password)
        with self._locked():
            accounts = self.load()
            same = next((a for a in accounts if name_key(a.name) == name_key(account.name)), None)
            if same is not None:
                called = "" if same.name == account.name else f" ({same.name})"
                raise AccountError(f"there is already an account called {account.name!r}{called}")
            self._write([*accounts, account])
        return account

    def remove(self, name: str) -> Account:
        """Remove the account called ``name``; the account it was."""
        with self._locked():
            accounts = self.load()
            found = self._named(accounts, name)
            self._write([a for a in accounts if a is not found])
        return found

    def set_password(self, name: str, password_hash: str, *, only_if_pending: bool = False
                     ) -> Account:  # fmt: skip
        """Store ``password_hash`` (empty: pending) for ``name``; with ``only_if_pending``,
        ``AccountError`` if a password was set meanwhile (two first logins at once)."""
        with self._locked():
            accounts = self.load()
            found = self._named(accounts, name)
            if only_if_pending and not found.pending:
                raise AccountError(f"{found.name} has chosen a password meanwhile")
            changed = Account(found.name, found.role, password_hash)
            self._write([changed if a is found else a for a in accounts])
        return changed

    def _named(self, accounts: list[Account], name: str) -> Account:
        found = _account_named(accounts, name)
        if found is None:
            raise AccountError(f"there is no account called {name!r}")
        return found

    def _write(self, accounts: list[Account]) -> None:
        entries = [{"name": a.name, "role": a.role.value if a.role else None,
                    "password": a.password} for a in accounts]  # fmt: skip
        self._file.write({"accounts": entries})

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold ``logs/accounts.lock`` while a change is read, made and written."""
        lock_path = self._file.lock_path
        try:
            lock_path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise VaultError(f"cannot create {lock_path.parent}: {exc}") from exc
        with contextlib.ExitStack() as held:
            try:
                held.enter_context(self._file.locked())
            except Timeout as exc:
                raise VaultError(
                    f"{self.path} stayed locked by another process for {LOCK_SECONDS} s "
                    f"({lock_path})"
                ) from exc
            yield
