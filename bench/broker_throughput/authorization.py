"""In-process cost of authentication state, ACL checks and quota bookkeeping on Produce.

    python -m bench.broker_throughput.authorization [--requests 3000] [--records 500] [--acls 2000]

The end-to-end benchmark shares two cores between clients and broker, so its run-to-run
noise is larger than the difference being measured. This one dispatches the same Produce
requests (one batch of `--records` 100-byte records each) through the broker's dispatcher
twice, in one process: once without ACLs, once as an authenticated non-super user with
ACLs on (`--acls` unrelated bindings plus a PREFIXED WRITE that grants the topic) and a
quota entity defined. It prints the median time per request and per record of each run.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import statistics
import tempfile
import time
from pathlib import Path

from kio.schema.produce.v9.request import PartitionProduceData, ProduceRequest, TopicProduceData
from kio.schema.request_header.v2.header import RequestHeader
from kio.serial import entity_writer
from kio.static.primitive import i16, i32, i32Timedelta

from broker.auth.authorizer import Operation, PatternType, Permission, ResourceType
from broker.auth.sasl import AuthSession
from broker.context import ClientSession
from broker.metadata.security_records import AlterQuotaRecord, CreateAclRecord, SecurityRecord
from broker.server.dispatcher import Peer, dispatch
from broker.wire.records.records import Record, build_batch
from tests.unit.broker.running_state import create_topic, start_node

TOPIC = "bench-authz"
USER = "bench"


def produce_frame(records: int) -> bytes:
    import datetime

    batch = build_batch([Record(key=None, value=b"v" * 100) for _ in range(records)])
    request = ProduceRequest(
        transactional_id=None,
        acks=i16(1),
        timeout=i32Timedelta.parse(datetime.timedelta(seconds=5)),
        topic_data=(
            TopicProduceData(name=TOPIC, partition_data=(PartitionProduceData(index=i32(0), records=batch),)),
        ),
    )
    buffer = io.BytesIO()
    entity_writer(RequestHeader)(
        buffer,
        RequestHeader(
            request_api_key=i16(0), request_api_version=i16(9), correlation_id=i32(1), client_id="b"
        ),
    )
    entity_writer(ProduceRequest)(buffer, request)
    return buffer.getvalue()


async def measure(secure: bool, requests: int, records: int, acls: int, data_dir: Path) -> list[float]:
    properties = {"log.dirs": str(data_dir), "listeners": "PLAINTEXT://127.0.0.1:0"}
    if secure:
        properties.update(
            {
                "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
                "authorizer.class.name": "acl",
                "super.users": "User:admin",
            }
        )
    node = await start_node(properties)
    state = node.state
    try:
        await create_topic(state, TOPIC)
        auth = AuthSession(
            requires_sasl=False, enabled_mechanisms=[], store=None, reauth_ms=0, max_token_bytes=1
        )
        if secure:
            bindings = [
                [
                    ResourceType.TOPIC,
                    f"other-{i}",
                    PatternType.LITERAL,
                    f"User:u{i}",
                    "*",
                    Operation.READ,
                    Permission.ALLOW,
                ]
                for i in range(acls)
            ]
            bindings.append(
                [
                    ResourceType.TOPIC,
                    "bench-",
                    PatternType.PREFIXED,
                    f"User:{USER}",
                    "*",
                    Operation.WRITE,
                    Permission.ALLOW,
                ]
            )
            records_to_apply: list[SecurityRecord] = [CreateAclRecord(tuple(b)) for b in bindings]  # type: ignore[arg-type]
            records_to_apply.append(
                AlterQuotaRecord((("user", "someone-else"),), {"producer_byte_rate": 1e6})
            )
            state.security.apply_records(records_to_apply)
            auth.principal = f"User:{USER}"
        session = ClientSession(auth=auth)
        peer = Peer(host="127.0.0.1", port=1, listener_name="SASL_PLAINTEXT" if secure else "PLAINTEXT")
        frame = produce_frame(records)
        timings = []
        for _ in range(requests):
            started = time.perf_counter()
            await dispatch(state, peer, frame, session)
            timings.append(time.perf_counter() - started)
        return timings
    finally:
        await node.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--records", type=int, default=500)
    parser.add_argument("--acls", type=int, default=2000)
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="broker-authz-") as tmp:
        # Alternate the two modes so that drift in machine load hits both alike.
        for round_number in range(3):
            for secure in (False, True):
                timings = asyncio.run(
                    measure(
                        secure, args.requests, args.records, args.acls, Path(tmp) / f"{secure}-{round_number}"
                    )
                )
                results.setdefault(secure, []).extend(timings)
    for secure in (False, True):
        median = statistics.median(results[secure])
        label = "SASL principal + ACLs + quotas" if secure else "no authentication, no ACLs"
        print(f"{label:>32}: {median * 1e6:8.1f} µs/request  {median / args.records * 1e9:7.1f} ns/record")
    ratio = statistics.median(results[True]) / statistics.median(results[False])
    print(f"secure/plain time per Produce request: {ratio:.1%}")


if __name__ == "__main__":
    main()
