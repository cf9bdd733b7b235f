"""Working with recorded runs (``vault/runs/<run id>/``): replay and fork them
(``replay``, ``replay_tape``), export them and say what they cost (``export*``,
``cost``, ``run_records``, ``verbs``).

Export and cost only read run records and journals; replay and fork write only the new
vault they are given. This layer uses ``engine.sim``, never the other way round.
"""
