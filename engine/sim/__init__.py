"""The running simulation, the status reader and the play prompt."""
