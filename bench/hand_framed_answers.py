"""Micro-benchmark: why Fetch and Metadata frame their answers by hand instead of answering kio entities.

For each case, CPU µs per partition of one answer built and encoded two ways:

- ``hand``: what the handler does — Fetch: partition dicts for `encode_fetch_response`, whose record
  buffers go to the transport uncopied; Metadata: each partition packed with struct (`_encoded_partition`,
  the cache-miss path: a cache hit reuses the bytes) and spliced into the topic's entry;
- ``kio``: the same answer as the version's kio response entities, encoded by kio's writer
  (`encode_response`), as every other handler's answer is.

    .venv/bin/python bench/hand_framed_answers.py

Prints one JSON line per case (median of --repeats timed rounds). The numbers are quoted in README's
protocol/ entry and in `tests/unit/broker/handlers/test_api_table_typed_answers.py`'s HAND_FRAMED.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kio.schema.errors import ErrorCode
from kio.schema.fetch.v17 import response as fetch
from kio.schema.metadata.v12 import response as metadata
from kio.static.primitive import i32Timedelta

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from broker.handlers.metadata import _encoded_partition
from broker.partitions.manager import PartitionState
from broker.protocol.fetch_encoding import encode_fetch_response
from broker.protocol.frames import encode_response

FETCH, METADATA = 1, 3
TOPIC_ID = uuid.UUID(int=7)
NOT_THROTTLED = i32Timedelta.parse(datetime.timedelta(0))


def fetch_hand(partitions: int, records: bytes) -> Callable[[], object]:
    def build() -> object:
        parts = [
            {
                "partition_index": index,
                "error_code": ErrorCode.none,
                "high_watermark": 1000,
                "last_stable_offset": 1000,
                "log_start_offset": 0,
                "aborted_transactions": None,
                "preferred_read_replica": -1,
                "records": records,
            }
            for index in range(partitions)
        ]
        body = {
            "throttle_time": 0,
            "error_code": ErrorCode.none,
            "session_id": 1,
            "responses": [{"topic_id": TOPIC_ID, "partitions": parts}],
        }
        return encode_fetch_response(17, 1, body)

    return build


def fetch_kio(partitions: int, records: bytes) -> Callable[[], object]:
    def build() -> object:
        parts = tuple(
            fetch.PartitionData(
                partition_index=index,
                error_code=ErrorCode.none,
                high_watermark=1000,
                last_stable_offset=1000,
                log_start_offset=0,
                aborted_transactions=None,
                preferred_read_replica=-1,
                records=records,
            )
            for index in range(partitions)
        )
        entity = fetch.FetchResponse(
            throttle_time=NOT_THROTTLED,
            error_code=ErrorCode.none,
            session_id=1,
            responses=(fetch.FetchableTopicResponse(topic_id=TOPIC_ID, partitions=parts),),
        )
        return encode_response(FETCH, 17, 1, entity)

    return build


def _states(partitions: int) -> list[PartitionState]:
    return [
        PartitionState(
            index=index,
            leader=index % 3,
            leader_epoch=4,
            replicas=(0, 1, 2),
            isr=(0, 1, 2),
            offline_replicas=(),
            error=ErrorCode.none,
        )
        for index in range(partitions)
    ]


def metadata_hand(partitions: int) -> Callable[[], object]:
    states = _states(partitions)

    def build() -> object:
        return b"".join(_encoded_partition(12, state) for state in states)

    return build


def metadata_kio(partitions: int) -> Callable[[], object]:
    states = _states(partitions)

    def build() -> object:
        topic = metadata.MetadataResponseTopic(
            error_code=ErrorCode.none,
            name="orders",
            topic_id=TOPIC_ID,
            is_internal=False,
            partitions=tuple(
                metadata.MetadataResponsePartition(
                    error_code=state.error,
                    partition_index=state.index,
                    leader_id=state.leader,
                    leader_epoch=state.leader_epoch,
                    replica_nodes=state.replicas,
                    isr_nodes=state.isr,
                    offline_replicas=state.offline_replicas,
                )
                for state in states
            ),
        )
        entity = metadata.MetadataResponse(
            throttle_time=NOT_THROTTLED, brokers=(), cluster_id="bench", controller_id=0, topics=(topic,)
        )
        return encode_response(METADATA, 12, 1, entity)

    return build


def time_per_call(call: Callable[[], object], repeats: int, target_s: float) -> list[float]:
    """CPU µs per call for `repeats` rounds, each long enough (~target_s) to swamp timer noise (CPU time:
    on a shared machine the wall clock also counts the time other processes held the core)."""
    loops = 1
    while True:
        started = time.process_time()
        for _ in range(loops):
            call()
        if time.process_time() - started >= target_s / 4:
            break
        loops *= 2
    rounds = []
    for _ in range(repeats):
        started = time.process_time()
        for _ in range(loops):
            call()
        rounds.append((time.process_time() - started) / loops * 1e6)
    return rounds


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--record-bytes", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--round-seconds", type=float, default=0.2)
    args = parser.parse_args()
    records = bytes(args.record_bytes)
    n = args.partitions
    cases: list[tuple[str, Callable[[], object], Callable[[], object]]] = [
        (f"fetch v17, {n} partitions x {args.record_bytes} B", fetch_hand(n, records), fetch_kio(n, records)),
        (f"fetch v17, {n} partitions, no records", fetch_hand(n, b""), fetch_kio(n, b"")),
        (f"metadata v12, 1 topic x {n} partitions", metadata_hand(n), metadata_kio(n)),
    ]
    for name, hand, kio in cases:
        hand(), kio()  # import every schema and writer before timing
        result: dict[str, Any] = {"case": name}
        for label, call in (("hand", hand), ("kio", kio)):
            gc.collect()
            rounds = time_per_call(call, args.repeats, args.round_seconds)
            result[f"{label}_us_per_partition"] = round(statistics.median(rounds) / n, 2)
            result[f"{label}_us_spread"] = [round(min(rounds) / n, 2), round(max(rounds) / n, 2)]
        result["kio_over_hand"] = round(result["kio_us_per_partition"] / result["hand_us_per_partition"], 1)
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
