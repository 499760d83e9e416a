"""Partition logs on disk: segments, indexes, recovery, retention, compaction, producer state."""
