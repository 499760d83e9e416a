"""One local[2] Spark session for the whole test session (a cold start costs seconds on two cores), and for
job runs: a real Celery worker on the `spark` queue and a team whose service account reads a SASL + ACL cluster
(our broker; Apache Kafka too for the tests that join the engine matrix)."""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)
from django.contrib.auth import get_user_model
from django.core.cache import cache
from rest_framework.test import APIClient

from controlplane.accounts import services as accounts
from controlplane.clusters.models import Cluster
from controlplane.core.encryption import encrypt_secret
from controlplane.credentials import services as credentials
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from controlplane.tenancy.choices import TeamRole
from tests.fixtures.broker import ADMIN_PASSWORD, ADMIN_USER
from tests.fixtures.engines import STREAMHUB, ManagedCluster
from tests.fixtures.jvm_ecosystem import spark_kafka_jars
from tests.fixtures.servers import point_celery_at, stop_process, wait_until
from tests.integration.clusters.conftest import _database_url_of_this_test
from tests.integration.spark.spark_servers import connect_server, standalone_cluster  # noqa: F401 - fixtures

REPO_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    os.environ["PYSPARK_PYTHON"] = sys.executable
    # Python workers unpickle the data source by module name, so they need the repository on their path.
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))
    from pyspark.sql import SparkSession

    from controlplane.spark.jvm import build_reader_jar
    from controlplane.spark.topic_source import register_topic_source

    # As job runs start their sessions (tuning.topic_read_confs): the JVM reader on the classpath, so batch reads
    # here run on it, and the Python source takes the rest (and every read with spark.streamhub.topics.jvmReader
    # off, which test_jvm_reader.py compares against).
    session = (
        SparkSession.builder.master("local[2]")
        .appName("streamhub-tests")
        # Spark's own Kafka connector too, for test_spark_kafka_connector.py (one session for the whole run).
        .config("spark.jars", ",".join(map(str, [build_reader_jar(), *spark_kafka_jars()])))
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    register_topic_source(session)
    yield session
    session.stop()
    # py4j logs from finalizers after pytest has closed the captured streams.
    logging.getLogger("py4j").setLevel(logging.WARNING)


@pytest.fixture
def topic_name() -> str:
    return f"spark-{uuid.uuid4().hex[:10]}"


def create_topic(bootstrap: str, name: str, partitions: int = 1, **config: str) -> str:
    """Creates a topic that keeps its records for the whole test unless `config` says otherwise: tests give records
    fixed timestamps from the past (2023), and the shared broker's retention pass (every 5 min) would delete them
    under a running query. CI saw it once: a watermark query's first batch found the log already empty."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    config = {"retention.ms": "-1", **config}
    admin.create_topics([NewTopic(name, partitions, 1, config=config)])[name].result(10)
    return name


def produce(
    bootstrap: str, topic: str, records: list[tuple[int, bytes | None, bytes]], **config: object
) -> None:
    """Produce (partition, key, value) records and wait until all are acknowledged."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, **config})
    for partition, key, value in records:
        producer.produce(topic, key=key, value=value, partition=partition)
    assert producer.flush(15) == 0


SYSTEM = Actor.system()


@pytest.fixture
def spark_worker_environment() -> dict[str, str]:
    """Extra environment of the Celery worker: a test module overrides this fixture to point runs at a
    cluster (SPARK_EXECUTOR_PYTHON, SPARK_MASTER_WEB_URL, ...)."""
    return {}


@pytest.fixture
def spark_worker_queues() -> str:
    """The queues the Celery worker consumes: a test module overrides it for streaming jobs' supervisors."""
    return "spark"


@pytest.fixture
def spark_worker(
    transactional_db,
    redis_url: str,
    tmp_path: Path,
    settings,
    spark_worker_environment: dict[str, str],
    spark_worker_queues: str,
) -> Iterator[subprocess.Popen]:
    """A real Celery worker consuming only the `spark` queue, on this test's database and data dir."""
    point_celery_at(redis_url, settings)
    settings.DATA_DIR = tmp_path
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "STREAMHUB_DATA_DIR": str(tmp_path),
        "DATABASE_URL": _database_url_of_this_test(),
        # The worker must decrypt the run's credential that this process encrypted.
        "SECRET_KEY": settings.SECRET_KEY,
        **spark_worker_environment,
    }
    command = [sys.executable, "-m", "celery", "-A", "console", "worker", "-l", "WARNING", "--pool", "solo"]
    command += ["-Q", spark_worker_queues, "-n", f"spark-test-{os.getpid()}@%h"]
    process = subprocess.Popen(command, cwd=REPO_ROOT, env=env)
    yield process
    stop_process(process, timeout=30)


