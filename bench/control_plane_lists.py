"""Listing topics (with partition counts and sizes) and consumer groups (with lag) through the REST API on a
cluster with 2,000 topics / 10,000 partitions and 500 groups (acceptance 7 of the control-plane issue).

Starts one broker process and a throwaway SQLite control plane in this process, creates the topics with the
Kafka admin API, writes one record to every partition, commits offsets for 500 groups (each on the 5
partitions of one topic), runs one reconciliation pass (which caches the observed state and lag in the
database), gives the topics to a team, and then times the API's list endpoints with Django's test client
(the whole request path: authentication by API key, scoping, filtering, pagination, serialization).

Usage: .venv/bin/python bench/control_plane_lists.py [--topics 2000] [--partitions 5] [--groups 500] [--runs 30]
Prints one JSON line per endpoint: p50/p95/max milliseconds over --runs requests, rows returned.

Measured on the 2-core development machine (SQLite, 30 runs each; 2,000 topics / 10,000 partitions / 500 groups):
topics, 500 per page: p50 77 ms, p95 244 ms, max 271 ms; topics by size, 50 per page: p50 13 ms, max 20 ms;
groups with lag, 500 per page: p50 36 ms, p95 177 ms, max 214 ms; by lag, 50 per page: p50 12 ms, max 204 ms.
One reconciliation pass over that cluster took 7.9 s; creating the topics on the broker took ~8 minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.local_broker import start_broker  # noqa: E402 - after the path


def populate(bootstrap: str, topics: int, partitions: int, groups: int) -> list[str]:
    from confluent_kafka import ConsumerGroupTopicPartitions, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    # Creating a topic gets slower as the broker holds more of them, so small batches and long timeouts.
    admin = AdminClient({"bootstrap.servers": bootstrap, "socket.timeout.ms": 300_000})
    names = [f"bench.topic-{index:05d}" for index in range(topics)]
    for start in range(0, topics, 25):
        batch = [NewTopic(name, partitions, 1) for name in names[start : start + 25]]
        for future in admin.create_topics(batch, request_timeout=300).values():
            future.result(600)
        print(f"created {start + len(batch)} topics", file=sys.stderr, flush=True)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    for name in names:
        for partition in range(partitions):
            producer.produce(name, b"x" * 100, partition=partition)
        producer.poll(0)
    producer.flush(60)
    futures = []
    for index in range(groups):
        offsets = [TopicPartition(names[index], p, 0) for p in range(partitions)]
        request = ConsumerGroupTopicPartitions(f"bench.group-{index:04d}", offsets)
        futures.append(admin.alter_consumer_group_offsets([request], request_timeout=30))
    for result in futures:
        for future in result.values():
            future.result(60)
    return names


def timed(client, url: str, runs: int) -> dict:
    samples, rows = [], 0
    for _ in range(runs):
        started = time.perf_counter()
        response = client.get(url)
        samples.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.content[:500]
        body = response.json()
        rows = len(body["results"])
    samples.sort()
    return {
        "endpoint": url,
        "rows": rows,
        "count": body["count"],
        "p50_ms": round(statistics.median(samples), 1),
        "p95_ms": round(samples[int(len(samples) * 0.95) - 1], 1),
        "max_ms": round(samples[-1], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=2000)
    parser.add_argument("--partitions", type=int, default=5)
    parser.add_argument("--groups", type=int, default=500)
    parser.add_argument("--runs", type=int, default=30)
    options = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="bench-lists-"))
    os.environ["STREAMHUB_DATA_DIR"] = str(workdir)
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir / 'db.sqlite3'}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
    broker, bootstrap = start_broker(workdir, {"group.initial.rebalance.delay.ms": "0"})
    try:
        import django

        django.setup()
        from django.conf import settings
        from django.core.management import call_command
        from django.test import Client

        settings.ALLOWED_HOSTS = ["*"]
        settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_CLASSES": []}
        call_command("migrate", verbosity=0)

        from django.contrib.auth import get_user_model

        from controlplane.accounts import services as accounts
        from controlplane.clusters import services as clusters
        from controlplane.reconcile.reconciler import reconcile_cluster
        from controlplane.tenancy import services as tenancy
        from controlplane.tenancy.access import Actor
        from controlplane.topics.models import Topic

        system = Actor.system()
        started = time.monotonic()
        populate(bootstrap, options.topics, options.partitions, options.groups)
        populated_s = time.monotonic() - started
        organization = tenancy.create_organization(actor=system, name="Bench")
        team = tenancy.create_team(actor=system, organization=organization, name="Bench team")
        tenancy.add_prefix(actor=system, team=team, resource_type="topic", prefix="bench.")
        tenancy.add_prefix(actor=system, team=team, resource_type="group", prefix="bench.")
        user = get_user_model().objects.create_user("dev", "dev@example.com", "a long bench password")
        tenancy.add_member(actor=system, team=team, user=user, role="developer")
        _key, token = accounts.create_api_key(actor=Actor(user=user), name="bench", role="developer")
        cluster = clusters.register_external_cluster(
            actor=system, organization=organization, name="bench", bootstrap_servers=bootstrap
        )
        started = time.monotonic()
        run = reconcile_cluster(cluster)
        reconcile_s = time.monotonic() - started
        assert run.state == "succeeded", run.error
        # Setup shortcut: the topics were made with the admin API, so they are unmanaged; hand them to the
        # team in one update instead of 2,000 adopt calls.
        Topic.objects.filter(cluster=cluster).update(team=team, managed=True)

        client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
        base = f"/api/v1/%s/?cluster={cluster.pk}"
        # The lists carry real observations: one 100-byte record per partition, groups committed at 0.
        (group,) = client.get(base % "consumer-groups" + "&limit=1").json()["results"]
        assert group["total_lag"] == options.partitions, group
        (topic,) = client.get(base % "topics" + "&limit=1").json()["results"]
        assert topic["observed_partitions"] == options.partitions, topic
        assert topic["size_bytes"] > 100 * options.partitions, topic
        print(
            json.dumps(
                {
                    "topics": options.topics,
                    "partitions": options.topics * options.partitions,
                    "groups": options.groups,
                    "populate_s": round(populated_s, 1),
                    "reconcile_pass_s": round(reconcile_s, 1),
                }
            )
        )
        for url in (
            base % "topics" + "&limit=500",
            base % "topics" + "&limit=500&offset=1500",
            base % "topics" + "&limit=50&ordering=-size_bytes",
            base % "consumer-groups" + "&limit=500",
            base % "consumer-groups" + "&limit=50&ordering=-total_lag",
        ):
            timed(client, url, 3)  # warm caches and connections
            print(json.dumps(timed(client, url, options.runs)))
    except BaseException:
        shutil.copy(workdir / "broker.log", Path(tempfile.gettempdir()) / "control_plane_lists.broker.log")
        print(
            f"the broker's log is in {tempfile.gettempdir()}/control_plane_lists.broker.log", file=sys.stderr
        )
        raise
    finally:
        broker.kill()
        broker.wait()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
