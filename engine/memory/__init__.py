"""Pure memory logic: the memory record, the compaction schedule, status reports."""
