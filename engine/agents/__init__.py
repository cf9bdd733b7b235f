"""Character components: the memory stream (and, later, the thinker)."""
