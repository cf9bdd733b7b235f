"""Language-model backends behind one protocol (``generate(request) -> Generation``)."""
