"""The world: rooms, exits, objects, characters and events; the world-file loader. No I/O
beyond reading a world file."""
