"""The vault's run log, ``logs/mudsim.log``: where every unexpected error goes with its
traceback, while the user sees one line.

The engine logs to the ``mudsim`` logger and never configures it; whoever owns a vault
(``Simulation.open``) attaches this file to it for as long as it holds the vault, so
``run``, ``do`` and ``play`` all write there. Nothing reaches the terminal: the
``mudsim`` logger always has a handler (``engine/__init__``'s NullHandler at least),
so Python's last-resort stderr handler never prints a traceback on a user's screen
(or scrambles the TUI).
"""

from __future__ import annotations

import logging
from pathlib import Path

from engine.errors import VaultError

LOGGER = "mudsim"
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def run_log_path(root: Path) -> Path:
    return root / "logs" / "mudsim.log"


def attach_run_log(root: Path) -> logging.Handler:
    """Send the ``mudsim`` log (warnings and up) to the vault's run log; the handler to
    give to ``detach_run_log`` when the vault is let go."""
    path = run_log_path(root)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(path, encoding="utf-8", delay=True)
    except OSError as exc:
        raise VaultError(f"cannot open the run log {path}: {exc}") from exc
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter(FORMAT))
    logger = logging.getLogger(LOGGER)
    logger.addHandler(handler)
    if logger.level == logging.NOTSET or logger.level > logging.WARNING:
        logger.setLevel(logging.WARNING)
    return handler


def detach_run_log(handler: logging.Handler) -> None:
    logging.getLogger(LOGGER).removeHandler(handler)
    handler.close()
