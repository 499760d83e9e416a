"""Cluster mode with many partitions: create one large RF 3 topic on a three-broker cluster.

    .venv/bin/python bench/partition_scale.py [--partitions 10000] [--idle-seconds 10]
                                              [--records 100000] [--py-spy DIR]

Starts three `broker,controller` nodes with the timings the `local` provisioner writes (heartbeat 400 ms,
session 2 s), creates a small topic every probe uses, then one topic with `--partitions` partitions and
replication factor 3, and measures:

- `create_s`: CreateTopics sent to the answer; `isr_full_s`: until every broker's Metadata shows every
  partition with a leader and all three replicas in its ISR; `logs_created_s`: until every broker has
  created every partition's log directory (brokers create them in a worker thread, after the metadata
  shows the partition); `create_cpu_s`: CPU seconds each broker spent from the request until then;
- while that happens, a probe asks every broker for the small topic's Metadata and produces one record to
  it every 250 ms: the slowest answer (`probe_max_s`), how many failed, whether the active controller moved
  (a second "is the active controller" line in any node's log) and whether a broker was fenced;
- `loop_stalls`: per node, the stalls of its event loop of 250 ms or more its log names during creation
  (how many, the longest, and how much of them full garbage collections took);
- `idle_cpu`: each broker's CPU (fraction of a core) over `--idle-seconds`, `--settle-seconds` after
  the logs exist;
- produce and consume `--records` 100-byte records spread over all partitions vs into one partition
  (records/s, acks=all, one confluent-kafka producer and one consumer);
- after deleting the topic: seconds until the small topic is fully replicated in every broker's Metadata
  (`healed_s`), then how many "AlterPartition ... refused" lines the brokers log in the next 5 s.

Prints one JSON object (and what it has so far to stderr after each stage). `--py-spy DIR` records raw
py-spy stacks of every broker during creation (`DIR/create`) and the idle measurement (`DIR/idle`);
py-spy on PATH or in /tmp/pyspy/bin.

Measured on the shared 2-core box (other sessions running; load average in brackets):

| run | create → full ISRs | controller moved / fenced | probe slowest | idle CPU per broker | spread vs 1 partition, produce rec/s | healed after delete |
|---|---|---|---|---|---|---|
| 2,000 partitions, before (load 0.4) | 1.8 s | yes / 0 | 1.1 s | 23% | 165 (7,190 of 20,000 undelivered) vs 294 | not within 120 s |
| 2,000 partitions, follower sessions on (load 1-3) | 7.5-10 s | no / 0 | 0.35 s | 5% | 1,030-1,380 vs 215,000 | 5.4 s |
| 2,000 partitions, follower sessions off (load 1.4) | 3.4 s | no / 0 | 0.43 s | 20% | 166 vs 51,000 | 5.3 s |
| 10,000 partitions, logs created on the loop, sessions on (load 1.5) | ~30 s | no / 0 | — | — | the spread produce fenced a broker | — |
| 10,000 partitions, logs created on the loop, sessions on (load 6) | not within 300 s | yes / 22 | 30 s (7 failed) | 2-22% | — | no |
| 10,000, logs off the loop, cached Metadata, batched AlterPartition, incremental follower rounds (load 3.4) | 3.0 s | no / 0 | 1.9 s | — | — | 7.6 s |
| same (load 11-14) | 4.1 s (every log created: 44 s, 10 s CPU per broker) | no / 0 | 2.3 s, 0 failed | 3.3-3.7% | — | 6.5 s, 0 refusals |
| same (load 17-19) | 13 s (logs: 145 s) | yes / 11 | 30 s, 3 failed | 9-11% | 797 (99,990 of 100,000 undelivered) vs 2,033 | not within 120 s |
| + logs created without reads, deleted without writes, sliced produce (load 12.5-14) | 67 s (logs: 67 s, 11-18 s CPU per broker) | yes / 4 | 8.6 s, 0 failed | 1.8-5.1% | 1,849 (consume 31,500) vs 528,000 (consume 1.5 M), 50,000 records, all delivered | 3.7 s, 0 refusals |
| same (load 5 falling to 2) | 2.2 s (logs: 69 s, 15 s CPU per broker) | yes (19 s after the creation) / 0; during the spread produce: yes / 2 | 1.7 s, 0 failed | 2.7-3.1% | 403, 21,935 of 50,000 undelivered, consumer read nothing in 300 s, vs 505 (cluster still moving controllers) | 1.6 s, 0 refusals |
| + large metadata entries applied in slices to a copy, entries fetched as stored bytes, faster placement (load 1.7-2.2) | 1.5 s (logs: 5.2 s, 2.9-3.0 s CPU per broker) | no / 0; loop stalls of 250 ms+: 395 ms on node 1, 404 ms on node 3 (383 ms of it a full garbage collection) | 0.39 s, 0 failed | 5.4-6.3% | 2,141 (consume 103,000) vs 160,000 (consume 820,000), all delivered | 1.4 s, 0 refusals |
| + full collections kept off the new partitions' objects (load 0.9 rising to 3.6) | 2.2 s (logs: 37 s, 17.5-18.5 s CPU per broker) | no / 0; one 892 ms stall on node 2, no collection in it | 0.98 s, 0 failed | 4.6-5.2% | 815 (consume 87,000) vs 134,000 (consume 445,000), all delivered | 2.7 s, 0 refusals |
| same (load 3.8-4.5) | 2.4 s (logs: 13 s, 6.3-6.6 s CPU per broker) | no / 0; stalls of 325 ms (node 1) and 258 ms (node 3), no collection in them | 0.96 s, 0 failed | 3.3-3.7% | 1,088 (consume 132,000) vs 120,000 (consume 906,000), all delivered | 2.2 s, 0 refusals |
| same, base9 again, 50,000 records (load 6-8.7) | 5.1 s (logs: 104 s, 22-23 s CPU per broker) | no / 0; 1-7 stalls per node, longest 860 ms, no collection | 2.0 s, 0 failed | 4.4-5.1% | 421 (consume 31,600) vs 104,000 (consume 640,000), all delivered | 3.8 s, 0 refusals |
| + fetch sessions read the partitions a fetch needs without scanning the whole session (same conditions, the run just before) | 5.8 s (logs: 26 s, 3.5-3.8 s CPU per broker) | yes (during the creation) / 0; 1-5 stalls per node, longest 1,049 ms, no collection | 1.5 s, 0 failed | 3.5-4.1% | 2,794 (consume 50,400) vs 719,000 (consume 805,000), all delivered | 2.8 s, 0 refusals |
| the same code again, 30,000 records (load 2-4) | 3.9 s (logs: 9.8 s, 3.1-3.3 s CPU per broker) | no / 0; 1-3 stalls per node, longest 1,048 ms | 0.84 s, 0 failed | 3.4-4.0% | (the bench stopped at the one-partition topic's delete) | — |
| same code (load 33-37) | 8.9 s (logs: 31 s, 5.3-6.4 s CPU per broker) | yes / 6; 32-49 stalls per node, longest 1.8 s | 30.6 s, 1 failed | 15.7-24.6% | not measured: creating the bench's one-partition RF 3 topic was refused (INVALID_REPLICATION_FACTOR, a broker fenced at that moment), which ended the run | — |
| + one high watermark checkpoint per log dir, ISR work over led partitions only and reconciliation where an event happened, Metadata re-encoding only changed partitions (load 27-37, run just before the previous row) | 9.8 s (logs: 92 s, 8.4-9.6 s CPU per broker) | yes / 11; 65-90 stalls per node, longest 4.7 s (up to 1.1 s of it full collections) | 30.6 s, 2 failed | 6.9-9.6% | 233 (consume 24; 29,931 of 30,000 undelivered) vs 271 (consume 19,077), all delivered in one partition | not within 120 s; 690 refusals |

At load 27-37 both codes churned (controller moved, brokers fenced, second-long loop stalls): creation and spread
rates there are the load's. What the profiles (py-spy, the last two rows) say about the code: Metadata answers
took 1.8-11.6% of the brokers' samples during the creation before, 0.4-0.5% after; the periodic ISR work
5.6-11.1% of the idle samples before, 1.5-8.1% after (reconciliation 0.8-1.4% before, 0.2-0.3% after; what is left
is `expand_isrs` over partitions whose ISR lacks a follower, many while brokers are being fenced); the high
watermark checkpoint file 0.1-0.2%.

Creating a partition's log is a directory and three files (~1.8 ms of file system calls on a quiet
machine, several times that under load): 10,000 of them used to run on the event loop and under load
held up the active controller's heartbeat answers past the brokers' 0.8 s heartbeat timeout; every
fencing then moved thousands of leaderships (thousands of AlterPartition requests, each queued on one
connection), which was more of the same. Then the topic's one metadata-log entry (10,000 partition
records) was applied in one go on every node's event loop, which under load outlasted the 1 s election
timeout: the controller moved during most creations. Large entries are now applied to a copy of the
image in 10 ms slices (broker/controller/image.py), and full garbage collections, which a growing heap
of partition objects made long (383 ms once), are kept off those objects while they arrive
(broker/runtime/heap.py). What is left: stalls of 250-900 ms that are not collections (each node logs
them, `loop_stalls`; not yet located), the CPU per creation varies 3-18 s per broker between runs, and
these runs were at load 1-4.5, not the 12-14 where the controller moved before.

Spread produce was bound by the leaders' CPU: every follower fetch after an append (one record into
each of thousands of partitions) made the leader scan the follower's whole fetch session (~3,300
partitions) to pick the few it had to read, 64% of the request handling time in py-spy. Fetch sessions
now keep each partition's place in the session's order and sort the few needed (broker/handlers/
fetch_sessions.py `FetchSession.in_order`): at load 16-18, 30,000 records spread cost each broker 7 s
of CPU instead of 15 s. What the profile still shows: the leaders' event loop itself (uvloop, ~30%),
writing responses, follower appends of one-record batches, and the high watermark checkpoint (one
file per partition, rewritten every 5 s for each partition whose watermark moved). Spread consume is
bound by the client: a librdkafka consumer cost each broker under 0.3 s of CPU for 30,000 records.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from controlplane.clusters.provisioners.local import FAILOVER_TIMINGS
from tests.fixtures.cluster import LocalCluster, start_cluster
from tests.integration.cluster.scale_checker import (
    PROBE_PARTITIONS,
    PROBE_TOPIC,
    Probe,
    controller_elections,
    create_when_brokers_unfenced,
    fencings,
    loop_stalls,
    topic_fully_replicated,
)

BIG_TOPIC = "wide"
# Metadata of a 10,000-partition topic from every broker is itself a load: not too often.
ISR_POLL_S = 2.0
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
HEALED_QUIET_S = 5.0


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def logs_on_disk(cluster: LocalCluster, topic: str) -> int:
    """The fewest partition directories of `topic` any broker has created so far."""
    counts = []
    for node in cluster.brokers:
        with os.scandir(node.data_dir / "logs") as entries:
            counts.append(sum(1 for entry in entries if entry.name.startswith(f"{topic}-")))
    return min(counts)


def alter_partition_refusals(cluster: LocalCluster) -> int:
    return sum(node.log_text().count("refused with error") for node in cluster.brokers)


def broker_cpu_seconds(cluster: LocalCluster) -> dict[str, float]:
    return {str(node.node_id): cpu_seconds(node.process.pid) for node in cluster.brokers if node.process}


def idle_cpu(cluster: LocalCluster, seconds: float) -> dict[str, float]:
    """Each broker's CPU over `seconds`, as a fraction of one core."""
    before = broker_cpu_seconds(cluster)
    time.sleep(seconds)
    after = broker_cpu_seconds(cluster)
    return {node: round((after[node] - before[node]) / seconds, 3) for node in after}


