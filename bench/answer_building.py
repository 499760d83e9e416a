"""Micro-benchmark: the cost of turning a handler's answer into a kio response entity.

Measures `broker.protocol.responses.build_response` (and build + encode) for the answers the
data path builds most often: Metadata, ListOffsets, OffsetCommit and Produce. `--tree` imports
the broker from another checkout, so the same script measures before/after a change:

    .venv/bin/python bench/answer_building.py --tree /tmp/base9-checkout
    .venv/bin/python bench/answer_building.py

Prints one JSON line per case: µs per answer (median of --repeats timed rounds) and the spread.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

Body = dict[str, Any]


def metadata_body(topics: int, partitions: int) -> Body:
    return {
        "throttle_time": 0,
        "brokers": [{"node_id": n, "host": f"broker-{n}", "port": 9092, "rack": None} for n in range(3)],
        "cluster_id": "bench-cluster",
        "controller_id": 0,
        "topics": [
            {
                "error_code": 0,
                "name": f"topic-{t}",
                "topic_id": uuid.UUID(int=t + 1),
                "is_internal": False,
                "partitions": [
                    {
                        "error_code": 0,
                        "partition_index": p,
                        "leader_id": p % 3,
                        "leader_epoch": 4,
                        "replica_nodes": [0, 1, 2],
                        "isr_nodes": [0, 1, 2],
                        "offline_replicas": [],
                    }
                    for p in range(partitions)
                ],
                "topic_authorized_operations": -(2**31),
            }
            for t in range(topics)
        ],
        "cluster_authorized_operations": -(2**31),
    }


def list_offsets_body(partitions: int) -> Body:
    return {
        "throttle_time": 0,
        "topics": [
            {
                "name": "orders",
                "partitions": [
                    {
                        "partition_index": p,
                        "error_code": 0,
                        "timestamp": -1,
                        "offset": 1000 + p,
                        "leader_epoch": 3,
                    }
                    for p in range(partitions)
                ],
            }
        ],
    }


def offset_commit_body(partitions: int) -> Body:
    return {
        "throttle_time": 0,
        "topics": [
            {
                "name": "orders",
                "partitions": [{"partition_index": p, "error_code": 0} for p in range(partitions)],
            }
        ],
    }


def produce_body() -> Body:
    return {
        "throttle_time": 0,
        "responses": [
            {
                "name": "orders",
                "partition_responses": [
                    {
                        "index": 0,
                        "error_code": 0,
                        "base_offset": 123456,
                        "log_append_time": -1,
                        "log_start_offset": 0,
                        "record_errors": [],
                        "error_message": None,
                    }
                ],
            }
        ],
    }


CASES: list[tuple[str, int, int, Callable[[], Body]]] = [
    ("metadata v12, 1 topic x 1 partition", 3, 12, lambda: metadata_body(1, 1)),
    ("metadata v12, 20 topics x 6 partitions", 3, 12, lambda: metadata_body(20, 6)),
    ("list_offsets v7, 1 partition", 2, 7, lambda: list_offsets_body(1)),
    ("list_offsets v7, 50 partitions", 2, 7, lambda: list_offsets_body(50)),
    ("offset_commit v8, 10 partitions", 8, 8, lambda: offset_commit_body(10)),
    ("produce v9, 1 partition", 0, 9, produce_body),
]


def time_per_call(call: Callable[[], object], repeats: int, target_s: float) -> list[float]:
    """CPU µs per call for `repeats` rounds, each long enough (~target_s) to swamp timer noise.

    CPU time of this process, not wall time: on a shared machine the wall clock also counts the
    time other processes held the core."""
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
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--round-seconds", type=float, default=0.2)
    args = parser.parse_args()
    sys.path.insert(0, str(args.tree.resolve()))
    from broker.protocol.frames import encode_response
    from broker.protocol.responses import build_response

    bodies = [make() for _, _, _, make in CASES]
    # Derive every plan (and import every schema version) before any timing starts.
    for (_, api_key, version, _), body in zip(CASES, bodies, strict=True):
        build_response(api_key, version, body)
    for (name, api_key, version, _), body in zip(CASES, bodies, strict=True):
        gc.collect()
        build_rounds = time_per_call(
            lambda api_key=api_key, version=version, body=body: build_response(api_key, version, body),
            args.repeats,
            args.round_seconds,
        )
        full_rounds = time_per_call(
            lambda api_key=api_key, version=version, body=body: encode_response(
                api_key, version, 1, build_response(api_key, version, body)
            ),
            args.repeats,
            args.round_seconds,
        )
        print(
            json.dumps(
                {
                    "case": name,
                    "tree": str(args.tree),
                    "build_us_median": round(statistics.median(build_rounds), 2),
                    "build_us_min": round(min(build_rounds), 2),
                    "build_us_max": round(max(build_rounds), 2),
                    "build_encode_us_median": round(statistics.median(full_rounds), 2),
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
