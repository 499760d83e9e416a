"""Kafka Connect 4.2.0 in distributed mode on our 3-node cluster with SASL/SCRAM and ACLs: the worker keeps its
config, offset and status topics (RF 3) on our broker, and the FileStream source and sink (the plugin under the
installation's plugins/) carry a file through a topic and back, line for line. One node is not run in CI: the
worker's start (~30 s) is the cost, and MirrorMaker 2 (test_mirror_maker.py) runs Connect on one node already.
"""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controlplane.apache_kafka import runtime
from tests.fixtures.broker import free_port
from tests.fixtures.jvm_ecosystem import SecureTarget, java_command
from tests.fixtures.servers import wait_until

pytestmark = pytest.mark.integration

LINES = 500


@pytest.fixture(scope="module")
def target(secure_cluster_target: SecureTarget) -> SecureTarget:
    return secure_cluster_target


def rest(port: int, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Accept": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        text = answer.read()
    return json.loads(text) if text else None


def answers(port: int) -> bool:
    try:
        rest(port, "GET", "/")
        return True
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


@pytest.fixture(scope="module")
def connect_worker(
    target: SecureTarget, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[int, Path]]:
    work = tmp_path_factory.mktemp("connect")
    port = free_port()
    suffix = uuid.uuid4().hex[:8]
    replication = str(min(target.nodes, 3))
    client = target.client_properties()
    worker = {
        **client,
        # The worker's own clients and the connectors' producers, consumers and admins log in the same way.
        **{
            f"{prefix}.{key}": value
            for prefix in ("producer", "consumer", "admin")
            for key, value in client.items()
        },
        "group.id": f"connect-{suffix}",
        "config.storage.topic": f"connect-configs-{suffix}",
        "offset.storage.topic": f"connect-offsets-{suffix}",
        "status.storage.topic": f"connect-status-{suffix}",
        "config.storage.replication.factor": replication,
        "offset.storage.replication.factor": replication,
        "status.storage.replication.factor": replication,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "plugin.path": str(runtime.installation().plugins),
        "listeners": f"http://127.0.0.1:{port}",
        "offset.flush.interval.ms": "500",
        # Plugins from their ServiceLoader manifests: scanning every class of the 97 jars took ~40 s here.
        "plugin.discovery": "service_load",
    }
    properties = work / "worker.properties"
    properties.write_text("".join(f"{key}={value}\n" for key, value in worker.items()))
    log = open(work / "worker.log", "wb")  # noqa: SIM115 - the child process owns it
    process = subprocess.Popen(
        java_command(runtime.TOOL_MAIN_CLASSES["connect-distributed"], str(properties), heap="384m"),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    log.close()
    try:
        wait_until(lambda: answers(port) or process.poll() is not None, timeout=90, what="Connect's REST API")
        assert process.poll() is None, (work / "worker.log").read_text(errors="replace")[-5000:]
        yield port, work
    finally:
        process.kill()
        process.wait()
        print(f"\n=== Connect worker log ===\n{(work / 'worker.log').read_text(errors='replace')[-5000:]}")


def test_filestream_source_and_sink_round_trip_through_our_broker(
    target: SecureTarget, connect_worker: tuple[int, Path]
) -> None:
    port, work = connect_worker
    topic = f"connect-lines-{uuid.uuid4().hex[:8]}"
    source_file, sink_file = work / f"{topic}.in", work / f"{topic}.out"
    lines = [f"line {index} {uuid.uuid4().hex}" for index in range(LINES)]
    source_file.write_text("".join(f"{line}\n" for line in lines))
    plugins = {entry["class"] for entry in rest(port, "GET", "/connector-plugins")}
    assert "org.apache.kafka.connect.file.FileStreamSourceConnector" in plugins

    rest(
        port,
        "POST",
        "/connectors",
        {
            "name": f"{topic}-source",
            "config": {
                "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
                "file": str(source_file),
                "topic": topic,
                "topic.creation.default.replication.factor": str(min(target.nodes, 3)),
                "topic.creation.default.partitions": "1",
            },
        },
    )
    rest(
        port,
        "POST",
        "/connectors",
        {
            "name": f"{topic}-sink",
            "config": {
                "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
                "file": str(sink_file),
                "topics": topic,
            },
        },
    )

    def copied() -> bool:
        return sink_file.exists() and sink_file.read_text().count("\n") >= LINES

    wait_until(copied, timeout=90, what="the sink to write every line", interval=0.5)
    assert sink_file.read_text().splitlines() == lines
    for name in (f"{topic}-source", f"{topic}-sink"):
        status = rest(port, "GET", f"/connectors/{name}/status")
        assert status["connector"]["state"] == "RUNNING"
        assert [task["state"] for task in status["tasks"]] == ["RUNNING"]
    # The worker's offsets and the sink's group offsets are on our broker: the source resumes after its last line.
    with source_file.open("a") as appended:
        appended.write("one more\n")
    wait_until(
        lambda: sink_file.read_text().splitlines() == [*lines, "one more"],
        timeout=30,
        what="the appended line",
        interval=0.5,
    )
