import pytest

from broker.log.errors import InvalidProducerEpochError, OutOfOrderSequenceError, UnknownProducerIdError
from broker.log.partition_log import AppendResult, PartitionLog
from broker.log.producer_state import BatchMetadata

from .conftest import LogFactory
from .helpers import NOW_MS, batch_of, crash

PRODUCER = 4000


def produce(
    log: PartitionLog, sequence: int, count: int = 2, *, epoch: int = 0, pid: int = PRODUCER
) -> AppendResult:
    values = [b"seq-%d" % (sequence + i) for i in range(count)]
    raw = batch_of(*values, producer_id=pid, producer_epoch=epoch, base_sequence=sequence)
    return log.append_as_leader(raw, leader_epoch=0, now_ms=NOW_MS)


def test_a_retried_batch_returns_the_original_offsets_without_writing(open_log: LogFactory) -> None:
    log = open_log()
    first = produce(log, 0)
    produce(log, 2)
    size = log.size_bytes()
    retry = produce(log, 0)
    assert (retry.base_offset, retry.last_offset) == (first.base_offset, first.last_offset)
    assert log.size_bytes() == size
    assert log.log_end_offset == 4


def test_any_of_the_last_five_batches_is_recognised_as_a_duplicate(open_log: LogFactory) -> None:
    log = open_log()
    results = [produce(log, sequence) for sequence in range(0, 12, 2)]
    assert produce(log, 2).base_offset == results[1].base_offset
    with pytest.raises(OutOfOrderSequenceError):
        produce(log, 0)  # the sixth-newest batch has been forgotten


def test_a_sequence_gap_is_out_of_order(open_log: LogFactory) -> None:
    log = open_log()
    produce(log, 0)
    with pytest.raises(OutOfOrderSequenceError) as caught:
        produce(log, 5)
    assert caught.value.error_code == 45
    assert log.log_end_offset == 2


def test_a_stale_epoch_is_rejected(open_log: LogFactory) -> None:
    log = open_log()
    produce(log, 0, epoch=3)
    with pytest.raises(InvalidProducerEpochError) as caught:
        produce(log, 2, epoch=2)
    assert caught.value.error_code == 47


def test_a_new_epoch_must_restart_at_sequence_zero(open_log: LogFactory) -> None:
    log = open_log()
    produce(log, 0, epoch=0)
    with pytest.raises(OutOfOrderSequenceError):
        produce(log, 2, epoch=1)
    assert produce(log, 0, epoch=1).base_offset == 2


def test_an_unknown_producer_must_start_at_sequence_zero(open_log: LogFactory) -> None:
    log = open_log()
    with pytest.raises(UnknownProducerIdError) as caught:
        produce(log, 7)
    assert caught.value.error_code == 59
    assert produce(log, 0).base_offset == 0


def test_a_transactions_later_batch_ahead_of_its_first_is_out_of_order_and_retriable(
    open_log: LogFactory,
) -> None:
    # librdkafka 0137 on 3 nodes: the first batch's KIP-890 verification failed (retriable), a later one arrived
    # first. Kafka's leader answers OUT_OF_ORDER_SEQUENCE_NUMBER (it remembers the lowest sequence it began
    # verifying); UNKNOWN_PRODUCER_ID would make the client abort its transaction.
    log = open_log()

    def transactional(sequence: int) -> AppendResult:
        raw = batch_of(
            b"in-txn", producer_id=PRODUCER, producer_epoch=0, base_sequence=sequence, transactional=True
        )
        return log.append_as_leader(raw, leader_epoch=0, now_ms=NOW_MS)

    with pytest.raises(OutOfOrderSequenceError) as caught:
        transactional(1)
    assert caught.value.error_code == 45
    assert log.log_end_offset == 0
    assert transactional(0).base_offset == 0
    assert transactional(1).base_offset == 1


def test_sequences_wrap_around_after_int32_max(open_log: LogFactory) -> None:
    log = open_log()
    produce(log, 0)
    # Reaching Int32.MAX for real takes two billion records: plant the producer's last batch there.
    log.producer_state.producers[PRODUCER].batches.append(BatchMetadata(2**31 - 2, 2**31 - 1, 0, 1, NOW_MS))
    with pytest.raises(OutOfOrderSequenceError):
        produce(log, 2)
    assert produce(log, 0, count=1).base_offset == 2


def test_producers_are_independent(open_log: LogFactory) -> None:
    log = open_log()
    produce(log, 0, pid=1)
    produce(log, 0, pid=2)
    assert produce(log, 2, pid=1).base_offset == 4


def test_duplicates_are_still_detected_after_a_clean_restart(open_log: LogFactory) -> None:
    log = open_log()
    first = produce(log, 0)
    log.close()
    reopened = open_log()
    assert produce(reopened, 0).base_offset == first.base_offset
    assert produce(reopened, 2).base_offset == 2


def test_producer_state_is_rebuilt_from_the_log_after_a_crash(open_log: LogFactory) -> None:
    log = open_log(segment_bytes=300)
    results = [produce(log, sequence) for sequence in range(0, 20, 2)]
    crash(log)
    reopened = open_log(segment_bytes=300)
    assert produce(reopened, 18).base_offset == results[-1].base_offset
    with pytest.raises(OutOfOrderSequenceError):
        produce(reopened, 30)
    assert produce(reopened, 20).base_offset == 20


def test_producers_idle_longer_than_a_day_are_forgotten_by_retention(open_log: LogFactory) -> None:
    log = open_log()
    two_days_ago = NOW_MS - 2 * 86_400_000
    old = batch_of(b"old", producer_id=1, producer_epoch=0, base_sequence=0, timestamp=two_days_ago)
    log.append_as_leader(old, leader_epoch=0, now_ms=NOW_MS)
    produce(log, 0, pid=2)
    log.apply_retention(NOW_MS)
    with pytest.raises(UnknownProducerIdError):
        log.append_as_leader(
            batch_of(b"next", producer_id=1, producer_epoch=0, base_sequence=1), leader_epoch=0, now_ms=NOW_MS
        )
    assert produce(log, 2, pid=2).base_offset == 3