class Setup:
    def __init__(self, managed_cluster: ManagedCluster, suffix: str) -> None:
        cache.clear()
        organization = tenancy.create_organization(actor=SYSTEM, name=f"Acme {suffix}")
        self.team = tenancy.create_team(actor=SYSTEM, organization=organization, name=f"Payments {suffix}")
        user = get_user_model().objects.create_user(
            f"dave-{suffix}", "dave@example.com", "a long test password"
        )
        tenancy.add_member(actor=SYSTEM, team=self.team, user=user, role=TeamRole.DEVELOPER)
        self.actor = Actor(user=user)
        _key, token = accounts.create_api_key(actor=self.actor, name="laptop", role=TeamRole.DEVELOPER)
        self.client = APIClient()
        self.client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        self.cluster = Cluster.objects.create(
            organization=organization,
            name=f"secure-{suffix}",
            provider="external",
            bootstrap_servers=managed_cluster.bootstrap,
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="SCRAM-SHA-512",
            admin_username=ADMIN_USER,
            admin_password_encrypted=encrypt_secret(ADMIN_PASSWORD),
            status="running",
        )
        self.account = accounts.create_service_account(
            actor=self.actor, team=self.team, name=f"reader-{suffix}"
        )
        _credential, self.password = credentials.issue_scram_credential(
            actor=self.actor, service_account=self.account, cluster=self.cluster, mechanism="SCRAM-SHA-512"
        )
        self.topic_prefix = f"jobs-{suffix}"
        self.admin = AdminClient(managed_cluster.client_config())
        principal = f"User:{self.account.name}"
        bindings = [
            AclBinding(
                kind, name, ResourcePatternType.PREFIXED, principal, "*", operation, AclPermissionType.ALLOW
            )
            for kind, name, operation in [
                (ResourceType.TOPIC, self.topic_prefix, AclOperation.READ),
                (ResourceType.TOPIC, self.topic_prefix, AclOperation.DESCRIBE),
                (ResourceType.TOPIC, self.topic_prefix, AclOperation.WRITE),  # topic_copy's target
                (ResourceType.GROUP, "spark-", AclOperation.READ),
                (ResourceType.GROUP, self.topic_prefix, AclOperation.READ),  # backlog_profile's group
            ]
        ]
        for future in self.admin.create_acls(bindings).values():
            future.result(10)
        self.admin_config = managed_cluster.client_config()

    def topic(self, name: str, partitions: int, records: list[tuple]) -> str:
        """A topic under the service account's prefix with (partition, key, value[, timestamp ms]) records."""
        topic = f"{self.topic_prefix}-{name}"
        # Tests give records fixed timestamps from the past: retention must not delete them during the test.
        config = {"retention.ms": "-1"}
        self.admin.create_topics([NewTopic(topic, partitions, 1, config=config)])[topic].result(10)
        producer = Producer({**self.admin_config, "linger.ms": 5})
        for partition, key, value, *timestamp in records:
            producer.produce(
                topic, key=key, value=value, partition=partition, timestamp=timestamp[0] if timestamp else 0
            )
        assert producer.flush(15) == 0
        return topic

    def launch(self, job: str, parameters: dict[str, Any], **extra: Any) -> dict[str, Any]:
        body = {
            "team": self.team.pk,
            "cluster": self.cluster.pk,
            "job": job,
            "parameters": parameters,
            "service_account": self.account.pk,
            "password": self.password,
            "compute_target": "local[2]",
            **extra,
        }
        response = self.client.post("/api/v1/job-runs/", body, format="json")
        assert response.status_code == 201, response.content
        return response.json()

    def get(self, run_id: int) -> dict[str, Any]:
        response = self.client.get(f"/api/v1/job-runs/{run_id}/")
        assert response.status_code == 200
        return response.json()

    def wait_finished(self, run_id: int, timeout: float = 150) -> dict[str, Any]:
        wait_until(
            lambda: self.get(run_id)["state"] in ("succeeded", "failed", "cancelled"),
            timeout,
            f"job run {run_id} to finish",
            interval=0.5,
        )
        return self.get(run_id)


@pytest.fixture(params=[STREAMHUB])
def engine(request: pytest.FixtureRequest) -> str:
    """Job runs read our broker; a test joins the engine matrix with
    `@pytest.mark.parametrize("engine", engine_params(...), indirect=True)` (a Spark run is too slow to
    double every test of this folder)."""
    return request.param


@pytest.fixture
def setup(spark_worker, managed_cluster: ManagedCluster, request) -> Setup:
    # Unique per test (several test names end alike) and stable, so a failure names the same resources.
    return Setup(managed_cluster, hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:10])
