"""The Textual terminal UI (``mudsim run`` without ``--headless``). Only this package
imports Textual; the engine knows nothing of it."""
