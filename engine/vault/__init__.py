"""On-disk persistence: paths, atomic writes, front matter, the journal, the lock."""
