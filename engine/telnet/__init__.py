"""The world served to MUD clients over telnet (``mudsim serve``, ``mudsim run --telnet``).

Every protocol detail is telnetlib3's: negotiation (NAWS, CHARSET, TTYPE, ECHO), GMCP
and MSSP subnegotiation. What is ours:

    settings.py    config/telnet.md (limits) and the command line's choices
    limits.py      pure: a line assembler with a length cap, cleaning a line of control
                   bytes, the per-connection rate limit, the per-address login delay
    render.py      pure: text for a client (control bytes out, wrapped, ANSI colour)
    payloads.py    pure: GMCP Room.Info and Char.Status, MSSP variables
    protocol.py    telnetlib3's server protocol and writer, extended (GMCP, MSSP, limits)
    connection.py  one client: reading lines, writing text, prompts, password mode
    login.py       the login dialogue (accounts, passwords, new characters)
    session.py     a logged-in player: commands, events as they happen, quit
    server.py      the listener, who is connected, events to clients, shutting down
    serve.py       ``mudsim serve``, and the TUI with the world served
    certificates.py  pure: what ``serve`` checks of its TLS certificate (dates, names)
    verbs.py       the CLI verbs (``serve``, ``account add``, ``ban``, ``run --telnet``)
    accounts_cli.py  ``mudsim account add``'s work (the accounts file is
                   ``engine.vault.accounts``; ``@account`` is ``engine.commands.account``)
    bans_cli.py    ``mudsim ban list|add|remove``'s work (the bans file is
                   ``engine.vault.bans``; ``@ban`` is ``engine.commands.moderation``)
"""
