"""Acceptance 1 of the cluster issue: no acknowledged record is lost while brokers die, hang and restart."""

from __future__ import annotations

import json

import pytest
from confluent_kafka import Producer

from tests.fixtures.cluster import LocalCluster
from tests.integration.cluster.fault_checker import create_topic, read_everything, run_soak, wait_for_isr

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

FAULT_SECONDS = 45.0


def test_the_local_cluster_lists_an_added_broker_and_drops_a_killed_one(cluster3: LocalCluster) -> None:
    fourth = cluster3.add_broker(4)
    cluster3.wait_ready()
    assert cluster3.metadata_brokers(fourth) == {1, 2, 3, 4}

    cluster3.node(2).kill9()
    cluster3.wait_ready()  # fenced after broker.session.timeout.ms: the others stop listing it
    assert cluster3.metadata_brokers(cluster3.node(1)) == {1, 3, 4}


def test_a_full_cluster_restart_keeps_every_acknowledged_record(cluster3: LocalCluster) -> None:
    create_topic(cluster3, "durable", 3)
    producer = Producer(cluster3.client_config(acks="all"))
    for number in range(300):
        producer.produce("durable", f"record {number}".encode(), partition=number % 3)
    assert producer.flush(30) == 0

    cluster3.stop()
    cluster3.start()
    cluster3.wait_ready()
    assert wait_for_isr(cluster3, "durable", 30)

    records = read_everything(cluster3, "durable", 3, timeout_s=30)
    assert {partition: len(values) for partition, values in records.items()} == {0: 100, 1: 100, 2: 100}


def test_every_acknowledged_record_survives_kills_pauses_and_restarts(cluster3: LocalCluster) -> None:
    report = run_soak(cluster3, FAULT_SECONDS, seed=11, log=print)
    print(json.dumps(report.summary(), indent=2))

    assert sum(report.faults.values()) >= 5, report.summary()
    assert report.acked > 1000, report.summary()
    assert not report.failed_deliveries, report.summary()
    assert report.ok, report.summary()
    assert report.consumed > 0, report.summary()
