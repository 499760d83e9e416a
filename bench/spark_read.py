"""Benchmark: read a topic into Spark with the `topics` data source on local[2], against the same records read
from Parquet by the same session, the same queries on both.

    .venv/bin/python bench/spark_read.py [--records 5000000] [--size 100] [--partitions 4] [--repeat 1]

Starts its own broker, produces with the librdkafka load generator (bench/loadgen), warms the session up on a
small read (the topic and Parquet alike) so start-up is not measured, then prints one JSON line. Reads, each `--repeat` times back to back:

- the JVM reader (controlplane/spark/jvm.py; its jar as job runs get it, unless `--conf spark.jars=`) with three
  queries, each also run on Parquet: every column of the source's schema in an aggregate (`all_columns`),
  partition/key/value (`key_value`, what this bench called "Parquet with all columns" before the JVM reader), and
  count by partition (`count`: Spark prunes the JVM reader down to `partition`);
- the Python source (`spark.streamhub.topics.jvmReader=false`): count by partition with the full schema (a Python
  source materializes every column) and with the projected schema `partition INT`;
- ready-made in-memory Arrow batches from a Python source (what Spark alone costs to take them in).

Ratios are per repeat (the read's time over its Parquet query's time in the same repeat), as median/min/max, in
wall time and in CPU seconds (Spark's JVM and its Python workers, plus the broker for the topic reads). The
machine's load average (printed, before and after) moves every wall-time number here: compare the readings of the
same run; CPU seconds move much less with load. With `--repeat 1` each read runs once, as a job would: the JVM has
compiled little of either path yet (a second Parquet read took a third of the first one's time).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
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
    parser.add_argument("--repeat", type=int, default=1, help="measure every read this many times")
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

        from controlplane.spark.jvm import reader_jar
        from controlplane.spark.topic_source import JVM_READER_CONF, register_topic_source
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
        # The JVM reader's jar as the launcher ships it (--jars): `--conf spark.jars=` reads with Python only.
        jar = reader_jar()
        settings = topic_read_confs() | ({"spark.jars": str(jar)} if jar else {})
        settings |= dict(setting.split("=", 1) for setting in arguments.conf)
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

        def use_jvm_reader(on: bool) -> None:
            spark.conf.set(JVM_READER_CONF, "true" if on else "false")

        def all_columns(frame) -> list:
            # Every column of the source's schema, each in an aggregate: nothing can be pruned away.
            return (
                frame.groupBy("partition")
                .agg(
                    F.count("*"),
                    F.sum(F.length("value")),
                    F.sum(F.length("key")),
                    F.sum("offset"),
                    F.max("timestamp"),
                    F.sum("timestampType"),
                    F.count("topic"),
                )
                .collect()
            )

        def key_value_columns(frame) -> list:
            # The query this bench always ran on Parquet "with all columns": partition, key and value.
            return (
                frame.groupBy("partition")
                .agg(F.count("*"), F.sum(F.length("value")), F.sum(F.length("key")))
                .collect()
            )

        jvm_available = bool(settings.get("spark.jars"))
        startup_seconds, _ = timed(lambda: count_by_partition(topic_frame("bench-warmup")))
        for jvm in (True, False) if jvm_available else (False,):
            use_jvm_reader(jvm)
            all_columns(topic_frame("bench-warmup"))
            timed(lambda: count_by_partition(topic_frame("bench-warmup", PROJECTED)))
        parquet_path = str(work / "records.parquet")
        use_jvm_reader(jvm_available)
        topic_frame("bench-spark").write.parquet(parquet_path)
        # Parquet's reads warmed up as the topic reads were: the same queries on the small topic's records.
        warmup_parquet = str(work / "warmup.parquet")
        topic_frame("bench-warmup").write.parquet(warmup_parquet)
        for query in (all_columns, key_value_columns, count_by_partition):
            query(spark.read.parquet(warmup_parquet))

        # name -> [(wall seconds, CPU seconds, CPU split)] over the repeats; the reads of one repeat run
        # back to back so that they see the same load.
        runs: dict[str, list[tuple[float, float, dict]]] = {}

        def measure(name: str, action, check=None) -> None:
            seconds, cpu, outcome = meter.timed(action)
            if check is not None:
                assert check(outcome), (name, outcome)
            runs.setdefault(name, []).append((seconds, cpu, meter.split))

        def counted(rows: list) -> bool:
            return sum(row[1] for row in rows) == arguments.records

        def count_is_all(count: int) -> bool:
            return count == arguments.records

        for _ in range(arguments.repeat):
            measure("parquet_all_columns", lambda: all_columns(spark.read.parquet(parquet_path)), counted)
            measure("parquet_key_value", lambda: key_value_columns(spark.read.parquet(parquet_path)), counted)
            measure(
                "parquet_count", lambda: count_by_partition(spark.read.parquet(parquet_path)), count_is_all
            )
            if jvm_available:
                use_jvm_reader(True)
                measure("jvm_all_columns", lambda: all_columns(topic_frame("bench-spark")), counted)
                measure("jvm_key_value", lambda: key_value_columns(topic_frame("bench-spark")), counted)
                # Column pruning: counting by partition reads no record's contents.
                measure("jvm_count", lambda: count_by_partition(topic_frame("bench-spark")), count_is_all)
            use_jvm_reader(False)
            measure("python_full", lambda: count_by_partition(topic_frame("bench-spark")), count_is_all)
            measure(
                "python_projected",
                lambda: count_by_partition(topic_frame("bench-spark", PROJECTED)),
                count_is_all,
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

        measure("spark_ingest_only", in_memory, count_is_all)
        spark.stop()

        def stats(values: list[float]) -> dict[str, float]:
            return {
                "median": round(statistics.median(values), 2),
                "min": round(min(values), 2),
                "max": round(max(values), 2),
            }

        def ratios(name: str, base: str) -> dict:
            """Per repeat, the read's time over the base read's of the same repeat; wall and CPU."""
            if name not in runs:
                return {}
            pairs = list(zip(runs[name], runs[base], strict=True))
            return {
                "wall": stats([a[0] / b[0] for a, b in pairs]),
                "cpu": stats([a[1] / b[1] for a, b in pairs]),
            }

        print(
            json.dumps(
                {
                    "load_average_before": load_before,
                    "load_average_after": [round(x, 2) for x in os.getloadavg()],
                    "records": arguments.records,
                    "record_bytes": arguments.size,
                    "partitions": arguments.partitions,
                    "repeats": arguments.repeat,
                    "produce_msg_per_s": round(produced["msg_per_s"]),
                    "jvm_reader": bool(jvm_available),
                    # Which Python reader this machine ran: the raw path needs a C compiler (raw_reading.py).
                    "python_reader_path": "raw fetch + native decoder"
                    if native_decoder()
                    else "confluent-kafka",
                    "python_reader_alone_one_core_records_per_s": round(arguments.records / reader_seconds),
                    "python_reader_alone_cpu_us_per_record": round(
                        reader_cpu_seconds / arguments.records * 1e6, 2
                    ),
                    "warmup_seconds": round(startup_seconds, 2),
                    "seconds": {name: stats([r[0] for r in values]) for name, values in runs.items()},
                    "cpu_seconds": {name: stats([r[1] for r in values]) for name, values in runs.items()},
                    # The headline: the same query over every column, topic (JVM reader) vs Parquet.
                    "jvm_all_columns_vs_parquet_all_columns": ratios(
                        "jvm_all_columns", "parquet_all_columns"
                    ),
                    "jvm_key_value_vs_parquet_key_value": ratios("jvm_key_value", "parquet_key_value"),
                    "jvm_count_vs_parquet_count": ratios("jvm_count", "parquet_count"),
                    # The Python source as this bench measured it before: count by partition over the full
                    # schema (a Python source materializes every column) vs Parquet's partition/key/value query.
                    "python_full_vs_parquet_key_value": ratios("python_full", "parquet_key_value"),
                    "python_projected_vs_parquet_count": ratios("python_projected", "parquet_count"),
                    "spark_ingest_only_vs_parquet_key_value": ratios("spark_ingest_only", "parquet_key_value")
                    if arguments.repeat == 1
                    else {},
                    # Where the CPU of the last repeat's reads went: JVM, Python workers, broker.
                    "cpu_split": {name: values[-1][2] for name, values in runs.items()},
                }
            )
        )
    finally:
        broker.terminate()
        broker.wait(30)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
