"""The coordinator runtime shared by the group and the transaction coordinators."""

from broker.coordinator.runtime import (
    CoordinatorAppendError,
    CoordinatorRuntime,
    CoordinatorShard,
    CoordinatorSlot,
)

__all__ = ["CoordinatorAppendError", "CoordinatorRuntime", "CoordinatorShard", "CoordinatorSlot"]
