"""Experiments over recorded runs (``vault/runs/<run id>/``): export and cost.

This layer only reads run records and journals; it never writes to a vault. It may
use ``engine.sim`` (the recorder's cost arithmetic), never the other way round.
"""
