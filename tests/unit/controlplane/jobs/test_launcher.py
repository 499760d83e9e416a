"""The launcher's process and file handling, without Spark: commands, secrets on disk, progress, reasons."""

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from controlplane.jobs import launcher
from controlplane.spark.jobs.runtime import SparkResources, split_resources

SHIPMENT = launcher.Shipment(code=Path("/artifacts/streamhub-spark-0.1.0-abc.zip"))


def _command(compute_target: str, **extra) -> list[str]:
    return launcher.submit_command(
        job="key_skew",
        parameters={"source": {"topic": "t"}},
        output_dir=launcher.REPO_ROOT,
        compute_target=compute_target,
        shipment=extra.pop("shipment", SHIPMENT),
        **extra,
    )


def _option(command: list[str], name: str) -> str:
    return command[command.index(name) + 1]


def _confs(command: list[str]) -> dict[str, str]:
    pairs = [command[i + 1].split("=", 1) for i, part in enumerate(command) if part == "--conf"]
    return dict(pairs)


def test_the_submit_command_carries_no_credentials_and_picks_master_or_remote():
    command = _command("local[2]")
    assert command[1:3] == ["--master", "local[2]"]
    assert "--job" in command
    assert not any("password" in part or "sasl" in part for part in command)
    remote = _command("sc://h:15002")
    assert remote[1:3] == ["--remote", "sc://h:15002"]
    # The Connect server gets the code from the session (addArtifacts), not from spark-submit.
    assert _option(remote, "--code-artifact") == str(SHIPMENT.code)
    assert "--py-files" not in remote


def test_runs_start_spark_with_the_topic_read_settings():
    for target in ("local[2]", "spark://m:7077", "k8s://https://api:6443"):
        confs = _confs(_command(target))
        for name in ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"):
            assert "-Darrow.enable_unsafe_memory_access=true" in confs[name].split()
    # spark-submit --remote starts no Spark JVM: the Connect server's operator sets these.
    assert "spark.driver.extraJavaOptions" not in _confs(_command("sc://h:15002"))


def test_a_cluster_run_ships_code_and_dependencies_and_asks_for_its_resources():
    shipment = launcher.Shipment(SHIPMENT.code, Path("/artifacts/streamhub-spark-deps-cp311-x.tar.gz"))
    settings = launcher.ClusterSettings(
        artifacts_dir=Path("/artifacts"), executor_python="/usr/bin/python3.11"
    )
    resources = SparkResources(driver_memory="2g", executor_memory="3g", executor_cores=2, max_executors=4)
    command = _command("spark://m:7077", shipment=shipment, settings=settings, resources=resources)
    assert _option(command, "--deploy-mode") == "client"  # Spark runs no Python app in cluster mode here
    assert _option(command, "--py-files") == str(SHIPMENT.code)
    assert _option(command, "--archives") == f"{shipment.dependencies}#{launcher.DEPENDENCIES_ALIAS}"
    confs = _confs(command)
    assert confs["spark.executorEnv.PYTHONPATH"] == launcher.DEPENDENCIES_ALIAS
    assert confs["spark.pyspark.python"] == "/usr/bin/python3.11"
    assert confs["spark.pyspark.driver.python"] == sys.executable
    assert _option(command, "--driver-memory") == "2g"
    assert _option(command, "--executor-memory") == "3g"
    assert _option(command, "--executor-cores") == "2"
    assert _option(command, "--total-executor-cores") == "8"
    assert "spark.driver.host" not in confs  # executors on other hosts must reach this host's real address
    kubernetes = _command("k8s://https://api:6443", shipment=shipment, settings=settings, resources=resources)
    assert _confs(kubernetes)["spark.executor.instances"] == "4"
    assert "--total-executor-cores" not in kubernetes


def test_resources_come_from_the_parameters_and_are_bounded():
    own, resources = split_resources({"source": {"topic": "t"}, "resources": {"executor_memory": "2g"}})
    assert own == {"source": {"topic": "t"}}
    assert resources == SparkResources(executor_memory="2g")
    assert split_resources({"top": 3}) == ({"top": 3}, SparkResources())
    for bad in ({"executor_memory": "100g"}, {"driver_memory": "lots"}, {"executor_cores": 0}, {"gpus": 1}):
        with pytest.raises(ValueError, match="resources"):
            split_resources({"resources": bad})


def test_the_master_web_ui_defaults_to_the_masters_host():
    assert launcher.master_web_url("spark://m1:7077,m2:7077", None) == "http://m1:8080"
    settings = launcher.ClusterSettings(artifacts_dir=Path("/a"), master_web_url="http://ui:9090/")
    assert launcher.master_web_url("spark://m:7077", settings) == "http://ui:9090"
    assert launcher.master_web_url("local[2]", settings) is None


def test_the_connection_file_is_readable_only_by_its_owner(tmp_path):
    path = launcher.write_connection_file(
        tmp_path / "secrets", {"sasl.password": "s3cret", "bootstrap.servers": "h:1"}
    )
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert json.loads(path.read_text())["sasl.password"] == "s3cret"


