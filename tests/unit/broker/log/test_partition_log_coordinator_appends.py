"""A coordinator's transactional write (TxnOffsetCommit on `__consumer_offsets`, Kafka's
AppendOrigin.COORDINATOR): no sequence, opens the producer's transaction, a stale epoch refused."""

from __future__ import annotations

import pytest

from broker.log.errors import InvalidProducerEpochError
from broker.wire.records.errors import InvalidRecordError

from .conftest import LogFactory
from .helpers import NOW_MS, batch_of
from .test_transaction_index import end_txn

PID = 77


def coordinator_batch(epoch: int) -> bytes:
    return batch_of(b"offset", producer_id=PID, producer_epoch=epoch, base_sequence=-1, transactional=True)


def test_a_coordinator_batch_needs_no_sequence_and_opens_the_transaction(open_log: LogFactory) -> None:
    log = open_log()
    with pytest.raises(InvalidRecordError):  # from a client, a batch without a sequence is refused
        log.append_as_leader(coordinator_batch(0), leader_epoch=0, now_ms=NOW_MS)
    first = log.append_as_leader(coordinator_batch(0), leader_epoch=0, now_ms=NOW_MS, from_coordinator=True)
    second = log.append_as_leader(coordinator_batch(0), leader_epoch=0, now_ms=NOW_MS, from_coordinator=True)
    assert second.base_offset == first.base_offset + 1  # no sequence, so never a duplicate
    log.advance_high_watermark(log.log_end_offset)
    assert log.last_stable_offset == first.base_offset  # the producer's transaction is open
    end_txn(log, PID, commit=True)
    assert log.last_stable_offset == log.log_end_offset


def test_a_fenced_producer_epoch_is_refused(open_log: LogFactory) -> None:
    log = open_log()
    log.append_as_leader(coordinator_batch(0), leader_epoch=0, now_ms=NOW_MS, from_coordinator=True)
    end_txn(log, PID, commit=False, epoch=1)  # the coordinator fenced the producer
    with pytest.raises(InvalidProducerEpochError):
        log.append_as_leader(coordinator_batch(0), leader_epoch=0, now_ms=NOW_MS, from_coordinator=True)
