"""TEST / BOOTSTRAP ONLY: producer ids that cannot collide between brokers without a controller.

Every broker allocates producer ids from its own data directory. In a cluster two brokers would hand
out the same id, and a leader would take the second producer's first batch for a duplicate of the
first producer's. Until the controller allocates id blocks (AllocateProducerIds), each broker of a
statically assigned cluster only hands out ids in its own residue class: id % 1024 == node id.
"""

from __future__ import annotations

from broker.metadata.producer_ids import MAX_EPOCH, ProducerIdManager

MAX_NODES = 1024


class NodeScopedProducerIds:
    def __init__(self, inner: ProducerIdManager, node_id: int) -> None:
        if not 0 <= node_id < MAX_NODES:
            raise ValueError(f"node.id {node_id} must be below {MAX_NODES} with static assignments")
        self.inner = inner
        self.node_id = node_id

    def _scoped(self, local_id: int) -> int:
        return local_id * MAX_NODES + self.node_id

    def new_producer_id(self) -> int:
        return self._scoped(self.inner.new_producer_id())

    def init_producer(
        self, transactional_id: str | None, current_id: int = -1, current_epoch: int = -1
    ) -> tuple[int, int]:
        if transactional_id is None and current_id >= 0 and 0 <= current_epoch < MAX_EPOCH - 1:
            return current_id, current_epoch + 1  # KIP-360 epoch bump: the client keeps its id
        producer_id, epoch = self.inner.init_producer(transactional_id, current_id, current_epoch)
        return self._scoped(producer_id), epoch
