"""Producer id allocation that never repeats an id, even across restarts.

Ids are reserved in blocks: the end of the current block is persisted before any id from
it is handed out, so a crash can skip ids but never reuse one. Transactional ids and their
epochs are the transaction coordinator's (`__transaction_state`); it takes its ids from here.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

BLOCK_SIZE = 1000
MAX_EPOCH = 32767


class ProducerIdManager:
    def __init__(self, data_dir: Path) -> None:
        self._path = Path(data_dir) / "producer-ids.json"
        self._lock = threading.Lock()
        self._next_id = 0
        self._block_end = 0

    def load(self) -> None:
        if self._path.exists():
            data = json.loads(self._path.read_text(encoding="utf-8"))
            self._next_id = self._block_end = int(data["block_end"])

    def _save(self) -> None:
        tmp = self._path.with_suffix(".tmp")
        self._path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump({"block_end": self._block_end}, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self._path)

    def _allocate(self) -> int:
        if self._next_id >= self._block_end:
            self._block_end = self._next_id + BLOCK_SIZE
            self._save()
        producer_id = self._next_id
        self._next_id += 1
        return producer_id

    def new_producer_id(self) -> int:
        with self._lock:
            return self._allocate()

    def init_producer(self, current_id: int = -1, current_epoch: int = -1) -> tuple[int, int]:
        """(producer id, epoch) for an idempotent producer's InitProducerId: a fresh id, unless the
        client asks to bump the epoch of the id it already holds (KIP-360), in which case it keeps
        the id with epoch + 1."""
        with self._lock:
            if current_id >= 0 and 0 <= current_epoch < MAX_EPOCH - 1:
                return current_id, current_epoch + 1
            return self._allocate(), 0
