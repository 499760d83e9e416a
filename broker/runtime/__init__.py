"""Process-wide plumbing every layer may use: request memory, connection limits, heap and loop watch, metrics.

Nothing here knows about topics, partitions or requests; it imports nothing else of the broker but its config.
"""
