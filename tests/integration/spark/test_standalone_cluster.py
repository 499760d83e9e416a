"""A catalog job on a real Spark standalone cluster, launched through the API and the Celery worker.

The master and worker come from pyspark's own classes; the worker has neither the repository nor the
control plane's virtualenv, and its executors run a bare CPython: the code artifact (--py-files) and the
dependency archive (--archives) the launcher builds are all they have.
"""

from __future__ import annotations

import collections
import subprocess
from pathlib import Path

import pytest

from controlplane.jobs import launcher
from controlplane.jobs.models import JobRun
from tests.fixtures.servers import wait_until
from tests.integration.spark.conftest import Setup
from tests.integration.spark.spark_servers import StandaloneCluster, executor_python, spark_environment

# Master, worker, executors and two runs on two cores: about a minute idle, several under load.
pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]


@pytest.fixture(scope="session")
def spark_artifacts_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("spark-artifacts")  # the dependency archive is built once per session


@pytest.fixture
def spark_worker_environment(standalone_cluster: StandaloneCluster, spark_artifacts_dir: Path) -> dict:
    return {
        "SPARK_EXECUTOR_PYTHON": executor_python(),
        "SPARK_MASTER_WEB_URL": standalone_cluster.web_url,
        "SPARK_ARTIFACTS_DIR": str(spark_artifacts_dir),
        "SPARK_LOCAL_IP": "127.0.0.1",
    }


def test_the_executors_interpreter_has_none_of_the_code_or_its_dependencies(tmp_path: Path):
    # In the worker's environment: the session's local Spark fixture puts the repository on this process's
    # PYTHONPATH, which a Spark host does not have.
    host = spark_environment(tmp_path)
    for module in ("controlplane", "pyarrow", "confluent_kafka"):
        probe = subprocess.run(
            [executor_python(), "-c", f"import {module}"], capture_output=True, cwd="/", env=host
        )
        assert probe.returncode != 0, f"{executor_python()} imports {module} on its own"


def test_a_catalog_job_runs_on_the_cluster_and_cancel_kills_the_application(
    setup: Setup, standalone_cluster: StandaloneCluster
) -> None:
    records = [(i % 3, None if i % 9 == 0 else b"k%d" % (i % 5), b"v" * (i % 11)) for i in range(3000)]
    topic = setup.topic("standalone", 3, records)
    resources = {"executor_memory": "512m", "driver_memory": "512m", "max_executors": 1}
    run = setup.launch(
        "key_skew",
        {"source": {"topic": topic}, "top": 3, "resources": resources},
        compute_target=standalone_cluster.master_url,
    )
    finished = setup.wait_finished(run["id"], timeout=400)
    assert finished["state"] == "succeeded", finished["reason"]
    keys = collections.Counter(key for _, key, _ in records if key is not None)
    top = sorted(keys.items(), key=lambda item: (-item[1], item[0]))[:3]
    tables = {table["name"]: table["rows"] for table in finished["result"]["tables"]}
    assert tables["top_keys"] == [[k.decode(), n] for k, n in top]
    per_partition = collections.Counter(partition for partition, _, _ in records)
    assert [[row[0], row[1]] for row in tables["partitions"]] == sorted(map(list, per_partition.items()))
    assert finished["progress_fraction"] == 1.0
    # The application ran on the cluster's executors with the resources the run asked for.
    application_id = launcher.driver_info(_run_dir(run))["application_id"]
    application = standalone_cluster.application(application_id)
    assert application is not None
    assert application["list"] == "completedapps"
    assert application["state"] == "FINISHED"
    assert application["memoryperslave"] == 512
    assert application["cores"] <= 1
    executor_logs = list((standalone_cluster.worker_dir / application_id).glob("*/stderr"))
    assert executor_logs, "no executor ran on the worker"
    # The credentials reached the executors inside the tasks, never an argv or a log.
    logs = [*executor_logs, _run_dir(run) / launcher.LOG_FILE]
    assert not any(setup.password in path.read_text(errors="replace") for path in logs)

    # Cancel while the application is running on the cluster: the master kills it.
    slow = setup.launch(
        "key_skew",
        {"source": {"topic": topic}, "resources": resources},
        compute_target=standalone_cluster.master_url,
    )
    wait_until(
        lambda: launcher.driver_info(_run_dir(slow)).get("application_id") is not None,
        300,
        "the driver to start on the cluster",
        interval=0.2,
    )
    application_id = launcher.driver_info(_run_dir(slow))["application_id"]
    wait_until(
        lambda: (standalone_cluster.application(application_id) or {}).get("list") == "activeapps",
        60,
        "the master to list the application",
        interval=0.2,
    )
    response = setup.client.post(f"/api/v1/job-runs/{slow['id']}/cancel/")
    assert response.status_code == 202
    cancelled = setup.wait_finished(slow["id"], timeout=120)
    assert cancelled["state"] == "cancelled"
    wait_until(
        lambda: standalone_cluster.application(application_id)["list"] == "completedapps",
        60,
        "the master to end the application",
        interval=0.5,
    )
    assert standalone_cluster.application(application_id)["state"] == "KILLED"
    assert all(not w.get("coresused") for w in standalone_cluster.state()["workers"])


def _run_dir(run: dict) -> Path:
    from controlplane.jobs.services import run_directory

    return run_directory(JobRun.objects.get(pk=run["id"]))