def produce_consume(cluster: LocalCluster, topic: str, partitions: int, records: int) -> dict[str, float]:
    producer = Producer(
        cluster.client_config(acks="all", **{"linger.ms": "5", "queue.buffering.max.messages": "1000000"})
    )
    value = b"x" * 100
    started = time.monotonic()
    for seq in range(records):
        while True:
            try:
                producer.produce(topic, value, partition=seq % partitions)
                break
            except BufferError:
                producer.poll(0.05)
    remaining = producer.flush(120)
    produce_s = time.monotonic() - started
    consumer = Consumer(
        cluster.client_config(**{"group.id": f"bench-{topic}-{partitions}", "enable.auto.commit": "false"})
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    read = 0
    started = time.monotonic()
    deadline = started + 300
    while read < records - remaining and time.monotonic() < deadline:
        read += sum(1 for m in consumer.consume(10000, timeout=1) if m.error() is None)
    consume_s = time.monotonic() - started
    consumer.close()
    return {
        "produce_per_s": round(records / produce_s),
        "consume_per_s": round(read / consume_s),
        "undelivered": remaining,
        "consumed": read,
    }


def start_py_spy(cluster: LocalCluster, directory: Path, seconds: int) -> list[subprocess.Popen[bytes]]:
    binary = shutil.which("py-spy") or "/tmp/pyspy/bin/py-spy"
    directory.mkdir(parents=True, exist_ok=True)
    spies = []
    for node in cluster.brokers:
        assert node.process is not None
        spies.append(
            subprocess.Popen(
                [
                    binary,
                    "record",
                    "-p",
                    str(node.process.pid),
                    "-d",
                    str(seconds),
                    "-r",
                    "50",
                    "-f",
                    "raw",
                    "-o",
                    str(directory / f"node-{node.node_id}.txt"),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
    return spies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--partitions", type=int, default=10000)
    parser.add_argument("--idle-seconds", type=float, default=10.0)
    parser.add_argument(
        "--settle-seconds",
        type=float,
        default=5.0,
        help="wait after the logs exist before measuring idle CPU",
    )
    parser.add_argument("--records", type=int, default=100000)
    parser.add_argument("--isr-timeout", type=float, default=600.0)
    parser.add_argument("--py-spy", type=Path, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the nodes' data and logs (path printed)")
    args = parser.parse_args()

    base = Path(tempfile.mkdtemp(prefix="partition-scale-"))
    cluster = start_cluster(base, 3, properties=dict(FAILOVER_TIMINGS))
    result: dict[str, object] = {"partitions": args.partitions, "load_before": os.getloadavg()}
    try:
        admin = AdminClient(cluster.client_config())
        create_when_brokers_unfenced(admin, NewTopic(PROBE_TOPIC, PROBE_PARTITIONS, 3))
        elections_before, fencings_before = controller_elections(cluster), fencings(cluster)
        stalls_before = loop_stalls(cluster)
        probe = Probe(cluster)
        probe.start()
        spies = start_py_spy(cluster, args.py_spy / "create", 300) if args.py_spy else []
        cpu_before = broker_cpu_seconds(cluster)
        started = time.monotonic()
        admin.create_topics([NewTopic(BIG_TOPIC, args.partitions, 3)], operation_timeout=600)[
            BIG_TOPIC
        ].result(600)
        result["create_s"] = round(time.monotonic() - started, 2)
        while not topic_fully_replicated(cluster, BIG_TOPIC, args.partitions):
            if time.monotonic() - started > args.isr_timeout:
                result["isr_full_s"] = None
                break
            time.sleep(ISR_POLL_S)
        else:
            result["isr_full_s"] = round(time.monotonic() - started, 2)
        # Brokers create the logs of new partitions off their event loop, after the metadata shows them.
        while logs_on_disk(cluster, BIG_TOPIC) < args.partitions:
            if time.monotonic() - started > args.isr_timeout:
                result["logs_created_s"] = None
                break
            time.sleep(0.5)
        else:
            result["logs_created_s"] = round(time.monotonic() - started, 2)
        # CPU each broker spent on it (creation and whatever churn followed): less load-dependent.
        cpu_after = broker_cpu_seconds(cluster)
        result["create_cpu_s"] = {node: round(cpu_after[node] - cpu_before[node], 1) for node in cpu_after}
        for spy in spies:
            spy.send_signal(2)
        for spy in spies:
            spy.wait(60)
        probe.stop()
        result["probe"] = {
            "rounds": probe.rounds,
            "slowest_s": round(probe.slowest_s, 2),
            "failures": len(probe.failures),
            "first_failures": probe.failures[:3],
        }
        result["controller_moved"] = controller_elections(cluster) > elections_before
        result["brokers_fenced"] = fencings(cluster) - fencings_before
        # Each node logs a stall of its event loop of 250 ms or more (see broker/runtime/loop_watch.py).
        result["loop_stalls"] = {
            node: {
                "count": len(stalls) - len(stalls_before[node]),
                "longest_ms": max((ms for ms, _ in stalls[len(stalls_before[node]) :]), default=0),
                "in_full_gc_ms": sum(gc_ms for _, gc_ms in stalls[len(stalls_before[node]) :]),
            }
            for node, stalls in loop_stalls(cluster).items()
        }
        print(json.dumps(result), file=sys.stderr, flush=True)  # so far, should a later stage hang

        time.sleep(args.settle_seconds)
        idle_spies = (
            start_py_spy(cluster, args.py_spy / "idle", int(args.idle_seconds)) if args.py_spy else []
        )
        result["idle_cpu"] = idle_cpu(cluster, args.idle_seconds)
        for spy in idle_spies:
            spy.wait(60)
        print(json.dumps(result), file=sys.stderr, flush=True)
        if args.records:
            admin.create_topics([NewTopic("narrow", 1, 3)])["narrow"].result(30)
            result["spread"] = produce_consume(cluster, BIG_TOPIC, args.partitions, args.records)
            result["one_partition"] = produce_consume(cluster, "narrow", 1, args.records)
            print(json.dumps(result), file=sys.stderr, flush=True)
            try:
                admin.delete_topics(["narrow"])["narrow"].result(60)
            except KafkaException as failure:
                # Under load the delete may time out: the numbers above must not be lost with it.
                result["narrow_delete_error"] = str(failure)

        started = time.monotonic()
        admin.delete_topics([BIG_TOPIC], operation_timeout=600)[BIG_TOPIC].result(600)
        result["delete_s"] = round(time.monotonic() - started, 2)
        while not topic_fully_replicated(cluster, PROBE_TOPIC, PROBE_PARTITIONS):
            if time.monotonic() - started > 120:
                result["healed_s"] = None
                break
            time.sleep(0.5)
        else:
            result["healed_s"] = round(time.monotonic() - started, 2)
        # Healed means quiet too: no leader still asking a former controller (error 41) or
        # proposing ISR changes for partitions of the deleted topic.
        refusals_before = alter_partition_refusals(cluster)
        time.sleep(HEALED_QUIET_S)
        result["alter_refusals_after_heal"] = alter_partition_refusals(cluster) - refusals_before
        result["load_after"] = os.getloadavg()
    finally:
        cluster.stop()
        if args.keep:
            result["data_dir"] = str(base)
        else:
            shutil.rmtree(base, ignore_errors=True)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
