"""Acceptance 1 of the cluster issue: no acknowledged record is lost while brokers die, hang and restart."""

from __future__ import annotations

import json

import pytest
from confluent_kafka import Producer

from tests.fixtures.cluster import LocalCluster
from tests.integration.cluster.fault_checker import (
    ConsumedRecords,
    ProducedRecords,
    check_soak,
    create_topic,
    read_everything,
    run_soak,
    value_of,
    wait_for_isr,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

FAULT_SECONDS = 45.0


def history(acked: list[int]) -> ProducedRecords:
    """A producer that sent seqs 0..9 to two partitions and had `acked` acknowledged at offset seq // 2."""
    produced = ProducedRecords("p1", partitions=2, sent=10)
    for seq in acked:
        produced.acked[seq % 2].append((seq // 2, seq))
    return produced


def partition_log(*seqs: int) -> list[tuple[int, bytes]]:
    return [(offset, value_of("p1", seq, 20)) for offset, seq in enumerate(seqs)]


def test_the_checker_accepts_a_log_holding_every_acknowledged_record_once_in_order() -> None:
    consumed = ConsumedRecords()
    consumed.record(0, 1, value_of("p1", 2, 20), high_watermark=3)
    report = check_soak(
        history(list(range(10))), consumed, {0: partition_log(0, 2, 4, 6, 8), 1: partition_log(1, 3, 5, 7, 9)}
    )
    assert report.ok, report.summary()
    assert (report.acked, report.log_records, report.consumed) == (10, 10, 1)


def test_the_checker_reports_lost_duplicated_reordered_and_gapped_records() -> None:
    log = {0: partition_log(0, 2, 2, 6, 4), 1: partition_log(1, 5, 7, 9)}
    report = check_soak(history([0, 2, 4, 6, 8, 1, 3]), ConsumedRecords(), log)

    assert (0, 4, 8) in report.losses  # acknowledged at offset 4, not in the log
    assert (1, 1, 3) in report.losses
    assert report.duplicates == [(0, 2)]
    assert (0, 4, 4) in report.reorderings  # seq 4 after seq 6
    assert report.gaps == [(1, 3)]  # 3 is missing below 9 and did not fail
    assert report.moved == [(0, 2, 4)]  # 4 was acknowledged at offset 2, which holds 2
    assert not report.ok


def test_the_checker_reports_consumed_records_that_later_vanished() -> None:
    consumed = ConsumedRecords()
    consumed.record(0, 2, value_of("p1", 4, 20), high_watermark=3)
    consumed.record(0, 3, value_of("p1", 6, 20), high_watermark=3)  # served beyond the watermark
    report = check_soak(history([0, 2]), consumed, {0: partition_log(0, 2), 1: partition_log()})

    assert report.consumed_then_vanished == [(0, 2), (0, 3)]
    assert report.read_beyond_watermark == [(0, 3, 3)]
    assert report.watermark_beyond_end == [(0, 3, 2)]
    assert not report.ok


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
    assert report.shutdown_hangs == 0, report.summary()
