"""Micro-benchmark: one Produce request through the dispatcher (decode, handler, append, answer, encode).

Measures the per-request cost of the Produce path on a real single node (logs on disk, no sockets),
for a current client (v13: topics by id, the handler's entity passes through) and an older one (v9:
topic names, the answer is rebuilt for that version), with 1 and 8 partitions per request, acks=1.
Two trees are measured alternately in one run (child processes, so their modules never meet), so that
load drifting on a shared machine hits both alike:

    git archive integrate16 | tar -x -C /tmp/before
    .venv/bin/python bench/produce_dispatch.py --before /tmp/before [--after .] [--rounds 6]

Prints per tree and case the median CPU µs per request over the rounds, min and max, then after/before.
"""

from __future__ import annotations

import argparse
import datetime
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TOPIC = "bench"
PARTITIONS = 8
CASES = ((13, 1), (13, 8), (9, 1), (9, 8))


def _frame(version: int, partitions: int, topic_id: Any) -> bytes:
    from kio.schema.request_header.v2.header import RequestHeader
    from kio.serial import entity_writer

    from broker.wire.records.records import Record, build_batch
    from broker.wire.schemas import request_class
    from tests.fixtures.entity_trees import entity_from_tree

    batch = build_batch([Record(key=None, value=b"v" * 100) for _ in range(10)])
    topic = {"topic_id": topic_id} if version >= 13 else {"name": TOPIC}
    body = {
        "transactional_id": None,
        "acks": 1,
        "timeout": datetime.timedelta(seconds=5),
        "topic_data": [
            {**topic, "partition_data": [{"index": p, "records": batch} for p in range(partitions)]}
        ],
    }
    buffer = io.BytesIO()
    header = RequestHeader(
        request_api_key=0, request_api_version=version, correlation_id=1, client_id="bench"
    )
    entity_writer(RequestHeader)(buffer, header)
    entity_writer(request_class(0, version))(buffer, entity_from_tree(request_class(0, version), body))
    return buffer.getvalue()


def child(tree: Path, requests: int) -> dict[str, float]:
    sys.path.insert(0, str(tree))
    from broker.server.dispatcher import Peer, dispatch
    from tests.unit.broker.running_state import create_topic, running_node

    peer = Peer(host="127.0.0.1", port=1, listener_name="PLAINTEXT")
    results = {}
    with tempfile.TemporaryDirectory() as log_dir, running_node({"log.dirs": log_dir}) as (loop, state):
        loop.run_until_complete(create_topic(state, TOPIC, PARTITIONS))
        topic_id = state.metadata.get(TOPIC).topic_id

        async def run(frame: bytes, count: int) -> float:
            # CPU time of the process (every thread: log writes too): steadier than wall time on a loaded machine.
            started = time.process_time()
            for _ in range(count):
                response = await dispatch(state, peer, frame)
                assert response is not None
            return time.process_time() - started

        for version, partitions in CASES:
            frame = _frame(version, partitions, topic_id)
            loop.run_until_complete(run(frame, requests // 10))  # warm-up
            elapsed = loop.run_until_complete(run(frame, requests))
            results[f"v{version} x{partitions}"] = elapsed / requests * 1e6
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--child", type=Path)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child, args.requests)))
        return
    runs: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    load_start = os.getloadavg()
    for round_index in range(args.rounds):
        order = ("before", "after") if round_index % 2 == 0 else ("after", "before")
        for name in order:
            tree = args.before if name == "before" else args.after
            out = (
                subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--before",
                        str(args.before),
                        "--child",
                        str(tree.resolve()),
                        "--requests",
                        str(args.requests),
                    ],
                    check=True,
                    capture_output=True,
                    text=True,
                    cwd=tree,
                )
                .stdout.strip()
                .splitlines()[-1]
            )
            runs[name].append(json.loads(out))
    print(
        json.dumps(
            {
                "load_start": [round(x, 2) for x in load_start],
                "load_end": [round(x, 2) for x in os.getloadavg()],
            }
        )
    )
    for case in runs["before"][0]:
        medians = {}
        for name, results in runs.items():
            values = [result[case] for result in results]
            medians[name] = statistics.median(values)
            print(
                json.dumps(
                    {
                        "case": case,
                        "tree": name,
                        "us_median": round(medians[name], 1),
                        "min": round(min(values), 1),
                        "max": round(max(values), 1),
                    }
                )
            )
        print(json.dumps({"case": case, "after/before": round(medians["after"] / medians["before"], 3)}))


if __name__ == "__main__":
    main()
