"""The launcher's process and file handling, without Spark: commands, secrets on disk, progress, reasons."""

import json
import os
import stat
import subprocess
import sys
import time

from controlplane.jobs import launcher


def test_the_submit_command_carries_no_credentials_and_picks_master_or_remote():
    command = launcher.submit_command(
        job="key_skew",
        parameters={"source": {"topic": "t"}},
        output_dir=launcher.REPO_ROOT,
        compute_target="local[2]",
    )
    assert command[1:3] == ["--master", "local[2]"]
    assert "--job" in command
    assert not any("password" in part or "sasl" in part for part in command)
    remote = launcher.submit_command(
        job="key_skew", parameters={}, output_dir=launcher.REPO_ROOT, compute_target="sc://h:15002"
    )
    assert remote[1:3] == ["--remote", "sc://h:15002"]


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
