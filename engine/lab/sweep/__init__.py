"""Sweeps (issue 21, issue 33): every run of a sweep file on a process pool or Ray,
resumable, into one results table; ``sweep.py`` is the driver, ``verbs.py`` the CLI."""
