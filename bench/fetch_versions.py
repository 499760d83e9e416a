"""Fetch by name (v12) against Fetch by topic id (v13, v16, v17): broker CPU per request, in one process.

    .venv/bin/python bench/fetch_versions.py [--requests 3000] [--rounds 5] [--partitions 8]

A real broker state (logs on disk, no sockets) holds `--partitions` partitions of 100 B records; each
request reads 64 KiB from every partition through the real dispatcher (decode, handler, hand-framed
response), as a consumer fetching without a session does. Versions alternate round by round so that
load drifting on a shared machine hits them alike. Prints one JSON line per version: the median, min
and max of µs per request over the rounds, and the ratio to v12's median. (bench/core_compare.py's C
load generator links an older librdkafka that fetches at v11, so it does not reach the id path.)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from broker.auth.sasl import AuthSession
from broker.context import ClientSession
from broker.server.dispatcher import Peer, dispatch
from broker.wire.frames import encode_request
from broker.wire.records.records import Record, build_batch
from broker.wire.schemas import request_class
from tests.fixtures.entity_trees import entity_from_tree
from tests.unit.broker.running_state import create_topic, start_node

VERSIONS = (12, 13, 16, 17)
TOPIC = "fetch-versions"


def fetch_frame(version: int, topic_id: Any, partitions: int) -> bytes:
    named = {"topic": TOPIC} if version < 13 else {"topic_id": topic_id}
    body = {
        "replica_id": -1,
        "max_wait": 0,
        "min_bytes": 0,
        "max_bytes": 64 << 20,
        "topics": [
            {
                **named,
                "partitions": [
                    {"partition": p, "fetch_offset": 0, "partition_max_bytes": 64 << 10}
                    for p in range(partitions)
                ],
            }
        ],
        "forgotten_topics_data": [],
    }
    return encode_request(entity_from_tree(request_class(1, version), body), 1, "bench")[4:]


async def measure(args: argparse.Namespace, directory: Path) -> dict[int, list[float]]:
    node = await start_node({"log.dirs": str(directory)})
    state = node.state
    try:
        await create_topic(state, TOPIC, args.partitions)
        topic = state.metadata.get(TOPIC)
        assert topic is not None
        batch = build_batch([Record(key=None, value=b"v" * 100) for _ in range(500)])
        for index in range(args.partitions):
            partition, _ = state.partitions.leader(TOPIC, index)
            assert partition is not None
            for _ in range(4):
                partition.append(batch, acks=1)
        session = ClientSession(
            auth=AuthSession(
                requires_sasl=False,
                enabled_mechanisms=[],
                store=None,
                reauth_ms=0,
                max_token_bytes=1024,
                principal="User:ANONYMOUS",
            )
        )
        peer = Peer("127.0.0.1", 40000, "PLAINTEXT")
        frames = {v: fetch_frame(v, topic.topic_id, args.partitions) for v in VERSIONS}
        results: dict[int, list[float]] = {v: [] for v in VERSIONS}
        for round_index in range(args.rounds):
            order = VERSIONS if round_index % 2 == 0 else tuple(reversed(VERSIONS))
            for version in order:
                frame = frames[version]
                started = time.process_time()
                for _ in range(args.requests):
                    chunks = await dispatch(state, peer, frame, session)
                    assert chunks is not None
                results[version].append((time.process_time() - started) / args.requests * 1e6)
        return results
    finally:
        await node.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--partitions", type=int, default=8)
    args = parser.parse_args()
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="fetch-versions-") as directory:
        results = asyncio.run(measure(args, Path(directory)))
    base = statistics.median(results[12])
    for version, runs in results.items():
        median = statistics.median(runs)
        print(
            json.dumps(
                {
                    "case": f"Fetch v{version}, {args.partitions} partitions x 64 KiB, no session",
                    "us_per_request": {
                        "median": round(median, 1),
                        "min": round(min(runs), 1),
                        "max": round(max(runs), 1),
                    },
                    "ratio_to_v12": round(median / base, 3),
                }
            )
        )
    print(json.dumps({"load_average_at_start": load_start, "load_average_at_end": os.getloadavg()}))


if __name__ == "__main__":
    main()
