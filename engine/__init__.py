"""mudsim: a MUD-style text world where LLM-driven agents live, talk, build and remember.

Layers, arrows pointing down only: ``cli`` -> ``sim`` -> ``agents`` -> ``memory`` ->
``commands`` -> ``world`` -> ``vault``. See DESIGN.md for the contracts.
"""

import logging

# The engine logs to "mudsim" (the run log); without a handler configured nothing is
# printed, so a traceback never reaches the user's terminal.
logging.getLogger("mudsim").addHandler(logging.NullHandler())


def version() -> str:
    """mudsim's version, as installed ("(not installed)" when run from a checkout)."""
    import importlib.metadata

    try:
        return importlib.metadata.version("mudsim")
    except importlib.metadata.PackageNotFoundError:
        return "(not installed)"
