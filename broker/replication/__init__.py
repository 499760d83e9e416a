"""Replication: leaders, followers, the ISR and the high watermark (see manager.py).

Every broker runs a `ReplicaManager`: a cluster member's is fed the controller's metadata image
(`broker.controller.api.MetadataListener`), a single node's the image of a cluster of one
(`broker.partitions.single_node`). Handlers reach it through the partition layer only.
"""
