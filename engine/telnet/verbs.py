"""The CLI verbs of the served world: ``serve``, ``account add|passwd`` and ``ban``, and ``run``'s
``--telnet PORT`` and ``--web PORT`` (the terminal UI open, the world served beside
it). The work is imported only when a verb runs.

``run`` is ``mudsim``'s own verb: ``add`` gives its parser ``--telnet``, ``--web``,
``--bind``, ``--open``, ``--tls-cert``, ``--tls-key`` and ``--allow-expired-cert``, and
puts ``run_served`` in front of its handler, which hands every run without ``--telnet``
or ``--web`` to that handler unchanged. ``serve`` listens on telnet port 4000 when
neither is given.
"""

from __future__ import annotations

import argparse
import functools
import os
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.errors import UsageError
from engine.telnet.settings import DEFAULT_BIND, DEFAULT_PORT, ServeOptions
from engine.world.model import Role

if TYPE_CHECKING:
    from engine.sim.run import RunOptions
    from engine.telnet.serve import Listen

Handler = Callable[[argparse.Namespace], None]

SERVE = ("Run the world live, its agents thinking (as run --headless), and let MUD clients "
         "(telnet, Mudlet, tintin++) log in and play over telnet, and browsers over the web "
         "(--web PORT).")  # fmt: skip
SERVE_DETAILS = (SERVE + " Accounts live in the vault's config/accounts.md (mudsim account "
                 "add, or @account in the world); --open lets a new name make a player "
                 "character. Ctrl-C or SIGTERM tells every client, lets turns finish, saves.")  # fmt: skip
ACCOUNT_ADD = ("Add an account: who may log in over telnet as a player character, with a "
               "password (asked for, or one line of standard input, or --password).")  # fmt: skip
ACCOUNT_PASSWD = ("Change an account's password (asked for twice, or one line of standard "
                  "input, or --password); also while the world is served: the next login "
                  "asks for the new one.")  # fmt: skip


BAN = "Keep names and addresses out of the served world, from a shell (as @ban does)."
BAN_DETAILS = (BAN + " The bans live in the vault's config/bans.md; a served world reads "
               "them at each connection and login, so this works while it is served (an "
               "admin who banned their own network lifts the ban here).")  # fmt: skip
BAN_LIST = "List the bans in force."
BAN_ADD = ("Ban a name, an address or a network, for a while or until lifted (a name that is "
           "no account and no character is refused without --force).")  # fmt: skip
BAN_REMOVE = "Lift a ban."


def add(verbs: Any, *, agent_arguments: Callable[..., None],
        parser_class: type[argparse.ArgumentParser]) -> None:  # fmt: skip
    """Add the verbs to ``mudsim``'s sub-parsers (``agent_arguments``: ``run``'s LLM
    options; ``parser_class``: its parsers' class); ``run`` must be there already."""
    sub = verbs.add_parser("serve", help=SERVE, description=SERVE_DETAILS)
    sub.add_argument("world", type=Path, metavar="WORLD", help="world file (YAML), as for run")
    _vault(sub)
    _telnet_arguments(sub, default=DEFAULT_PORT)
    agent_arguments(sub, turns="each agent takes N turns, then stands still (players play on)")
    sub.set_defaults(run=serve)
    account = verbs.add_parser("account", help="Manage who may log in over telnet.",
                               description="Manage who may log in over telnet.")  # fmt: skip
    account_verbs = account.add_subparsers(dest="account_verb", metavar="VERB",
                                           parser_class=parser_class)  # fmt: skip
    account_verbs.required = True
    sub = account_verbs.add_parser("add", help=ACCOUNT_ADD, description=ACCOUNT_ADD)
    _vault(sub)
    sub.add_argument("name", metavar="NAME", help="the player character's name")
    sub.add_argument("--role", choices=[r.value for r in Role],
                     help="the role the character acts with (default: its own)")  # fmt: skip
    _password_argument(sub)
    sub.set_defaults(run=account_add)
    sub = account_verbs.add_parser("passwd", help=ACCOUNT_PASSWD, description=ACCOUNT_PASSWD)
    _vault(sub)
    sub.add_argument("name", metavar="NAME", help="the account's name")
    _password_argument(sub)
    sub.set_defaults(run=account_passwd)
    _ban_verbs(verbs, parser_class)
    run = verbs.choices["run"]
    _telnet_arguments(run, default=None)
    run.set_defaults(run=functools.partial(run_served, run.get_default("run")))


