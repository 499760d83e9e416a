"""Windowed rates, throttle times and Kafka's quota precedence (no sockets)."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker.metadata.security_records import AlterQuotaRecord
from broker.metadata.security_registry import SecurityStore
from broker.quotas.manager import PRODUCER_BYTE_RATE, QuotaManager, entity_key
from broker.quotas.rate import WindowedRate


def test_a_rate_counts_at_least_num_windows_minus_one_windows() -> None:
    rate = WindowedRate(num_windows=11, window_s=1.0, now=0.0)
    rate.record(1000, 0.5)
    # Half a second in, the rate is spread over ten windows, as Kafka does.
    assert rate.rate(0.5) == pytest.approx(1000 / 10.5)


def test_a_steady_rate_is_measured_and_old_samples_expire() -> None:
    rate = WindowedRate(num_windows=3, window_s=1.0, now=0.0)
    for second in range(10):
        rate.record(500, second + 0.01)
    assert rate.rate(10.0) == pytest.approx(500 * 3 / 2.99, rel=0.05)
    assert rate.rate(100.0) == 0


def test_throttle_time_brings_the_rate_back_to_the_quota() -> None:
    rate = WindowedRate(num_windows=11, window_s=1.0, now=0.0)
    rate.record(20_000, 0.0)  # 20 kB against a 1 kB/s quota over a 10 s span: 2 kB/s
    assert rate.throttle_s(1000, 0.0, max_s=100.0) == pytest.approx(10.0)
    assert rate.throttle_s(1000, 0.0, max_s=1.0) == 1.0  # capped at one window
    assert rate.throttle_s(5000, 0.0, max_s=100.0) == 0.0


@pytest.fixture
def security(tmp_path: Path) -> SecurityStore:
    store = SecurityStore(tmp_path)
    store.load()
    return store


def set_quota(security: SecurityStore, entity: dict[str, str | None], value: float) -> None:
    security.apply_records([AlterQuotaRecord(entity_key(entity), {PRODUCER_BYTE_RATE: value})])


@pytest.mark.parametrize(
    ("entities", "expected"),
    [
        ([({"user": "u", "client-id": "c"}, 1)], (1, ("u", "c"))),
        ([({"user": "u", "client-id": None}, 2), ({"user": "u"}, 3)], (2, ("u", "c"))),
        ([({"user": "u"}, 3), ({"user": None, "client-id": "c"}, 4)], (3, ("u", ""))),
        ([({"user": None, "client-id": "c"}, 4), ({"user": None}, 6)], (4, ("u", "c"))),
        ([({"user": None, "client-id": None}, 5), ({"user": None}, 6)], (5, ("u", "c"))),
        ([({"user": None}, 6), ({"client-id": "c"}, 7)], (6, ("u", ""))),
        ([({"client-id": "c"}, 7), ({"client-id": None}, 8)], (7, ("", "c"))),
        ([({"client-id": None}, 8)], (8, ("", "c"))),
        ([({"user": "other"}, 9)], None),
    ],
)
def test_quotas_follow_kafkas_precedence(
    security: SecurityStore, entities: list, expected: tuple | None
) -> None:
    manager = QuotaManager(security, num_windows=11, window_s=1.0)
    for entity, value in entities:
        set_quota(security, entity, value)
    resolved = manager.resolve(PRODUCER_BYTE_RATE, "u", "c")
    if expected is None:
        assert resolved is None
    else:
        assert resolved == (expected[0], (PRODUCER_BYTE_RATE, *expected[1]))


def test_clients_under_a_user_quota_share_one_measurement(security: SecurityStore) -> None:
    manager = QuotaManager(security, num_windows=2, window_s=1.0)
    set_quota(security, {"user": "u"}, 1000)
    assert manager.record(PRODUCER_BYTE_RATE, "u", "one", 900, 0.0) == 0.0
    # The second client of the same user pushes the shared rate over the quota.
    assert manager.record(PRODUCER_BYTE_RATE, "u", "two", 900, 0.0) > 0
    assert manager.record(PRODUCER_BYTE_RATE, "v", "two", 900_000, 0.0) == 0.0  # no quota for v


def test_a_changed_quota_applies_to_the_next_request(security: SecurityStore) -> None:
    manager = QuotaManager(security, num_windows=2, window_s=1.0)
    set_quota(security, {"user": "u"}, 100)
    assert manager.record(PRODUCER_BYTE_RATE, "u", "c", 1000, 0.0) > 0
    set_quota(security, {"user": "u"}, 1_000_000)
    assert manager.throttle(PRODUCER_BYTE_RATE, "u", "c", 0.0) == 0.0


def test_an_ip_connection_rate_refuses_connections_over_it(security: SecurityStore) -> None:
    manager = QuotaManager(security, num_windows=2, window_s=1.0)
    security.apply_records([AlterQuotaRecord((("ip", None),), {"connection_creation_rate": 2})])
    accepted = [manager.accept_connection("10.0.0.1", 0.1 * i) for i in range(5)]
    assert accepted == [True, True, False, False, False]
    assert manager.accept_connection("10.0.0.2", 0.5)


def test_headroom_is_what_may_still_be_used_before_the_quota_is_exceeded() -> None:
    rate = WindowedRate(num_windows=3, window_s=1.0, now=0.0)
    assert rate.headroom(1000, 0.0) == pytest.approx(2000)  # two windows' worth at first
    rate.record(1500, 0.0)
    assert rate.headroom(1000, 0.0) == pytest.approx(500)
    rate.record(1000, 0.0)
    assert rate.headroom(1000, 0.0) < 0
