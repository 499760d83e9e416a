from __future__ import annotations

import pytest

from broker.telemetry.subscriptions import (
    ClientIdentity,
    Subscription,
    SubscriptionConfigError,
    check_subscription,
)

CLIENT = ClientIdentity(
    client_instance_id="5f0c8f4e-1111-2222-3333-444455556666",
    client_id="orders-producer",
    client_software_name="confluent-kafka-python",
    client_software_version="2.16.1-rdkafka-2.16.1",
    client_source_address="10.1.2.3",
    client_source_port="50123",
)


@pytest.mark.parametrize(
    ("configs", "invalid_request", "message"),
    [
        ({"colour": "blue"}, True, "Unknown client metrics configuration: colour"),
        ({"interval.ms": "99"}, True, "interval must be between 100 and 3600000"),
        ({"interval.ms": "3600001"}, True, "interval must be between 100 and 3600000"),
        ({"interval.ms": "soon"}, False, "Not a number of type INT"),
        ({"match": "client_colour=blue"}, False, "Illegal client matching pattern: client_colour=blue"),
        ({"match": "client_id"}, False, "Illegal client matching pattern"),
        ({"match": "client_id=a=b"}, False, "Illegal client matching pattern"),
        ({"match": "client_id="}, False, "Illegal client matching pattern"),
        ({"match": "client_id=("}, False, "Illegal client matching pattern"),
    ],
)
def test_refusals_are_kafkas(configs: dict[str, str], invalid_request: bool, message: str) -> None:
    with pytest.raises(SubscriptionConfigError, match=message) as refused:
        check_subscription("s", configs)
    assert refused.value.invalid_request is invalid_request


def test_an_empty_name_is_refused() -> None:
    with pytest.raises(SubscriptionConfigError, match="Subscription name can't be empty") as refused:
        check_subscription("", {"metrics": "*"})
    assert refused.value.invalid_request


def test_every_selector_must_match_the_whole_value() -> None:
    def matches(match: str) -> bool:
        check_subscription("s", {"match": match})
        return Subscription.parse("s", {"match": match}).matches(CLIENT)

    assert matches("")  # no selector: every client
    assert matches("client_id=orders-.*, client_software_name=confluent-kafka-python")
    assert matches("client_source_address=10\\.1\\..*,client_source_port=50123")
    assert matches(f"client_instance_id={CLIENT.client_instance_id}")
    assert not matches("client_id=orders")  # a prefix is not a match (Java's matches())
    assert not matches("client_id=orders-.*,client_software_version=3\\..*")


def test_a_subscription_has_kafkas_defaults() -> None:
    parsed = Subscription.parse("s", {"metrics": "org.apache.kafka.producer., org.apache.kafka.consumer."})
    assert parsed.metrics == ("org.apache.kafka.producer.", "org.apache.kafka.consumer.")
    assert parsed.interval_ms == 300_000
    assert Subscription.parse("s", {}).metrics == ()