def _ban_verbs(verbs: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    """``mudsim ban list|add|remove`` (``engine.telnet.bans_cli``)."""
    ban = verbs.add_parser("ban", help=BAN, description=BAN_DETAILS)
    ban_verbs = ban.add_subparsers(dest="ban_verb", metavar="VERB", parser_class=parser_class)
    ban_verbs.required = True
    sub = ban_verbs.add_parser("list", help=BAN_LIST, description=BAN_LIST)
    _vault(sub)
    sub.set_defaults(run=ban_list)
    sub = ban_verbs.add_parser("add", help=BAN_ADD, description=BAN_ADD)
    _vault(sub)
    sub.add_argument("target", metavar="NAME|ADDRESS",
                     help="an account's or character's name, an address, or a network "
                     "(203.0.113.0/24)")  # fmt: skip
    sub.add_argument("--for", dest="length", type=_ban_length, metavar="LENGTH",
                     help="30m, 2h, 7d, 1w or forever (default: forever, until lifted)")  # fmt: skip
    sub.add_argument("--reason", default="", metavar="TEXT", help="why (shown in the list)")
    sub.add_argument("--force", action="store_true",
                     help="ban a name that is no account and no character (yet)")  # fmt: skip
    sub.set_defaults(run=ban_add)
    sub = ban_verbs.add_parser("remove", help=BAN_REMOVE, description=BAN_REMOVE)
    _vault(sub)
    sub.add_argument("target", metavar="NAME|ADDRESS", help="what the ban names (ban list)")
    sub.set_defaults(run=ban_remove)


def _ban_length(text: str) -> timedelta | None:
    from engine.telnet.bans_cli import ban_length

    try:
        return ban_length(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _password_argument(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--password", metavar="PW",
                     help="the password (visible to other users of this machine; "
                     "default: asked for, or read from standard input)")  # fmt: skip


def _vault(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--vault", type=Path, default=Path("vault"), metavar="DIR",
                     help="vault folder (default: ./vault)")  # fmt: skip


def _telnet_arguments(sub: argparse.ArgumentParser, *, default: int | None) -> None:
    """``default``: the telnet port when neither --telnet nor --web is given (``serve``),
    or None (``run``: without either, nothing is served)."""
    said = (f" (default {default} unless --web is given" if default is not None
            else " (serve the world")  # fmt: skip
    sub.add_argument("--telnet", type=telnet_port, metavar="PORT",
                     help=f"the telnet port{said}; 0: any free port, said on stderr)")  # fmt: skip
    sub.add_argument("--web", type=telnet_port, metavar="PORT",
                     help="also serve a page where people log in and play in a browser, on "
                     "this port (0: any free port, said on stderr)")  # fmt: skip
    sub.add_argument("--bind", metavar="ADDR",
                     help=f"the address to listen on (default {DEFAULT_BIND}, this machine only)")  # fmt: skip
    sub.add_argument("--open", action="store_true",
                     help="a name with no account may make a new player character")  # fmt: skip
    sub.add_argument("--tls-cert", type=Path, metavar="FILE",
                     help="serve telnet and the web over TLS with this certificate (PEM; "
                     "with --tls-key)")  # fmt: skip
    sub.add_argument("--tls-key", type=Path, metavar="FILE",
                     help="the certificate's private key (PEM, unencrypted)")  # fmt: skip
    sub.add_argument("--allow-expired-cert", action="store_true",
                     help="serve a --tls-cert that has expired (a warning; without it, exit 2)")  # fmt: skip
    sub.set_defaults(default_telnet=default)


def telnet_port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 0 to 65535, got {text!r}")
    return int(text)


def _serve_options(args: argparse.Namespace) -> ServeOptions:
    """Where and how to listen (a bad --tls-cert/--tls-key, or an expired certificate
    without --allow-expired-cert, is a ``UsageError``, before anything is opened)."""
    if (args.tls_cert is None) != (args.tls_key is None):
        raise UsageError("--tls-cert and --tls-key go together")
    if args.allow_expired_cert and args.tls_cert is None:
        raise UsageError("--allow-expired-cert goes with --tls-cert and --tls-key")
    tls, warnings, bind = None, [], args.bind or DEFAULT_BIND
    if args.tls_cert is not None:
        from engine.telnet.certificates import check
        from engine.telnet.serve import tls_context

        tls = tls_context(args.tls_cert, args.tls_key)
        warnings = check(args.tls_cert, bind, allow_expired=args.allow_expired_cert)
    port = args.telnet if args.telnet is not None else DEFAULT_PORT
    return ServeOptions(port, bind, args.open, tls, tuple(warnings))


def _listen(args: argparse.Namespace) -> Listen:
    """Telnet when asked for, or when nothing else is (``serve``'s default port)."""
    from engine.telnet.serve import Listen

    telnet = args.telnet is not None or (args.web is None and args.default_telnet is not None)
    return Listen(telnet=telnet, web=args.web)


def _run_options(args: argparse.Namespace) -> RunOptions:
    from engine.sim.run import RunOptions

    return RunOptions(args.world, args.vault, args.llm, args.model, args.turns, args.seed,
                      getattr(args, "as_name", None))  # fmt: skip


def serve(args: argparse.Namespace) -> None:
    import asyncio

    from engine.telnet.serve import serve as serve_world

    options = _serve_options(args)
    asyncio.run(serve_world(_run_options(args), options, os.environ, listen=_listen(args)))


def run_served(plain: Handler, args: argparse.Namespace) -> None:
    """``run``: with ``--telnet`` or ``--web``, the world served beside the TUI (or, with
    ``--headless``, as ``serve``); without them, ``run`` as ever."""
    if args.telnet is None and args.web is None:
        if (args.bind is not None or args.open or args.tls_cert or args.tls_key
                or args.allow_expired_cert):  # fmt: skip
            raise UsageError("--bind and --open go with --telnet PORT or --web PORT (as do "
                             "--tls-cert, --tls-key and --allow-expired-cert)")  # fmt: skip
        plain(args)
        return
    if args.headless:
        serve(args)
        return
    import asyncio

    from engine.telnet.serve import served
    from engine.tui.runner import run_tui

    telnet, listen = _serve_options(args), _listen(args)
    asyncio.run(run_tui(_run_options(args), os.environ,
                        beside=lambda sim: served(sim, telnet, listen)))  # fmt: skip


def account_add(args: argparse.Namespace) -> None:
    from engine.telnet.accounts_cli import add_account

    role = Role(args.role) if args.role else None
    print("\n".join(add_account(args.vault, args.name, role, args.password)))


def account_passwd(args: argparse.Namespace) -> None:
    from engine.telnet.passwd_cli import change_password

    print("\n".join(change_password(args.vault, args.name, args.password)))


def ban_list(args: argparse.Namespace) -> None:
    from engine.telnet.bans_cli import list_bans

    print("\n".join(list_bans(args.vault)))


def ban_add(args: argparse.Namespace) -> None:
    from engine.telnet.bans_cli import add_ban

    print("\n".join(add_ban(args.vault, args.target, args.length, args.reason, force=args.force)))


def ban_remove(args: argparse.Namespace) -> None:
    from engine.telnet.bans_cli import remove_ban

    print("\n".join(remove_ban(args.vault, args.target)))
