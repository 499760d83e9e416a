"""Property test: whatever the history, compaction keeps exactly the latest record of every key."""

import dataclasses
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from broker.log.cleaner import clean_log
from broker.log.partition_log import PartitionLog
from broker.wire.records.codecs import Codec

from .conftest import make_config
from .helpers import NOW_MS, batch_of, read_records

OLD = NOW_MS - 3_600_000
writes = st.lists(
    st.lists(
        st.tuples(st.sampled_from([b"a", b"b", b"c", b"d", b"e"]), st.none() | st.binary(max_size=30)),
        min_size=1,
        max_size=4,
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    batches=writes,
    segment_bytes=st.integers(150, 1500),
    codec=st.sampled_from([Codec.NONE, Codec.LZ4, Codec.GZIP]),
)
def test_compaction_keeps_the_latest_record_of_every_key(
    batches: list[list[tuple[bytes, bytes | None]]], segment_bytes: int, codec: Codec
) -> None:
    scratch = Path(tempfile.mkdtemp())
    config = make_config(cleanup_policy="compact", segment_bytes=segment_bytes, min_cleanable_dirty_ratio=0.0)
    log = PartitionLog.open(scratch / "t-0", config, topic="t", partition=0)
    try:
        written: dict[int, tuple[bytes, bytes | None]] = {}
        for records in batches:
            keys = [key for key, _ in records]
            raw = batch_of(*[value for _, value in records], keys=keys, timestamp=OLD, codec=codec)
            result = log.append_as_leader(raw, leader_epoch=0, now_ms=NOW_MS)
            for i, record in enumerate(records):
                written[result.base_offset + i] = record
        log.high_watermark = log.log_end_offset
        log.roll(NOW_MS)
        latest = {key: (offset, value) for offset, (key, value) in sorted(written.items())}

        clean_log(log, NOW_MS)
        kept = read_records(log)
        assert all(written[offset] == (key, value) for offset, key, value in kept)
        assert sorted((key, (offset, value)) for offset, key, value in kept) == sorted(latest.items())

        log.update_config(dataclasses.replace(log.config, delete_retention_ms=0))
        clean_log(log, NOW_MS)
        without_tombstones = {key: ov for key, ov in latest.items() if ov[1] is not None}
        assert {key: (offset, value) for offset, key, value in read_records(log)} == without_tombstones
        assert log.log_end_offset == max(written) + 1
    finally:
        log.close()
        shutil.rmtree(scratch, ignore_errors=True)
