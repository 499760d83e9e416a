"""Micro-benchmark of the storage hot paths: append a 1 MB batch, read 1 MB.

Usage: .venv/bin/python bench/log_append.py [--iterations N] [--dir PATH]
Prints µs per operation and MB/s for each path.
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from broker.log.cleaner import clean_log
from broker.log.config import LogConfig
from broker.log.partition_log import PartitionLog
from broker.wire.records.records import Record, build_batch

MB = 1 << 20


def one_megabyte_batch(record_bytes: int = 100) -> bytes:
    now_ms = int(time.time() * 1000)
    count = MB // (record_bytes + 10)
    return build_batch(
        [Record(b"k%07d" % i, b"x" * (record_bytes - 8), timestamp=now_ms) for i in range(count)]
    )


def report(name: str, seconds: float, iterations: int, nbytes: int) -> None:
    per_op_us = seconds / iterations * 1e6
    rate = nbytes * iterations / seconds / MB
    print(f"{name:<40} {per_op_us:10.1f} µs/op {rate:10.0f} MB/s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    batch = one_megabyte_batch()
    with tempfile.TemporaryDirectory(dir=args.dir) as scratch:
        config = LogConfig.from_properties({"segment.bytes": str(256 * MB), "max.message.bytes": str(2 * MB)})
        log = PartitionLog.open(Path(scratch) / "bench-0", config, topic="bench", partition=0)
        now_ms = int(time.time() * 1000)
        started = time.perf_counter()
        for _ in range(args.iterations):
            log.append_as_leader(batch, leader_epoch=0, now_ms=now_ms)
        report(
            "append_as_leader 1 MB batch (100 B records)",
            time.perf_counter() - started,
            args.iterations,
            len(batch),
        )
        log.high_watermark = log.log_end_offset

        offsets = [0]
        while len(offsets) < args.iterations:
            offsets.append((offsets[-1] + 9337) % log.log_end_offset)
        started = time.perf_counter()
        total = 0
        for offset in offsets:
            total += len(log.read(offset, MB))
        report("read 1 MB (page cache)", time.perf_counter() - started, len(offsets), total // len(offsets))

        small = build_batch([Record(b"k", b"v" * 100, timestamp=now_ms)])
        started = time.perf_counter()
        for _ in range(args.iterations * 20):
            log.append_as_leader(small, leader_epoch=0, now_ms=now_ms)
        report(
            "append_as_leader 1-record batch", time.perf_counter() - started, args.iterations * 20, len(small)
        )
        log.high_watermark = log.log_end_offset
        start = log.log_end_offset - args.iterations * 20
        started = time.perf_counter()
        total = 0
        reads = args.iterations * 20
        for i in range(reads):
            total += len(log.read(start + i, 64 * 1024))
        report("read 1-record batches up to 64 KB", time.perf_counter() - started, reads, total // reads)
        size = log.size_bytes()
        log.flush()
        for segment in log.segments_snapshot()[0]:
            segment.close()  # as a killed process leaves it: no clean-shutdown marker
        started = time.perf_counter()
        log = PartitionLog.open(Path(scratch) / "bench-0", config, topic="bench", partition=0)
        report("recovery after a crash (CRC scan), per MB", (time.perf_counter() - started), size // MB, MB)
        log.close()

        compacted = LogConfig.from_properties(
            {"cleanup.policy": "compact", "segment.bytes": str(4 * MB), "max.message.bytes": str(2 * MB)}
        )
        log = PartitionLog.open(Path(scratch) / "compacted-0", compacted, topic="compacted", partition=0)
        keyed = build_batch(
            [Record(b"key-%d" % (i % 1000), b"x" * 90, timestamp=now_ms) for i in range(9000)]
        )
        for _ in range(20):
            log.append_as_leader(keyed, leader_epoch=0, now_ms=now_ms)
        log.high_watermark = log.log_end_offset
        log.roll(now_ms)
        size = log.size_bytes()
        started = time.perf_counter()
        clean_log(log, now_ms)
        report("compaction (1000 keys), per MB", time.perf_counter() - started, max(1, size // MB), MB)
        log.close()


if __name__ == "__main__":
    main()
