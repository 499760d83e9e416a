"""Reading topic names out of consumer-protocol subscriptions (for OffsetDelete and expiry)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from broker.groups.group import parse_consumer_subscription_topics

from .helpers import subscription


def test_it_reads_the_topics_of_a_consumer_subscription() -> None:
    assert parse_consumer_subscription_topics(subscription("a", "b")) == {"a", "b"}
    assert parse_consumer_subscription_topics(subscription()) == set()


def test_it_gives_up_on_bytes_that_are_not_a_subscription() -> None:
    assert parse_consumer_subscription_topics(b"") is None
    assert parse_consumer_subscription_topics(b"\x00\x00\x00\x00\x00\x02\x00\x05ab") is None  # truncated
    assert (
        parse_consumer_subscription_topics(b"\x00\x00\x00\x00\x00\x01\x00\x02\xff\xfe") is None
    )  # not UTF-8


@given(st.binary(max_size=64))
def test_it_never_raises_on_arbitrary_bytes(data: bytes) -> None:
    result = parse_consumer_subscription_topics(data)
    assert result is None or all(isinstance(topic, str) for topic in result)
