"""The partition layer: what handlers and coordinators use to reach partitions (see manager.py).

Layers, each importing only those before it: records → log → partitions (+ replication) →
coordinators (groups) → handlers → server.
"""
