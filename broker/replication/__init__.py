"""Replication: leaders, followers, the ISR and the high watermark: one `Partition` per hosted partition
(partition.py), held by the broker's `ReplicaManager` (manager.py).

Every broker runs a `ReplicaManager` fed the controller's metadata image
(`broker.controller.api.MetadataListener`; a single node's from its own one-voter quorum). Handlers reach it through the partition layer only.
"""