def test_progress_counts_the_latest_attempt_of_each_stage():
    stages = [
        {
            "stageId": 0,
            "attemptId": 0,
            "status": "FAILED",
            "numTasks": 4,
            "numCompleteTasks": 1,
            "inputRecords": 5,
        },
        {
            "stageId": 0,
            "attemptId": 1,
            "status": "COMPLETE",
            "numTasks": 4,
            "numCompleteTasks": 4,
            "inputRecords": 40,
        },
        {
            "stageId": 1,
            "attemptId": 0,
            "status": "ACTIVE",
            "numTasks": 2,
            "numCompleteTasks": 1,
            "inputRecords": 0,
        },
    ]
    assert launcher.summarize_stages(stages) == {
        "stages_done": 1,
        "stages_total": 2,
        "tasks_done": 5,
        "tasks_total": 6,
        "records_read": 40,
    }


def test_the_failure_reason_prefers_the_data_sources_own_errors(tmp_path):
    log = tmp_path / "driver.log"
    log.write_text(
        "INFO starting\n"
        "pyspark.errors.exceptions.captured.AnalysisException: [PYTHON_DATA_SOURCE_ERROR] failed\n"
        "controlplane.spark.planning.TopicReadError: unknown topic(s): orders\n"
        "py4j.protocol.Py4JJavaError: An error occurred\n"
    )
    assert launcher.failure_reason(log, 1) == "TopicReadError: unknown topic(s): orders"
    # The JVM reader's, as py4j logs it.
    log.write_text(
        "py4j.protocol.Py4JJavaError: An error occurred while calling o77.cache.\n"
        ": streamhub.spark.TopicReadError: unknown topic(s): orders\n"
        "\tat streamhub.spark.TopicPlanner.plan(TopicPlanner.java:158)\n"
    )
    assert launcher.failure_reason(log, 1) == "TopicReadError: unknown topic(s): orders"
    assert launcher.failure_reason(tmp_path / "missing.log", 137) == "spark-submit exited with status 137"


def test_stopping_a_session_ends_processes_that_left_its_process_group():
    # The child moves itself to its own process group, as PySpark's daemon does with its workers.
    script = "import os, subprocess, sys, time; os.setpgid(0, 0); time.sleep(60)"
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {script!r}]); time.sleep(60)",
        ],
        start_new_session=True,
    )

    def moved_out() -> bool:
        members = launcher.session_processes(parent.pid)
        return len(members) == 2 and any(os.getpgid(pid) != parent.pid for pid in members)

    deadline = time.monotonic() + 10
    while not moved_out() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert moved_out()
    launcher.stop(launcher.SparkProcess(parent, launcher.REPO_ROOT), grace_seconds=5)
    assert launcher.session_processes(parent.pid) == []


def test_a_streaming_jobs_own_arguments_follow_the_entry_points() -> None:
    command = _command(
        "local[1]", extra_arguments=["--checkpoint-dir", "/streams/4/checkpoint", "--stream-id", "4"]
    )
    entry = command.index(str(launcher.SUBMIT_SCRIPT))
    assert command[entry + 1 : entry + 3] == ["--job", "key_skew"]
    assert command[-4:] == ["--checkpoint-dir", "/streams/4/checkpoint", "--stream-id", "4"]


def test_a_restarted_streams_failure_reason_reads_only_its_current_drivers_lines(tmp_path):
    log = tmp_path / "driver.log"
    log.write_text("pyspark.errors.exceptions.captured.AnalysisException: an earlier driver's error\n")
    since = log.stat().st_size
    with open(log, "a") as handle:
        handle.write("INFO the next driver started\n")
    assert launcher.failure_reason(log, -9, since=since) == "spark-submit exited with status -9"
    assert launcher.failure_reason(log, 1).startswith("AnalysisException")


def test_runs_take_the_jvm_reader_with_them_except_to_a_connect_server():
    shipment = launcher.Shipment(SHIPMENT.code, jvm_reader=Path("/artifacts/streamhub-topics-jvm-abc.jar"))
    for target in ("local[2]", "spark://m:7077", "k8s://https://api:6443"):
        assert _option(_command(target, shipment=shipment), "--jars") == str(shipment.jvm_reader)
    assert "--jars" not in _command("local[2]")  # none built (no JDK): the Python source reads
    assert "--jars" not in _command("sc://h:15002", shipment=shipment)


def test_spark_logs_at_warn_unless_the_job_asks_for_more():
    assert _confs(_command("local[2]"))["spark.log.level"] == "WARN"
    _, asked = split_resources({"source": {"topic": "t"}, "resources": {"spark_log_level": "INFO"}})
    assert _confs(_command("spark://m:7077", resources=asked))["spark.log.level"] == "INFO"
    with pytest.raises(ValueError, match="spark_log_level"):
        split_resources({"resources": {"spark_log_level": "CHATTY"}})
