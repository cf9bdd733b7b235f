"""How the world is served: ``config/telnet.md`` (limits) and the command line's choices.

``config/telnet.md`` is written with its defaults the first time ``mudsim serve`` serves
a vault (until then, and for ``run --telnet``, the defaults apply); like every vault
config file its front matter holds the settings and unknown keys are errors. The longest line a client may send is the vault's ``max_command_chars``
(``config/limits.md``, 4,000 by default), the same limit every command has.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from engine.errors import VaultError
from engine.vault.files import read_front_matter, write_front_matter
from engine.world.model import Role

DEFAULT_PORT: Final = 4000
DEFAULT_BIND: Final = "127.0.0.1"

_BODY = """\
# Telnet

Limits for `mudsim serve` (and `mudsim run --telnet`), which MUD clients connect to.

- `max_connections` (50): players logged in at once (one more for an admin); one more
  is told the world is full and closed.
- `max_logging_in` (a quarter of `max_connections`, at least 2) and
  `max_logging_in_per_address` (3): connections that have not logged in yet, in all and
  from one address. When every place is taken, the connection that has waited longest,
  from the address holding the most (then with the most failed logins), is closed to
  make room: connections that never log in cannot keep a player out.
- `max_per_address` (5): connections at once from one address; one more is told why
  and closed.
- `new_connections_per_minute` (20): new connections one address may open a minute.
- `login_free_failures` (5), `login_delay_s` (2) and `login_max_delay_s` (60): after
  this many failed logins from one address, or for one name, its next password check
  starts `login_delay_s` seconds after the last one ended, doubling with each failure
  (at most `login_max_delay_s`), however many connections ask; right or wrong, the
  answer comes when the check has run. Addresses take turns, and a check whose
  connection has gone is never run. A success resets nothing.
- `idle_minutes` (30): a connection that sends nothing for this long is closed (its
  character stays where it is, asleep).
- `commands_per_s` (5): commands a connection runs a second (a burst of as many at
  once); faster lines wait their turn, up to `queued_lines` (20), past which they are
  dropped, with one notice.
- `model_call_role` (builder): the role a player needs to run commands that spend
  model calls (`@consolidate`, `dream`, `@compact-memories`); below it, a player may run
  `model_calls_per_hour` (0) of them an hour.
- `login_seconds` (30, at most 60: a larger value is read as 60): time to finish
  logging in; a connection that has not logged in by then is closed.
- `max_output_kb` (512): text waiting to reach a client that reads too slowly; past it
  the connection is closed.

The longest line a client may send is `max_command_chars` in `limits.md`.
"""


LOGIN_SECONDS_MOST: Final = 60.0
"""The longest ``login_seconds`` may be (issue 45: slow pre-login connections hold slots)."""


class TelnetConfig(BaseModel):
    """``config/telnet.md``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_connections: int = Field(default=50, ge=1)
    """Players logged in at once, telnet's and the web page's (one more for an admin)."""
    max_logging_in: int | None = Field(default=None, ge=1)
    """Connections that have not logged in yet, at once (None: a quarter of
    ``max_connections``, at least 2)."""
    max_logging_in_per_address: int = Field(default=3, ge=1)
    """Connections from one address that have not logged in yet, at once."""
    max_per_address: int = Field(default=5, ge=1)
    """Connections at once from one address."""
    new_connections_per_minute: float = Field(default=20.0, gt=0, allow_inf_nan=False)
    """New connections one address may open a minute."""
    login_free_failures: int = Field(default=5, ge=0)
    """Failed logins from one address (or against one account) before answers slow down."""
    login_delay_s: float = Field(default=2.0, ge=0, allow_inf_nan=False)
    """Seconds from one check to the next past the free failures, doubling (0: no wait,
    so guesses are not bounded)."""
    login_max_delay_s: float = Field(default=60.0, gt=0, allow_inf_nan=False)
    """The longest the wait between two checks grows."""
    idle_minutes: float = Field(default=30.0, gt=0, allow_inf_nan=False)
    """A connection silent this long is closed (its character stays, asleep)."""
    commands_per_s: float = Field(default=5.0, gt=0, allow_inf_nan=False)
    """Commands a connection runs a second (a burst of as many); faster lines wait."""
    queued_lines: int = Field(default=20, ge=0)
    """Lines that may wait their turn; past it they are dropped, with one notice."""
    model_call_role: Role = Role.BUILDER
    """The role that may run commands spending model calls (@consolidate, dream, ...)."""
    model_calls_per_hour: int = Field(default=0, ge=0)
    """How many of those a player below ``model_call_role`` may run an hour."""
    login_seconds: float = Field(default=30.0, gt=0, allow_inf_nan=False)
    """Time to finish logging in (at most ``LOGIN_SECONDS_MOST``: a connection that has not
    logged in holds a slot, so a larger value, such as an older vault's 120, is read as
    the most)."""
    max_output_kb: int = Field(default=512, ge=1)
    """Text waiting for a client that reads too slowly; past it the connection is closed."""

    @field_validator("login_seconds")
    @classmethod
    def _at_most(cls, seconds: float) -> float:
        return min(seconds, LOGIN_SECONDS_MOST)

    @property
    def logging_in_most(self) -> int:
        """How many connections may be logging in at once (``max_logging_in``)."""
        return self.max_logging_in or max(2, self.max_connections // 4)

    @property
    def idle_seconds(self) -> int:
        """telnetlib3 counts whole seconds (at least one)."""
        return max(1, round(self.idle_minutes * 60))


def config_path(vault: Path) -> Path:
    return vault / "config" / "telnet.md"


def load_config(vault: Path, *, write_default: bool = False) -> TelnetConfig:
    """The vault's telnet settings (the defaults when the file is missing; with
    ``write_default`` they are written out then)."""
    path = config_path(vault)
    if not path.exists():
        config = TelnetConfig()
        if write_default:
            write_front_matter(path, config.model_dump(mode="json"), _BODY)
        return config
    meta, _body = read_front_matter(path)
    try:
        return TelnetConfig.model_validate(meta)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(step) for step in first["loc"]) or "(top level)"
        raise VaultError(f"{path}, {field}: {first['msg']}") from exc


@dataclass(frozen=True)
class ServeOptions:
    """What the command line chose: where to listen, and whether new names may join."""

    port: int = DEFAULT_PORT
    """0: any free port (said when listening)."""
    bind: str = DEFAULT_BIND
    open: bool = False
    """A name with no account and no character makes a new player character."""
    tls: ssl.SSLContext | None = None
    """Serve over TLS with this context (``--tls-cert``/``--tls-key``), else plain."""
    tls_warnings: tuple[str, ...] = ()
    """What is amiss with the TLS certificate (``engine.telnet.certificates``), a line
    each, said when the world starts listening."""
