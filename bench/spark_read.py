"""Benchmark: read a topic into Spark with the `topics` data source and count by partition on local[2],
against the same records read from Parquet by the same session.

    .venv/bin/python bench/spark_read.py [--records 5000000] [--size 100] [--partitions 4]

Starts its own broker, produces with the librdkafka load generator (bench/loadgen), warms the session up
on a small read so start-up is not measured, then prints one JSON line, side by side: the topic read with the
full schema and with the projected schema `partition INT` (what counting by partition needs), ready-made
in-memory Arrow batches of both shapes (what Spark alone costs to take them in), Parquet counted by partition
and Parquet with all columns read, and the ratios, in wall time and in CPU seconds (Spark's JVM and Python
workers, plus the broker for the topic reads). The machine's load average (printed, before and after) moves
every wall-time number here: compare the readings of the same run; CPU seconds move much less with load. Each
read runs once, as a job would: the JVM has compiled little of either path yet (read twice in one session here,
a second Parquet read took a third of the first one's time, a second topic read about three quarters).
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

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from bench.broker_throughput.__main__ import (  # noqa: E402 - the repository root is put on the path first
    build_native_loadgen,
    cpu_seconds,
    free_port,
    start_broker,
    wait_until_serving,
)

# What counting by partition needs from the topic: the projected schema of the topics source.
PROJECTED = "partition INT"


def produce(loadgen: str, bootstrap: str, topic: str, records: int, size: int, partitions: int) -> dict:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)
    command = [
        loadgen,
        "produce",
        "-b",
        bootstrap,
        "-t",
        topic,
        "-n",
        str(records),
        "-s",
        str(size),
        "-l",
        "5",
    ]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


class InMemoryBatches:
    """A data source yielding ready-made Arrow batches of the topic source's shape, built once per partition:
    what Spark itself costs to take in Python Arrow batches and count them, with no reading at all."""

    @staticmethod
    def register(spark) -> None:
        import numpy as np
        import pyarrow as pa
        from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

        from controlplane.spark.reading import SCHEMA_DDL, TIMESTAMP_TYPE, arrow_schema

        class Reader(DataSourceReader):
            def __init__(self, options: dict, columns: list[str]) -> None:
                self.records, self.size = int(options["records"]), int(options["size"])
                self.partitions_, self.batch = int(options["partitions"]), int(options["batch"])
                self.columns = columns

            def partitions(self) -> list:
                return [InputPartition(i) for i in range(self.partitions_)]

            def read(self, partition: InputPartition):
                n = self.batch
                batch = pa.RecordBatch.from_arrays(
                    [
                        pa.array([None] * n, pa.binary()),
                        pa.array([b"x" * self.size] * n, pa.binary()),
                        pa.repeat(pa.scalar("bench-spark"), n),
                        pa.repeat(pa.scalar(partition.value, pa.int32()), n),
                        pa.array(np.arange(n, dtype=np.int64)),
                        pa.array(np.arange(n, dtype=np.int64)).cast(TIMESTAMP_TYPE),
                        pa.array(np.zeros(n, np.int32)),
                    ],
                    schema=arrow_schema(False),
                ).select(self.columns)
                share = self.records // self.partitions_
                for start in range(0, share, n):
                    yield batch.slice(0, min(n, share - start))

        class Source(DataSource):
            @classmethod
            def name(cls) -> str:
                return "in_memory_batches"

            def schema(self) -> str:
                return SCHEMA_DDL

            def reader(self, schema) -> Reader:
                return Reader(self.options, schema.fieldNames())

        spark.dataSource.register(Source)


def timed(action) -> tuple[float, object]:
    started = time.perf_counter()
    outcome = action()
    return time.perf_counter() - started, outcome


def descendants_cpu_seconds(root: int) -> float:
    """CPU of every process below a process (the Spark JVM's Python workers), from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (FileNotFoundError, ProcessLookupError):
                continue

    def below_root(pid: int) -> bool:
        while pid in parents:
            if pid == root:
                return True
            pid = parents[pid]
        return False

    # A worker that ends is reaped by its parent, whose children's CPU then counts it: a process's own and its
    # reaped children's CPU together never lose a worker that ended between two readings.
    total = children_cpu_seconds(root)
    for pid in filter(below_root, parents):
        if pid == root:
            continue
        try:
            total += cpu_seconds(pid) + children_cpu_seconds(pid)
        except (FileNotFoundError, ProcessLookupError):
            continue  # ended and reaped between listing and reading: now in its parent's children's CPU
    return total


def children_cpu_seconds(pid: int) -> float:
    """CPU of a process's reaped children (Linux /proc cutime + cstime)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


class CpuMeter:
    """CPU seconds of Spark (JVM + Python workers) and the broker over an action: unlike wall time, not
    stretched by the other processes of a shared machine."""

    def __init__(self, jvm_pid: int, broker_pid: int) -> None:
        self.jvm_pid, self.broker_pid = jvm_pid, broker_pid

    def now(self) -> dict[str, float]:
        return {
            "jvm": cpu_seconds(self.jvm_pid),
            "python_workers": descendants_cpu_seconds(self.jvm_pid),
            "broker": cpu_seconds(self.broker_pid),
        }

    def timed(self, action) -> tuple[float, float, object]:
        """Wall seconds, CPU seconds of all three, and the action's outcome; the split is kept in `split`."""
        cpu_started = self.now()
        seconds, outcome = timed(action)
        ended = self.now()
        self.split = {name: round(ended[name] - cpu_started[name], 2) for name in ended}
        return seconds, sum(ended.values()) - sum(cpu_started.values()), outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=5_000_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--min-partitions", type=int, default=0, help="split ranges into this many tasks")
    parser.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting for A/B runs (e.g. spark.driver.extraJavaOptions= for none of tuning.py's options)",
    )
    arguments = parser.parse_args()

    load_before = [round(x, 2) for x in os.getloadavg()]
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))
    work = Path(tempfile.mkdtemp(prefix="spark-read-bench-"))
    port = free_port()
    broker = start_broker(work / "logs", port, None)
    try:
        wait_until_serving(port)
        bootstrap = f"127.0.0.1:{port}"
        loadgen = build_native_loadgen()
        produced = produce(
            loadgen, bootstrap, "bench-spark", arguments.records, arguments.size, arguments.partitions
        )
        produce(loadgen, bootstrap, "bench-warmup", 10_000, arguments.size, arguments.partitions)

        from pyspark.sql import SparkSession
        from pyspark.sql import functions as F

        from controlplane.spark.topic_source import register_topic_source
        from controlplane.spark.tuning import topic_read_confs

        builder = (
            SparkSession.builder.master("local[2]")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.driver.memory", "2g")
        )
        # The JVM options job runs get from the launcher (one JVM here: driver and executor), then any A/B
        # override. Parquet is read in the same session, so it runs with the same settings.
        settings = topic_read_confs() | dict(setting.split("=", 1) for setting in arguments.conf)
        for key, value in settings.items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        register_topic_source(spark)
        meter = CpuMeter(spark.sparkContext._gateway.proc.pid, broker.pid)

        def topic_frame(topic: str, schema: str | None = None):
            reader = (
                spark.read.format("topics")
                .option("kafka.bootstrap.servers", bootstrap)
                .option("subscribe", topic)
            )
            if arguments.min_partitions:
                reader = reader.option("minPartitions", str(arguments.min_partitions))
            return (reader.schema(schema) if schema else reader).load()

        def count_by_partition(frame) -> int:
            return sum(row["count"] for row in frame.groupBy("partition").count().collect())

        # The reader alone, in this process and without Spark: the ceiling one executor core can reach.
        from controlplane.spark.options import parse_read_options
        from controlplane.spark.planning import plan_batch
        from controlplane.spark.raw_reading import native_decoder
        from controlplane.spark.reading import read_range

        ranges = plan_batch(
            parse_read_options({"kafka.bootstrap.servers": bootstrap, "subscribe": "bench-spark"})
        )
        reader_seconds, _ = timed(
            lambda: sum(b.num_rows for r in ranges for b in read_range(r, {"bootstrap.servers": bootstrap}))
        )
        # CPU of this process (its librdkafka threads included) per record: wall time is noisy on a shared box.
        cpu_started = time.process_time()
        sum(b.num_rows for r in ranges for b in read_range(r, {"bootstrap.servers": bootstrap}))
        reader_cpu_seconds = time.process_time() - cpu_started
        startup_seconds, _ = timed(lambda: count_by_partition(topic_frame("bench-warmup")))
        timed(lambda: count_by_partition(topic_frame("bench-warmup", PROJECTED)))
        topic_seconds, topic_cpu, topic_count = meter.timed(
            lambda: count_by_partition(topic_frame("bench-spark"))
        )
        topic_cpu_split = meter.split
        projected_seconds, projected_cpu, projected_count = meter.timed(
            lambda: count_by_partition(topic_frame("bench-spark", PROJECTED))
        )
        from controlplane.spark.reading import CONSUME_BATCH

        InMemoryBatches.register(spark)

        def in_memory(schema: str | None = None):
            reader = spark.read.format("in_memory_batches").options(
                records=arguments.records,
                size=arguments.size,
                partitions=arguments.partitions,
                batch=CONSUME_BATCH,
            )
            return count_by_partition((reader.schema(schema) if schema else reader).load())

        in_memory_seconds, in_memory_cpu, in_memory_count = meter.timed(in_memory)
        in_memory_projected_seconds, _ = timed(lambda: in_memory(PROJECTED))
        parquet_path = str(work / "records.parquet")
        topic_frame("bench-spark").write.parquet(parquet_path)
        parquet_seconds, parquet_cpu, parquet_count = meter.timed(
            lambda: count_by_partition(spark.read.parquet(parquet_path))
        )
        # Counting by partition lets Parquet skip every other column; reading the values too is the fair match
        # for the topic read, which always fetches whole records.
        parquet_full_seconds, parquet_full_cpu, _ = meter.timed(
            lambda: (
                spark.read.parquet(parquet_path)
                .groupBy("partition")
                .agg(F.count("*"), F.sum(F.length("value")), F.sum(F.length("key")))
                .collect()
            )
        )
        parquet_full_cpu_split = meter.split
        spark.stop()
        assert topic_count == projected_count == parquet_count == arguments.records, (
            topic_count,
            projected_count,
            parquet_count,
        )
        print(
            json.dumps(
                {
                    "load_average_before": load_before,
                    "load_average_after": [round(x, 2) for x in os.getloadavg()],
                    "records": arguments.records,
                    "record_bytes": arguments.size,
                    "partitions": arguments.partitions,
                    "produce_msg_per_s": round(produced["msg_per_s"]),
                    # Which reader this machine ran: the raw path needs a C compiler (raw_reading.py).
                    "reader_path": "raw fetch + native decoder" if native_decoder() else "confluent-kafka",
                    "reader_alone_one_core_records_per_s": round(arguments.records / reader_seconds),
                    "reader_alone_cpu_us_per_record": round(reader_cpu_seconds / arguments.records * 1e6, 2),
                    "warmup_seconds": round(startup_seconds, 2),
                    "topic_seconds": round(topic_seconds, 2),
                    "topic_records_per_s": round(arguments.records / topic_seconds),
                    # The count-by-partition query with the schema it needs: `partition INT`.
                    "topic_projected_seconds": round(projected_seconds, 2),
                    "topic_projected_records_per_s": round(arguments.records / projected_seconds),
                    # The ceiling of any Python data source on this session: batches already in memory.
                    "spark_ingest_only_seconds": round(in_memory_seconds, 2),
                    "spark_ingest_only_records_per_s": round(in_memory_count / in_memory_seconds),
                    "spark_ingest_only_projected_seconds": round(in_memory_projected_seconds, 2),
                    "parquet_count_seconds": round(parquet_seconds, 2),
                    "parquet_count_records_per_s": round(arguments.records / parquet_seconds),
                    "parquet_all_columns_seconds": round(parquet_full_seconds, 2),
                    "topic_vs_parquet_all_columns": round(topic_seconds / parquet_full_seconds, 2),
                    "topic_vs_parquet_count": round(topic_seconds / parquet_seconds, 2),
                    "topic_projected_vs_parquet_count": round(projected_seconds / parquet_seconds, 2),
                    # CPU seconds of Spark (JVM + Python workers) and, for the topic reads, the broker.
                    "cpu_seconds": {
                        "topic": round(topic_cpu, 2),
                        "topic_projected": round(projected_cpu, 2),
                        "spark_ingest_only": round(in_memory_cpu, 2),
                        "parquet_count": round(parquet_cpu, 2),
                        "parquet_all_columns": round(parquet_full_cpu, 2),
                    },
                    # Where the CPU of the two compared reads went.
                    "cpu_split": {"topic": topic_cpu_split, "parquet_all_columns": parquet_full_cpu_split},
                    "topic_vs_parquet_all_columns_cpu": round(topic_cpu / parquet_full_cpu, 2),
                    "topic_projected_vs_parquet_count_cpu": round(projected_cpu / parquet_cpu, 2),
                }
            )
        )
    finally:
        broker.terminate()
        broker.wait(30)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
