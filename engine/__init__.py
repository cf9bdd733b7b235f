"""mudsim: a MUD-style text world where LLM-driven agents live, talk, build and remember.

Layers, arrows pointing down only: ``cli`` -> ``sim`` -> ``agents`` -> ``memory`` ->
``commands`` -> ``world`` -> ``vault``. See DESIGN.md for the contracts.
"""
