"""The sampling interval's bounds and the Prometheus exposition text."""

from types import SimpleNamespace

import pytest

from controlplane.lag.intervals import InvalidLagSetting, sampling_interval_seconds
from controlplane.lag.metrics import render_metrics


def test_the_sampling_interval_defaults_to_15_seconds_and_stays_within_5_to_60() -> None:
    assert sampling_interval_seconds({}) == 15
    assert sampling_interval_seconds({"LAG_SAMPLING_INTERVAL_SECONDS": "5"}) == 5
    for refused in ("4", "61", "soon"):
        with pytest.raises(InvalidLagSetting):
            sampling_interval_seconds({"LAG_SAMPLING_INTERVAL_SECONDS": refused})


def test_it_exposes_lag_per_partition_and_status_as_a_labelled_gauge() -> None:
    row = SimpleNamespace(
        cluster=SimpleNamespace(name="main"),
        group=SimpleNamespace(name='billing "eu"'),
        partitions=[
            {"topic": "orders", "partition": 0, "lag_messages": 12, "lag_seconds": 3.5},
            {"topic": "orders", "partition": 1, "lag_messages": 0, "lag_seconds": None},
        ],
        lag_messages=12,
        lag_seconds=3.5,
        time_to_catch_up_seconds=None,
        member_count=2,
        status="LAGGING",
    )
    text = render_metrics([row])
    labels = 'cluster="main",group="billing \\"eu\\""'
    assert f'kafka_consumergroup_lag_messages{{{labels},topic="orders",partition="0"}} 12' in text
    assert f'kafka_consumergroup_lag_seconds{{{labels},topic="orders",partition="0"}} 3.5' in text
    assert f'kafka_consumergroup_lag_seconds{{{labels},topic="orders",partition="1"}}' not in text
    assert f'kafka_consumergroup_status{{{labels},status="LAGGING"}} 1' in text
    assert f'kafka_consumergroup_status{{{labels},status="OK"}} 0' in text
    assert "# TYPE kafka_consumergroup_members gauge" in text
