"""Provisioning time and memory per node of local clusters on both engines (our broker, Apache Kafka).

Runs the control plane's own provisioning workflow (services.request_cluster, then workflows.run_operation:
what the Celery worker runs) in this process against a throwaway SQLite database and data directory, for a
1-node and a 3-node cluster of each engine, one at a time. After each is running, it produces 2,000 records
of 1 KiB to a topic (RF = the cluster's default) and reads every node's resident memory (VmRSS of its
process), then deletes the cluster through the delete workflow.

Usage: .venv/bin/python bench/engine_provisioning.py [--engines streamhub,apache-kafka] [--sizes 1,3]
Prints one JSON line per cluster: engine, nodes, seconds from request to running, RSS per node (MiB).
Numbers on a loaded machine are upper bounds: the JVMs' start is CPU-bound.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--engines", default="streamhub,apache-kafka")
    parser.add_argument("--sizes", default="1,3")
    options = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="bench-engines-"))
    os.environ["STREAMHUB_DATA_DIR"] = str(workdir)
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir / 'db.sqlite3'}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
    try:
        import django

        django.setup()
        from confluent_kafka import Producer
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        from controlplane.clusters import services, workflows
        from controlplane.clusters.models import Cluster
        from controlplane.core.encryption import decrypt_secret
        from controlplane.tenancy import services as tenancy
        from controlplane.tenancy.access import Actor

        actor = Actor.system()
        organization = tenancy.create_organization(actor=actor, name="Bench")
        for engine in options.engines.split(","):
            for size in (int(each) for each in options.sizes.split(",")):
                name = f"{engine.replace('-', '')}-{size}"
                started = time.monotonic()
                operation = services.request_cluster(
                    actor=actor,
                    organization=organization,
                    spec=services.ClusterSpec(name=name, broker_count=size, engine=engine),
                )
                state = workflows.run_operation(operation.id)
                seconds = time.monotonic() - started
                cluster = Cluster.objects.get(pk=operation.cluster_id)
                if state != "succeeded":
                    operation.refresh_from_db()
                    print(
                        json.dumps({"engine": engine, "nodes": size, "failed": operation.error}), flush=True
                    )
                    continue
                producer = Producer(
                    {
                        "bootstrap.servers": cluster.bootstrap_servers,
                        "security.protocol": "SASL_PLAINTEXT",
                        "sasl.mechanism": "SCRAM-SHA-512",
                        "sasl.username": cluster.admin_username,
                        "sasl.password": decrypt_secret(cluster.admin_password_encrypted),
                    }
                )
                for index in range(2000):
                    producer.produce("bench", value=os.urandom(1024), key=str(index).encode())
                    producer.poll(0)
                producer.flush(60)
                del producer  # closed before its cluster goes away, or it retries the dead brokers forever
                rss = {b.node_id: round(rss_mib(b.pid), 1) for b in cluster.brokers.all() if b.pid}
                print(
                    json.dumps(
                        {
                            "engine": engine,
                            "nodes": size,
                            "provision_seconds": round(seconds, 1),
                            "rss_mib_per_node": rss,
                        }
                    ),
                    flush=True,
                )
                deletion = services.request_cluster_deletion(actor=actor, cluster=cluster, confirm_name=name)
                workflows.run_operation(deletion.id)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
