"""Control batches: the transaction markers (commit/abort) a coordinator writes into partitions.

Kafka's format: a batch with the transactional (0x10) and control (0x20) attributes and one record
whose key is (version int16 = 0, type int16: 0 abort, 1 commit) and whose value is (version int16 = 0,
coordinator epoch int32).
"""

from __future__ import annotations

import struct

from broker.wire.records.batch import BatchView
from broker.wire.records.errors import CorruptRecordError
from broker.wire.records.records import Record, build_batch, decode_records

CONTROL_KEY = struct.Struct(">hh")
MARKER_VALUE = struct.Struct(">hi")
CONTROL_VERSION = 0
ABORT = 0
COMMIT = 1


def build_txn_marker(
    *,
    producer_id: int,
    producer_epoch: int,
    commit: bool,
    coordinator_epoch: int,
    timestamp_ms: int,
    base_offset: int = 0,
    partition_leader_epoch: int = 0,
) -> bytes:
    """One marker batch, CRC-valid, at `base_offset`."""
    record = Record(
        CONTROL_KEY.pack(CONTROL_VERSION, COMMIT if commit else ABORT),
        MARKER_VALUE.pack(CONTROL_VERSION, coordinator_epoch),
        timestamp=timestamp_ms,
    )
    return build_batch(
        [record],
        base_offset=base_offset,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        transactional=True,
        control=True,
        partition_leader_epoch=partition_leader_epoch,
    )


def read_txn_marker(batch: BatchView) -> tuple[bool, int] | None:
    """(commit, coordinator epoch) of a marker batch; None for other control batches (Kafka
    ignores control types it does not know)."""
    records = decode_records(batch)
    if not records or records[0].key is None or len(records[0].key) < CONTROL_KEY.size:
        raise CorruptRecordError("control batch without a control key")
    _version, control_type = CONTROL_KEY.unpack_from(records[0].key)
    if control_type not in (ABORT, COMMIT):
        return None
    value = records[0].value
    coordinator_epoch = -1
    if value is not None and len(value) >= MARKER_VALUE.size:
        coordinator_epoch = MARKER_VALUE.unpack_from(value)[1]
    return control_type == COMMIT, coordinator_epoch
