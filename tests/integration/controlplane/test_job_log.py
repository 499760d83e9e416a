"""A real streaming driver (spark-submit on local[1], as the supervisor starts it) over a real broker: the log the
API shows by default is the job's own lines (started, rows per batch, what the sink wrote), and the driver's
whole log, asked for with source=spark, has Spark's lines at WARN and no librdkafka telemetry lines."""

from __future__ import annotations

import re
import shutil
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from controlplane.clusters.models import Cluster
from controlplane.jobs import launcher, services, streams
from controlplane.jobs.choices import DesiredState, StreamState
from controlplane.jobs.models import StreamingJob
from controlplane.spark.jobs.runtime import split_resources

pytestmark = [pytest.mark.integration, pytest.mark.django_db, pytest.mark.timeout(420)]

# A driver's start took up to minutes at load 15-30 here: wait while its log grows, fail once it stands still.
DRIVER_CAP_SECONDS = 360
DRIVER_STALL_SECONDS = 120
JOB_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ streamhub: ")
SPARK_INFO = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d INFO ")


def _wait_for_line(directory: Path, pattern: str, spark: launcher.SparkProcess) -> None:
    job_log, driver_log = directory / "job.log", directory / "driver.log"
    started = last_change = time.monotonic()
    last_size = -1
    while not (job_log.exists() and re.search(pattern, job_log.read_text())):
        assert spark.process.poll() is None, driver_log.read_text()[-3000:]
        size = driver_log.stat().st_size if driver_log.exists() else 0
        if size != last_size:
            last_size, last_change = size, time.monotonic()
        assert time.monotonic() - last_change < DRIVER_STALL_SECONDS, driver_log.read_text()[-3000:]
        assert time.monotonic() - started < DRIVER_CAP_SECONDS, driver_log.read_text()[-3000:]
        time.sleep(0.5)


def test_the_jobs_own_lines_come_first_and_spark_logs_at_warn(world, broker, settings, tmp_path) -> None:
    settings.DATA_DIR = tmp_path
    source, target = f"payments.log-in-{uuid.uuid4().hex[:6]}", f"payments.log-out-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for future in admin.create_topics([NewTopic(source, 1, 1), NewTopic(target, 1, 1)]).values():
        future.result(timeout=30)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for index in range(20):
        producer.produce(source, key=b"k", value=f"order-{index}".encode())
    assert producer.flush(15) == 0
    cluster = Cluster.objects.create(
        organization=world.organization, name="live", provider="external", status="running",
        bootstrap_servers=broker.bootstrap,
    )  # fmt: skip
    stream = StreamingJob.objects.create(
        team=world.team_a, cluster=cluster, name="uppercase", job="stream_topic_sql", compute_target="local[1]",
        parameters={
            "source": {"topic": source}, "target_topic": target,
            "sql": "SELECT key, upper(CAST(value AS STRING)) AS value FROM source",
        },
        desired_state=DesiredState.RUNNING, state=StreamState.STARTING,
    )  # fmt: skip
    directory = streams.stream_directory(stream)
    parameters, resources = split_resources(stream.parameters)
    compute = services.cluster_settings()
    secrets = Path(tempfile.mkdtemp(prefix="log-test-"))
    # As the supervisor starts a driver (streams.Supervisor._run_driver).
    spark = launcher.start(
        job=stream.job, parameters=parameters, output_dir=directory / "driver", compute_target="local[1]",
        connection_file=launcher.write_connection_file(secrets, services.kafka_config_for(stream)),
        shipment=launcher.prepare_shipment("local[1]", compute), resources=resources, settings=compute,
        extra_arguments=[
            "--checkpoint-dir", str(directory / "checkpoint"), "--stream-id", str(stream.pk),
            "--stream-output-dir", str(directory / "output"),
        ],
    )  # fmt: skip
    try:
        # The sink's line comes inside the batch, the batch's row count once Spark reports its progress.
        _wait_for_line(directory / "driver", r"batch \d+: 20 rows read", spark)
    finally:
        launcher.stop(spark, grace_seconds=5)
        shutil.rmtree(secrets, ignore_errors=True)

    client = world.team_a_developer.client()
    own = client.get(f"/api/v1/streaming-jobs/{stream.pk}/log/").json()["lines"]
    everything = client.get(f"/api/v1/streaming-jobs/{stream.pk}/log/?source=spark&lines=5000").json()[
        "lines"
    ]

    assert own, everything[-50:]
    assert all(JOB_LINE.match(line) for line in own), own
    assert any("stream_topic_sql started on Spark" in line for line in own), own
    assert any(re.search(r"batch \d+: 20 rows read", line) for line in own), own
    assert any(f"20 records into {target}, committed in one transaction" in line for line in own), own
    assert [line for line in everything if SPARK_INFO.match(line)] == []
    assert [line for line in everything if "TELEMETRY" in line or "Telemetry" in line] == []
    assert any(line.startswith("streamhub: ") for line in everything)
    assert client.get(f"/api/v1/streaming-jobs/{stream.pk}/log/?source=all").status_code == 400
    print(f"\njob log: {len(own)} lines; driver log: {len(everything)} lines")
