"""Consumer-group coordination and the `__consumer_offsets` topic."""

from broker.groups.coordinator import GroupCoordinator, GroupCoordinatorConfig, PartitionOffset
from broker.groups.offsets_log import OFFSETS_TOPIC_NAME, OffsetsAppendError, OffsetsLog

__all__ = [
    "OFFSETS_TOPIC_NAME",
    "GroupCoordinator",
    "GroupCoordinatorConfig",
    "OffsetsAppendError",
    "OffsetsLog",
    "PartitionOffset",
]
