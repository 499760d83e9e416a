"""Compaction of a log with transactions: what Kafka's cleaner keeps and removes."""

from broker.log.cleaner import clean_log
from broker.log.partition_log import PartitionLog
from broker.log.transaction_index import AbortedTxn
from broker.wire.records.batch import iter_batches
from broker.wire.records.control import read_txn_marker
from broker.wire.records.records import decode_records

from .conftest import LogFactory
from .helpers import NOW_MS, batch_of

OLD = NOW_MS - 3_600_000
DAY_MS = 86_400_000
COMPACT = {"cleanup_policy": "compact", "min_cleanable_dirty_ratio": 0.01, "delete_retention_ms": DAY_MS}
COMMITTER, ABORTER, OPEN = 10, 20, 30


class Writer:
    def __init__(self, log: PartitionLog) -> None:
        self.log = log
        self.sequences: dict[int, int] = {}

    def send(self, pid: int, key: bytes, value: bytes) -> None:
        sequence = self.sequences.get(pid, 0)
        raw = batch_of(
            value,
            keys=[key],
            timestamp=OLD,
            producer_id=pid,
            producer_epoch=0,
            base_sequence=sequence,
            transactional=True,
        )
        self.log.append_as_leader(raw, leader_epoch=0, now_ms=NOW_MS)
        self.sequences[pid] = sequence + 1
        self.log.advance_high_watermark(self.log.log_end_offset)

    def end(self, pid: int, commit: bool) -> int:
        offset = self.log.append_txn_marker(
            producer_id=pid, producer_epoch=0, commit=commit, coordinator_epoch=0, leader_epoch=0, now_ms=OLD
        )
        self.log.advance_high_watermark(self.log.log_end_offset)
        return offset


def contents(log: PartitionLog) -> list[tuple[int, str, bytes | None, bytes | None]]:
    """(offset, kind, key, value) of every record; markers as ("commit"|"abort", None, None)."""
    out = []
    for batch in iter_batches(log.read(log.log_start_offset, 1 << 30)):
        if batch.is_control:
            marker = read_txn_marker(batch)
            assert marker is not None
            out.append((batch.base_offset, "commit" if marker[0] else "abort", None, None))
            continue
        for record in decode_records(batch):
            out.append((batch.base_offset + (record.offset_delta or 0), "data", record.key, record.value))
    return out


def write_history(log: PartitionLog) -> Writer:
    """k=committed-1 (commit), k=aborted (abort, interleaved), k=committed-2 (commit), j=only (commit)."""
    writer = Writer(log)
    writer.send(COMMITTER, b"k", b"committed-1")  # 0
    writer.end(COMMITTER, commit=True)  # 1
    writer.send(ABORTER, b"k", b"aborted")  # 2
    writer.send(COMMITTER, b"j", b"only")  # 3
    writer.end(ABORTER, commit=False)  # 4
    writer.end(COMMITTER, commit=True)  # 5
    writer.send(COMMITTER, b"k", b"committed-2")  # 6
    writer.end(COMMITTER, commit=True)  # 7
    log.roll()
    return writer


def test_aborted_data_goes_committed_data_compacts_and_markers_stay_before_the_horizon(
    open_log: LogFactory,
) -> None:
    log = open_log(**COMPACT)
    write_history(log)
    assert clean_log(log, NOW_MS) is not None
    assert contents(log) == [
        # The first commit's data (k=committed-1) is compacted away; it is not past the horizon yet.
        (1, "commit", None, None),
        (3, "data", b"j", b"only"),
        (4, "abort", None, None),
        (5, "commit", None, None),
        (6, "data", b"k", b"committed-2"),
        (7, "commit", None, None),
    ]
    # The cleaned segment keeps the aborted-transaction index of its sources.
    assert log.collect_aborted_transactions(0, 100) == [AbortedTxn(ABORTER, 2, 4, 3)]  # j (3) was open


def test_markers_without_data_go_after_delete_retention_ms(open_log: LogFactory) -> None:
    log = open_log(**COMPACT)
    write_history(log)
    clean_log(log, NOW_MS)
    later = NOW_MS + 2 * DAY_MS
    assert clean_log(log, later) is not None
    assert contents(log) == [
        (3, "data", b"j", b"only"),
        (5, "commit", None, None),
        (6, "data", b"k", b"committed-2"),
        (7, "commit", None, None),
    ]


def test_an_aborted_value_never_hides_the_committed_one(open_log: LogFactory) -> None:
    log = open_log(**COMPACT)
    writer = Writer(log)
    writer.send(COMMITTER, b"k", b"kept")
    writer.end(COMMITTER, commit=True)
    writer.send(ABORTER, b"k", b"never")
    writer.end(ABORTER, commit=False)
    log.roll()
    clean_log(log, NOW_MS)
    assert [(key, value) for _, kind, key, value in contents(log) if kind == "data"] == [(b"k", b"kept")]


def test_an_open_transaction_is_not_cleaned(open_log: LogFactory) -> None:
    log = open_log(**COMPACT)
    writer = Writer(log)
    writer.send(OPEN, b"k", b"open-1")
    log.roll()
    writer.send(OPEN, b"k", b"open-2")
    log.roll()
    before = contents(log)
    assert log.last_stable_offset == 0
    assert clean_log(log, NOW_MS) is None
    assert contents(log) == before
